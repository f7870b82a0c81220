"""Table 3's causal intervention: the generator's own log-likelihood of its
response without its highest- and its lowest-share piece (summarised by
:func:`conflictlab.contextconflict.balance.summarize_causal`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.prompts import build_messages, encode_messages
from conflictlab.lm.likelihood import loglikelihoods

CAUSAL_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("high_piece", pa.int32(), nullable=False),  # 1-based
        pa.field("low_piece", pa.int32(), nullable=False),
        pa.field("ll_full", pa.float64(), nullable=False),
        pa.field("ll_without_high", pa.float64(), nullable=False),
        pa.field("ll_without_low", pa.float64(), nullable=False),
        pa.field("delta_high", pa.float64(), nullable=False),
        pa.field("delta_low", pa.float64(), nullable=False),
    ]
)


def causal_intervention(attr: pa.Table, samples: pa.Table, responses: pa.Table, lm, *, model_name: str) -> pa.Table:
    """Table 3 rows: drop the highest- and the lowest-share piece and
    recompute the *generating* model's own length-normalised log-likelihood
    of its response under its generation prompt (same template, the remaining
    evidence renumbered). Δ_high = ℓ_full − ℓ_high, Δ_low = ℓ_full − ℓ_low.
    Ties in shares go to the earliest piece. Samples with undefined shares
    are left out (they are counted in the Balance table). ``lm``: the
    generator, a :class:`conflictlab.lm.LoadedModel`."""

    by_id = {r["sample_id"]: r for r in samples.to_pylist()}
    replies = {r["sample_id"]: r for r in responses.to_pylist()}
    rows = []
    for a in attr.to_pylist():
        if a["undefined"]:
            continue
        sample, reply = by_id[a["sample_id"]], replies[a["sample_id"]]
        shares = np.array(a["shares"])
        high, low = int(np.argmax(shares)), int(np.argmin(shares))
        evidence = sample["evidence"]
        prompts = [
            encode_messages(lm.tokenizer, build_messages(reply["template"], sample["question"], pieces))[1]
            for pieces in (evidence, evidence[:high] + evidence[high + 1 :], evidence[:low] + evidence[low + 1 :])
        ]
        response = reply["response_token_ids"]
        full, without_high, without_low = (float(v.mean()) for v in loglikelihoods(lm, prompts, [response] * 3))
        rows.append(
            {
                "sample_id": a["sample_id"],
                "model": model_name,
                "scorer": a["scorer"],
                "conflict_type": a["conflict_type"],
                "high_piece": high + 1,
                "low_piece": low + 1,
                "ll_full": full,
                "ll_without_high": without_high,
                "ll_without_low": without_low,
                "delta_high": full - without_high,
                "delta_low": full - without_low,
            }
        )
    return pa.Table.from_pylist(rows, schema=CAUSAL_SCHEMA)



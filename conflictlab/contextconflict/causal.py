"""Table 3's causal intervention: the generator's own log-likelihood of its
response without its highest- and its lowest-φ piece (summarised by
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


def extreme_pieces(phi) -> tuple[int, int]:
    """0-based indices of the pieces with the highest and the lowest Shapley
    value φ (shape (n,)); ties go to the earliest piece.

    φ, not the clipped shares: every piece with φ ≤ 0 has share 0, so the
    lowest share would name the first of them rather than the piece that
    hurts the response most.
    """
    phi = np.asarray(phi, dtype=float)
    return int(np.argmax(phi)), int(np.argmin(phi))


def causal_intervention(attr: pa.Table, samples: pa.Table, responses: pa.Table, lm, *, model_name: str) -> pa.Table:
    """Table 3 rows: drop the piece with the highest and the one with the
    lowest φ (:func:`extreme_pieces`) and recompute the *generating* model's
    own length-normalised log-likelihood of its response under its generation
    prompt (same template, the remaining evidence renumbered).
    Δ_high = ℓ_full − ℓ_high, Δ_low = ℓ_full − ℓ_low. Samples with undefined
    shares are left out (they are counted in the Balance table). ``lm``: the
    generator, a :class:`conflictlab.lm.LoadedModel`."""

    by_id = {r["sample_id"]: r for r in samples.to_pylist()}
    replies = {r["sample_id"]: r for r in responses.to_pylist()}
    rows = []
    for a in attr.to_pylist():
        if a["undefined"]:
            continue
        sample, reply = by_id[a["sample_id"]], replies[a["sample_id"]]
        high, low = extreme_pieces(a["phi"])
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



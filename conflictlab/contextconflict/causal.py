"""Table 3's causal intervention: the generator's own log-likelihood of its
response without its highest- and its lowest-φ piece (summarised by
:func:`conflictlab.contextconflict.balance.summarize_causal`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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

    defined = attr.filter(pc.invert(attr.column("undefined")))
    sample = _rows_of(samples, defined.column("sample_id"), ["question", "evidence"])
    reply = _rows_of(responses, defined.column("sample_id"), ["template", "response_token_ids"])
    pieces = np.empty((defined.num_rows, 2), dtype=np.int32)  # (high, low), 0-based
    ll = np.empty((defined.num_rows, 3))  # full, without high, without low
    columns = [defined.column("phi"), *sample.columns, *reply.columns]
    # one pass per sample: its three prompts are tokenised and scored by the model
    for i, (phi, question, evidence, template, response) in enumerate(zip(*(c.to_pylist() for c in columns))):
        high, low = pieces[i] = extreme_pieces(phi)
        prompts = [
            encode_messages(lm.tokenizer, build_messages(template, question, kept))[1]
            for kept in (evidence, evidence[:high] + evidence[high + 1 :], evidence[:low] + evidence[low + 1 :])
        ]
        ll[i] = [float(v.mean()) for v in loglikelihoods(lm, prompts, [response] * 3)]
    return pa.table(
        {
            "sample_id": defined.column("sample_id"),
            "model": pa.repeat(pa.scalar(model_name), defined.num_rows),
            "scorer": defined.column("scorer"),
            "conflict_type": defined.column("conflict_type"),
            "high_piece": pieces[:, 0] + 1,
            "low_piece": pieces[:, 1] + 1,
            "ll_full": ll[:, 0],
            "ll_without_high": ll[:, 1],
            "ll_without_low": ll[:, 2],
            "delta_high": ll[:, 0] - ll[:, 1],
            "delta_low": ll[:, 0] - ll[:, 2],
        }
    ).cast(CAUSAL_SCHEMA)


def _rows_of(table: pa.Table, sample_ids: pa.ChunkedArray, columns: list[str]) -> pa.Table:
    """``table``'s ``columns`` at the row of each of ``sample_ids`` (the last
    row where an id repeats); KeyError naming the first id it lacks."""
    ids = table.column("sample_id")
    last = pc.subtract(ids.length() - 1, pc.index_in(sample_ids, value_set=ids.combine_chunks()[::-1]))
    if last.null_count:
        raise KeyError(sample_ids.filter(pc.is_null(last))[0].as_py())
    return table.select(columns).take(last)

"""LLM-as-a-Judge Balance (paper Table 7) and its agreement with Shapley (Table 2).

The judge rates each evidence piece's contribution to a response on the
paper's 1–5 scale (:mod:`conflictlab.judges.prompts.evidence_rating`).
Shares are ratings / their sum, and the judge's Balance is the same
normalised Gini (:func:`conflictlab.contextconflict.shapley.balance`) of
those shares; ratings are >= 1, so it is always defined.

Table 2 compares ratings, so Shapley values are mapped to the 1–5 scale:
with shares p_i = max(0, φ_i) / Σ_j max(0, φ_j), the rating is
``1 + round(4 p_i)`` (halves round up). This reproduces the guideline's
two-source examples (all mass on one source: 5 and 1; an even split: 3 and 3)
and gives every source 1 when no piece has positive φ (the guideline's
"relies on the model's own knowledge"). Cohen's κ (unweighted, as the paper
reports) pools every rated piece; the per-sample Spearman ρ between the
judge's ratings and φ is averaged over samples where it is defined (no ties
on either side).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.shapley import balance
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.requests import JudgeRequest, read_choices
from conflictlab.stats import bootstrap_mean_ci

RATING_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # ok | unparseable | not_generated
        pa.field("ratings", pa.list_(pa.int8())),  # per piece, sample order
        pa.field("shares", pa.list_(pa.float64())),
        pa.field("balance", pa.float64()),
    ]
)


def rating_balance(ratings: Sequence[int]) -> tuple[np.ndarray, float]:
    """(shares, Balance) of one sample's 1–5 ratings (shape (n,), n >= 2)."""
    result = balance(np.asarray(ratings, dtype=float))
    return result.shares, result.balance


def shapley_ratings(phi: Sequence[float]) -> list[int]:
    """Shapley values mapped to the 1–5 scale (see the module docstring)."""
    clipped = np.clip(np.asarray(phi, dtype=float), 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        return [1] * clipped.size
    return [int(math.floor(4.0 * p + 0.5)) + 1 for p in clipped / total]


def judge_rating_rows(samples: Sequence[dict], responses: Sequence[dict], ask: Callable[[list[JudgeRequest]], list[str]], *, model: str, judge: str) -> pa.Table:
    """One :data:`RATING_SCHEMA` row per sample; ``ask`` maps requests to replies."""
    by_id = {r["sample_id"]: r for r in responses}
    missing = [s["sample_id"] for s in samples if s["sample_id"] not in by_id]
    if missing:
        raise ValueError(f"responses of {model}: no row for samples {missing[:5]}")
    rated = [s for s in samples if by_id[s["sample_id"]]["status"] == "ok"]
    requests = [rating_request(s["question"], s["evidence"], by_id[s["sample_id"]]["response"] or "") for s in rated]
    ratings = {
        s["sample_id"]: [None if c is None else int(c) for c in read_choices(request, reply)]
        for s, request, reply in zip(rated, requests, ask(requests))
    }
    rows = []
    for sample in samples:
        sid = sample["sample_id"]
        found = ratings.get(sid)
        row = {"sample_id": sid, "model": model, "conflict_type": sample["conflict_type"], "judge": judge}
        if found is None:
            rows.append({**row, "status": "not_generated", "ratings": None, "shares": None, "balance": None})
        elif None in found:
            rows.append({**row, "status": "unparseable", "ratings": None, "shares": None, "balance": None})
        else:
            shares, value = rating_balance(found)
            rows.append({**row, "status": "ok", "ratings": found, "shares": shares.tolist(), "balance": value})
    return pa.Table.from_pylist(rows, schema=RATING_SCHEMA)


def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's (unweighted) κ of two raters' labels over the same items; NaN
    when chance agreement is 1 (both raters give one and the same label)."""
    a, b = list(a), list(b)
    if len(a) != len(b) or not a:
        raise ValueError(f"cohen_kappa needs two equally long, non-empty label lists (got {len(a)} and {len(b)})")
    labels = sorted(set(a) | set(b))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    table /= table.sum()
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    return math.nan if expected == 1.0 else float((observed - expected) / (1.0 - expected))


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _paired(ratings: pa.Table, attributions: pa.Table) -> list[tuple[dict, dict]]:
    """(judge row, attribution row) per sample rated by both, same model."""
    attr = {(r["model"], r["sample_id"]): r for r in attributions.to_pylist()}
    return [
        (row, attr[row["model"], row["sample_id"]])
        for row in ratings.to_pylist()
        if row["status"] == "ok" and (row["model"], row["sample_id"]) in attr
    ]


AGREEMENT_SCHEMA = pa.schema(
    [
        pa.field("comparison", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # a type, or "all"
        pa.field("kappa", pa.float64()),
        pa.field("n_pieces", pa.int64(), nullable=False),
        pa.field("n_samples", pa.int64(), nullable=False),
        pa.field("mean_spearman", pa.float64()),
        pa.field("n_spearman", pa.int64(), nullable=False),  # samples where rho is defined
        pa.field("note", pa.string()),
    ]
)

HUMAN_NOTE = "the paper's human annotations are not released"
HUMAN_COMPARISONS = ("Human 1 vs Human 2", "Shapley vs Human 1", "Shapley vs Human 2")


def agreement_table(ratings: pa.Table, attributions: pa.Table, *, scorer: str) -> pa.Table:
    """Table 2: κ between the judge's ratings and Shapley-derived ratings
    (pooled, then per type) and the mean per-sample Spearman ρ; the human
    rows empty, with the reason."""
    pairs = _paired(ratings, attributions)
    rows = []
    for conflict_type in ["all", *dict.fromkeys(j["conflict_type"] for j, _ in pairs)]:
        members = [(j, a) for j, a in pairs if conflict_type in ("all", j["conflict_type"])]
        judge = [r for j, _ in members for r in j["ratings"]]
        shapley = [r for _, a in members for r in shapley_ratings(a["phi"])]
        rhos = [spearman_rho(j["ratings"], a["phi"]) for j, a in members]
        rhos = [r for r in rhos if not math.isnan(r)]
        rows.append(
            {
                "comparison": f"Shapley ({scorer}) vs LLM judge",
                "conflict_type": conflict_type,
                "kappa": cohen_kappa(judge, shapley) if judge else None,
                "n_pieces": len(judge),
                "n_samples": len(members),
                "mean_spearman": float(np.mean(rhos)) if rhos else None,
                "n_spearman": len(rhos),
                "note": None,
            }
        )
    rows += [
        {"comparison": c, "conflict_type": "all", "kappa": None, "n_pieces": 0, "n_samples": 0, "mean_spearman": None, "n_spearman": 0, "note": HUMAN_NOTE}
        for c in HUMAN_COMPARISONS
    ]
    return pa.Table.from_pylist([{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows], schema=AGREEMENT_SCHEMA)


JUDGE_BALANCE_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("n_judged", pa.int64(), nullable=False),
        pa.field("n_unparseable", pa.int64(), nullable=False),
        pa.field("judge_balance", pa.float64()),  # percent
        pa.field("judge_ci_low", pa.float64()),
        pa.field("judge_ci_high", pa.float64()),
        pa.field("n_shapley", pa.int64(), nullable=False),
        pa.field("shapley_balance", pa.float64()),  # percent, same samples' Shapley Balance
        pa.field("shapley_ci_low", pa.float64()),
        pa.field("shapley_ci_high", pa.float64()),
        pa.field("human", pa.float64()),  # empty: annotations not released
    ]
)


def judge_balance_table(ratings: pa.Table, attributions: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Table 7: mean Balance (%) from the judge's ratings per model and type,
    with the Shapley Balance of the same responses beside it."""
    data = ratings.to_pylist()
    attr = {(r["model"], r["sample_id"]): r for r in attributions.to_pylist()}
    rows = []
    for model, conflict_type in dict.fromkeys((r["model"], r["conflict_type"]) for r in data):
        members = [r for r in data if r["model"] == model and r["conflict_type"] == conflict_type]
        judged = np.array([r["balance"] for r in members if r["status"] == "ok"], dtype=float)
        shapley = [attr.get((model, r["sample_id"])) for r in members]
        shapley = np.array([a["balance"] for a in shapley if a is not None and not a["undefined"]], dtype=float)
        j = [100 * v for v in bootstrap_mean_ci(judged, n_resamples=n_resamples, seed=seed)]
        s = [100 * v for v in bootstrap_mean_ci(shapley, n_resamples=n_resamples, seed=seed)]
        nan_free = lambda v: None if math.isnan(v) else v  # noqa: E731
        rows.append(
            {
                "model": model,
                "conflict_type": conflict_type,
                "n_judged": int(judged.size),
                "n_unparseable": sum(r["status"] == "unparseable" for r in members),
                "judge_balance": nan_free(j[0]),
                "judge_ci_low": nan_free(j[1]),
                "judge_ci_high": nan_free(j[2]),
                "n_shapley": int(shapley.size),
                "shapley_balance": nan_free(s[0]),
                "shapley_ci_low": nan_free(s[1]),
                "shapley_ci_high": nan_free(s[2]),
                "human": None,
            }
        )
    return pa.Table.from_pylist(rows, schema=JUDGE_BALANCE_SCHEMA)


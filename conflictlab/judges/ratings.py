"""LLM-as-a-Judge Balance (paper Table 7) and its agreement with Shapley (Table 2).

The judge rates each evidence piece's contribution to a response on the
paper's 1–5 scale (:mod:`conflictlab.judges.prompts.evidence_rating`; the
guidelines of the paper's Figure 18, Appendix C.2).

**Judge Balance (Table 7).** A rating of 1 is "Minimal Contribution: …
removing it would not affect core content", so a piece's contribution mass
is ``rating − 1`` (0 to 4), shares are those masses over their sum, and the
judge's Balance is the normalised Gini
(:func:`conflictlab.stats.balance`) of the shares: the
Shapley Balance's formula on a mass that, like clipped φ, can be 0. Both
columns then span [0, 1] at every n (one piece rated 5, the others 1: 100%,
as all Shapley mass on one piece), whereas raw ratings as shares never give
a piece zero weight and cap the judge's Balance at 4 / (n + 4) (ratings
5, 1, …, 1): 66.7% at n = 2, 40% at n = 6, so the two were not on one scale.
All ratings 1 ("relies on the model's own knowledge", Example C) leaves no
mass: the Balance is undefined, as the Shapley Balance is when no φ is
positive, and the sample is counted, not scored. The paper does not say how
it turned its raters' ratings into Balance; this is our reading.

**Shapley ratings (Table 2).** Table 2 compares ratings, so Shapley values
are mapped to the 1–5 scale. With shares p_i = max(0, φ_i) / Σ_j max(0, φ_j)
(paper Eq. 2) and r_i = n·p_i, a piece's share relative to an even share,

    rating_i = 1 + round(2 · min(r_i, 2))      (halves round up)

so r = 0 → 1 (no contribution), r = 1 → 3 (an even share: Example B's 3/3 at
every n), r ≥ 2 → 5 (at least twice an even share; at n = 2 all the mass:
Example A's 5/1). At n = 2 this is the earlier ``1 + round(4 p_i)``; unlike
it, an even split over n ≥ 3 pieces stays 3 ("Moderate") instead of
becoming 2 ("Minor") while a judge rates those pieces equally strong. The
guidelines ask for ratings that "reflect relative contribution differences",
which r measures independently of n. Every source is 1 when no φ is
positive (Example C). The paper does not state its mapping.

Agreement is reported as Cohen's κ (unweighted, as the paper's Table 2) and
beside it the linearly and quadratically weighted κ over the ordered scale
1–5, which credit a near miss (4 vs 5) over a far one (1 vs 5); pooled over
rated pieces, per type and per number of pieces n. The per-sample Spearman ρ
between the judge's ratings and φ is averaged over samples where it is
defined (no ties on either side).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab import metrics
from conflictlab.io import group_in_order
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.requests import JudgeRequest, read_choices
from conflictlab.stats import balance

RATING_SCALE = (1, 2, 3, 4, 5)

RATING_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # ok | unparseable | not_generated
        pa.field("ratings", pa.list_(pa.int8())),  # per piece, sample order
        pa.field("shares", pa.list_(pa.float64())),  # null when every rating is 1
        pa.field("balance", pa.float64()),  # null when every rating is 1
    ]
)


def rating_balance(ratings: Sequence[int]) -> tuple[np.ndarray, float]:
    """(shares, Balance) of one sample's 1–5 ratings (shape (n,), n >= 2),
    from the masses ``rating − 1`` (module docstring); NaN shares and
    Balance when every rating is 1."""
    result = balance(np.asarray(ratings, dtype=float) - 1.0)
    return result.shares, result.balance


def shapley_ratings(phi: Sequence[float]) -> list[int]:
    """Shapley values (shape (n,)) mapped to the 1–5 scale:
    ``1 + round(2 · min(n · p_i, 2))``, invariant to n (module docstring)."""
    clipped = np.clip(np.asarray(phi, dtype=float), 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        return [1] * clipped.size
    relative = np.minimum(clipped.size * clipped / total, 2.0)
    # rounded first so that float noise (3 · (0.1 / 0.3) = 0.999…) cannot move a half
    return [int(math.floor(round(2.0 * r, 9) + 0.5)) + 1 for r in relative]


def judge_rating_rows(
    samples: Sequence[dict],
    responses: Sequence[dict],
    ask: Callable[[list[JudgeRequest]], list[str]],
    *,
    model: str,
    judge: str,
) -> pa.Table:
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
            defined = not math.isnan(value)
            rows.append(
                {
                    **row,
                    "status": "ok",
                    "ratings": found,
                    "shares": shares.tolist() if defined else None,
                    "balance": value if defined else None,
                }
            )
    return pa.Table.from_pylist(rows, schema=RATING_SCHEMA)


def cohen_kappa(a: Sequence, b: Sequence, *, weights: str | None = None, labels: Sequence | None = None) -> float:
    """Cohen's κ of two raters' labels over the same items (shape (m,) each).

    ``weights``: None (unweighted), ``"linear"`` or ``"quadratic"``: the
    disagreement weight of labels at positions i, j of ``labels`` is
    |i − j| or (i − j)², and κ_w = 1 − Σ w·observed / Σ w·expected (as
    ``sklearn.metrics.cohen_kappa_score``, tested). ``labels``: the ordered
    categories (default: the sorted labels seen); give the full scale for
    ordinal weights, so that a category nobody used still spaces its
    neighbours. NaN when the expected disagreement is 0 (both raters give
    one and the same label).
    """
    codes_a, codes_b, weight = _kappa_codes(a, b, weights=weights, labels=labels)
    return float(_kappas(codes_a[None, :], codes_b[None, :], weight)[0])


def _kappa_codes(
    a: Sequence, b: Sequence, *, weights: str | None, labels: Sequence | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a`` and ``b`` as label positions (shape (m,) each, int64) and the
    disagreement weights (shape (k, k)) of :func:`cohen_kappa`."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not a.size:
        raise ValueError(f"cohen_kappa needs two equally long, non-empty label lists (got {a.size} and {b.size})")
    seen, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    seen = seen.tolist()
    labels = seen if labels is None else list(labels)
    index = {label: i for i, label in enumerate(labels)}
    unknown = set(seen) - set(index)
    if unknown:
        raise ValueError(f"cohen_kappa: labels {sorted(map(str, unknown))} are not among {labels}")
    # label positions of a's items then b's, mapped once per distinct label
    codes = np.array([index[label] for label in seen], dtype=np.int64)[inverse.reshape(-1)]
    positions = np.arange(len(labels))
    gap = np.abs(positions[:, None] - positions[None, :]).astype(float)
    if weights is None:
        weight = (gap > 0).astype(float)
    elif weights == "linear":
        weight = gap
    elif weights == "quadratic":
        weight = gap**2
    else:
        raise ValueError(f"cohen_kappa: weights must be None, 'linear' or 'quadratic', not {weights!r}")
    return codes[: a.size], codes[a.size :], weight


def _kappas(
    codes_a: np.ndarray, codes_b: np.ndarray, weight: np.ndarray, counts: np.ndarray | None = None
) -> np.ndarray:
    """κ of each row of label positions ``codes_a``, ``codes_b`` (shape (R, m))
    under disagreement ``weight`` (shape (k, k)), each pair counted
    ``counts`` times (shape (R, m); None: once): shape (R,), NaN where the
    expected disagreement is 0."""
    rows, m = codes_a.shape
    size = weight.shape[0]
    cells = (np.arange(rows, dtype=np.int64)[:, None] * size * size + codes_a * size + codes_b).ravel()
    mass = None if counts is None else np.broadcast_to(counts, codes_a.shape).ravel()
    table = np.bincount(cells, weights=mass, minlength=rows * size * size).reshape(rows, size, size)
    table = table / table.sum(axis=(1, 2), keepdims=True)
    expected = table.sum(axis=2)[:, :, None] * table.sum(axis=1)[:, None, :]
    chance = (weight * expected).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance <= 1e-15, np.nan, 1.0 - (weight * table).sum(axis=(1, 2)) / chance)


# Below this many units κ gets no interval (the metric registry's kappa): its percentile bootstrap covers
# 92-93% at n = 30-50 on a skewed binary verdict (tests/test_coverage.py, docs/statistics.md).
MIN_N_KAPPA = metrics.get("kappa").min_n_interval


def cohen_kappa_interval(
    a: Sequence,
    b: Sequence,
    *,
    clusters: Sequence | None = None,
    weights: str | None = None,
    labels: Sequence | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """:func:`cohen_kappa` of ``a`` and ``b`` (shape (m,) each) and its
    percentile-bootstrap interval, resampling units: ``clusters`` (shape
    (m,)) names each pair's unit (an item with several labels), None: each
    pair is its own. ``(kappa, low, high)``: a NaN interval below
    :data:`MIN_N_KAPPA` units, where κ is undefined, or where the resampled
    κ have no spread; resamples whose κ is undefined are left out."""
    from conflictlab.stats import cluster_bootstrap_weights, percentile_interval

    codes_a, codes_b, weight = _kappa_codes(a, b, weights=weights, labels=labels)
    kappa = float(_kappas(codes_a[None, :], codes_b[None, :], weight)[0])
    units = list(range(codes_a.size)) if clusters is None else list(clusters)
    if len(set(units)) < MIN_N_KAPPA or math.isnan(kappa):
        return kappa, math.nan, math.nan
    counts = cluster_bootstrap_weights(units, n_resamples=n_resamples, seed=seed)  # (R, m)
    shape = counts.shape
    low, high = percentile_interval(
        _kappas(np.broadcast_to(codes_a, shape), np.broadcast_to(codes_b, shape), weight, counts), confidence=confidence
    )
    return kappa, low, high


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _attribution_rows(ratings: pa.Table, attributions: pa.Table) -> np.ndarray:
    """Per row of ``ratings``, the row of ``attributions`` with its (model,
    sample_id), the last one where several; -1 where none. Shape (ratings rows,)."""
    keys = ["model", "sample_id"]
    right = attributions.select(keys).append_column(
        "attribution", pa.array(np.arange(attributions.num_rows, dtype=np.int64))
    )
    right = right.group_by(keys, use_threads=False).aggregate([("attribution", "max")])
    left = ratings.select(keys).append_column("rating", pa.array(np.arange(ratings.num_rows, dtype=np.int64)))
    joined = left.join(right, keys=keys, join_type="inner")
    found = np.full(ratings.num_rows, -1, dtype=np.int64)
    found[joined.column("rating").to_numpy()] = joined.column("attribution_max").to_numpy()
    return found


def _paired(ratings: pa.Table, attributions: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(judge rows, attribution rows), row i of each the same sample rated by
    both, same model, in ``ratings``' order."""
    found = _attribution_rows(ratings, attributions)
    chosen = np.flatnonzero(
        pc.and_(pc.equal(ratings.column("status"), "ok"), pa.array(found >= 0)).to_numpy(zero_copy_only=False)
    )
    return ratings.take(chosen), attributions.take(found[chosen])


def _none_for_nan(row: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


AGREEMENT_SCHEMA = pa.schema(
    [
        pa.field("comparison", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # a type, or "all"
        pa.field("n_evidence", pa.string(), nullable=False),  # pieces per sample, or "all"
        pa.field("kappa", pa.float64()),  # Cohen's, unweighted (the paper's)
        pa.field("kappa_linear", pa.float64()),  # weighted over the ordered 1-5 scale
        pa.field("kappa_quadratic", pa.float64()),
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
    """Table 2: κ (unweighted, linear, quadratic) between the judge's ratings
    and Shapley-derived ratings and the mean per-sample Spearman ρ: pooled,
    per type, and per number of pieces n (whose counts the rows give); the
    human rows empty, with the reason."""
    judged, attributed = _paired(ratings, attributions)
    # per-sample estimators, one call per rated sample
    phi = attributed.column("phi").to_pylist()
    shapley = pa.array([shapley_ratings(values) for values in phi], pa.list_(pa.int64()))
    rho = np.array(
        [spearman_rho(j, values) for j, values in zip(judged.column("ratings").to_pylist(), phi)], dtype=float
    )
    types = judged.column("conflict_type").to_numpy(zero_copy_only=False)
    sizes = pc.list_value_length(judged.column("ratings")).to_numpy(zero_copy_only=False)
    everything = np.ones(judged.num_rows, dtype=bool)
    groups = [("all", "all", everything)]
    groups += [(t, "all", types == t) for t in pc.unique(judged.column("conflict_type")).to_pylist()]
    groups += [("all", str(n), sizes == n) for n in sorted(set(sizes.tolist()))]
    rows = []
    for conflict_type, n_evidence, chosen in groups:  # a handful: pooled, per type, per n
        members = np.flatnonzero(chosen)
        pieces = pc.list_flatten(judged.column("ratings").take(members)).to_numpy()
        shapley_pieces = pc.list_flatten(shapley.take(members)).to_numpy()
        rhos = rho[members]
        rhos = rhos[~np.isnan(rhos)]
        kappas = {
            name: cohen_kappa(pieces, shapley_pieces, weights=weights, labels=RATING_SCALE) if pieces.size else None
            for name, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic"))
        }
        rows.append(
            {
                "comparison": f"Shapley ({scorer}) vs LLM judge",
                "conflict_type": conflict_type,
                "n_evidence": n_evidence,
                **kappas,
                "n_pieces": pieces.size,
                "n_samples": members.size,
                "mean_spearman": float(np.mean(rhos)) if rhos.size else None,
                "n_spearman": len(rhos),
                "note": None,
            }
        )
    rows += [
        {
            "comparison": c,
            "conflict_type": "all",
            "n_evidence": "all",
            "kappa": None,
            "kappa_linear": None,
            "kappa_quadratic": None,
            "n_pieces": 0,
            "n_samples": 0,
            "mean_spearman": None,
            "n_spearman": 0,
            "note": HUMAN_NOTE,
        }
        for c in HUMAN_COMPARISONS
    ]
    return pa.Table.from_pylist([_none_for_nan(r) for r in rows], schema=AGREEMENT_SCHEMA)


JUDGE_BALANCE_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),  # samples with both Balances defined: both columns average these
        pa.field("n_evidence", pa.string(), nullable=False),  # those samples by pieces per sample, "n=2: 40; n=3: 12"
        pa.field("judge_balance", pa.float64()),  # percent
        pa.field("judge_ci_low", pa.float64()),
        pa.field("judge_ci_high", pa.float64()),
        pa.field("shapley_balance", pa.float64()),  # percent
        pa.field("shapley_ci_low", pa.float64()),
        pa.field("shapley_ci_high", pa.float64()),
        pa.field("n_samples", pa.int64(), nullable=False),  # every sample of the model and type
        pa.field("n_not_generated", pa.int64(), nullable=False),
        pa.field("n_unparseable", pa.int64(), nullable=False),
        pa.field("n_judge_undefined", pa.int64(), nullable=False),  # every rating 1: no mass
        pa.field("n_shapley_undefined", pa.int64(), nullable=False),  # no positive phi, or no attribution
        pa.field("human", pa.float64()),  # empty: annotations not released
    ]
)


def _evidence_counts(sizes: Sequence[int]) -> str:
    return "; ".join(f"n={size}: {count}" for size, count in sorted(Counter(sizes).items()))


def judge_balance_table(
    ratings: pa.Table, attributions: pa.Table, *, n_resamples: int = 2000, seed: int = 0
) -> pa.Table:
    """Table 7: mean Balance (%) from the judge's ratings per model and type
    and the Shapley Balance beside it, both over the same samples (those
    where both are defined), each with the 95% interval the metric registry gives Balance
    (:func:`conflictlab.metrics.estimate`: the betting interval over [0, 1];
    ``n_resamples``/``seed`` unused); the judge's
    Balance is recomputed from its ratings (:func:`rating_balance`), and the
    samples left out are counted by reason."""
    found = _attribution_rows(ratings, attributions)
    status = ratings.column("status").to_numpy(zero_copy_only=False)
    rated = status == "ok"
    # the judge's Balance, one call per rated sample (NaN where not rated)
    judge = np.full(ratings.num_rows, math.nan)
    rated_rows = np.flatnonzero(rated)
    judge[rated_rows] = [rating_balance(values)[1] for values in ratings.column("ratings").take(rated_rows).to_pylist()]
    has_attribution = found >= 0
    shapley = np.full(ratings.num_rows, math.nan)
    shapley_defined = np.zeros(ratings.num_rows, dtype=bool)
    shapley[has_attribution] = (
        attributions.column("balance").take(found[has_attribution]).to_numpy(zero_copy_only=False)
    )
    shapley_defined[has_attribution] = pc.invert(
        attributions.column("undefined").take(found[has_attribution])
    ).to_numpy(zero_copy_only=False)
    sizes = pc.fill_null(pc.list_value_length(ratings.column("ratings")), 0).to_numpy(zero_copy_only=False)
    keys = ratings.select(["model", "conflict_type"]).append_column(
        "row", pa.array(np.arange(ratings.num_rows, dtype=np.int64))
    )
    groups = group_in_order(keys, ["model", "conflict_type"], [("row", "list")])
    rows = []
    for model, conflict_type, members in zip(
        *(groups.column(name).to_pylist() for name in ("model", "conflict_type", "row_list"))
    ):  # per (model, type)
        members = np.asarray(members, dtype=np.int64)
        defined = members[rated[members] & ~np.isnan(judge[members])]
        both = defined[shapley_defined[defined]]
        judge_values, shapley_values = judge[both], shapley[both]
        j = [100 * v for v in metrics.estimate(metrics.get("balance"), judge_values)]
        s = [100 * v for v in metrics.estimate(metrics.get("balance"), shapley_values)]
        rows.append(
            _none_for_nan(
                {
                    "model": model,
                    "conflict_type": conflict_type,
                    "n": both.size,
                    "n_evidence": _evidence_counts(sizes[both].tolist()),
                    "judge_balance": j[0],
                    "judge_ci_low": j[1],
                    "judge_ci_high": j[2],
                    "shapley_balance": s[0],
                    "shapley_ci_low": s[1],
                    "shapley_ci_high": s[2],
                    "n_samples": members.size,
                    "n_not_generated": int((status[members] == "not_generated").sum()),
                    "n_unparseable": int((status[members] == "unparseable").sum()),
                    "n_judge_undefined": int(rated[members].sum()) - defined.size,
                    "n_shapley_undefined": defined.size - both.size,
                    "human": None,
                }
            )
        )
    return pa.Table.from_pylist(rows, schema=JUDGE_BALANCE_SCHEMA)

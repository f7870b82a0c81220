"""Paired comparison of two ratios of counts over the same items (issue 59, item 1).

A memorisation ratio (NQ-Swap's EM_org / (EM_org + EM_sub), ConflictBank's
OAR / (OAR + CAR)) is a ratio of two sums over every item: each item adds
``numerator`` (1 if it gave the memorised answer) and ``denominator`` (1 if it
gave either answer). Comparing two runs on the items where *both* matched an
answer, as :func:`conflictlab.paired.pair_on_ids` would, selects on the
outcome: a method that stops repeating the memorised answer turns exactly
those items into non-matches, so they leave the pairs and the difference
they make is never seen. Here both ratios are taken over all n items both
runs answered, and their difference D = R_x − R_y is compared item by item:

* the interval: the delta method for two correlated ratios of means, with
  each item's influence ψ_i = (a_xi − R_x b_xi)/b̄_x − (a_yi − R_y b_yi)/b̄_y
  (a, b: numerator and denominator; the covariance of the two ratios comes
  from the same items), centred on D, with Student's t(n − 1) quantile. Each
  item's state in a run is one of three (memorised, the other answer,
  neither), so the items fall in 9 cells of a 3 × 3 table; the variance of ψ
  is taken with half a pseudo-item in each cell (as Agresti and Min add
  half a pair to each cell of a paired 2 × 2 table), which stands for the
  changes a sample too small has not met: the plain delta method covers
  0.14-0.78 at n = 10-100 when 1.5% of items change one way (none changed:
  no width at all) and 0.82 at n = 10 on the issue's shape (docs/statistics.md).
  The centre stays the observed difference (pseudo-items in the estimate
  would pull a ratio with a small denominator). Printed from
  :data:`MIN_N_PAIRED_RATIO` items;
* the p-value: the paired permutation test that swaps the two runs' values
  of an item (an item answered alike by both is left as it is), exact over
  all 2^k swaps of the k items the runs answer differently up to
  :data:`EXACT_SWAPS` of them, else 10,000 random swap patterns,
  p = (1 + hits)/(1 + draws).

Needs numpy alone (the quantile is :mod:`conflictlab.stats`').
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from conflictlab.metrics import method_label
from conflictlab.paired import holm, pair_on_ids
from conflictlab.stats import t_quantile

# Fewest items for the interval: from 10 its coverage is >= 0.94 on every shape of
# benchmarks/ratio_coverage.py (one-way sparse changes, a low match rate, MR near 0, changes both ways).
MIN_N_PAIRED_RATIO = 10
# Up to this many differently answered items the swap test enumerates every swap pattern.
EXACT_SWAPS = 16
# Half a pseudo-item in each of the 3 x 3 cells (memorised, other, neither) x (memorised, other, neither).
PSEUDO_ITEMS = 0.5


def ratio_items(numerator, denominator, *, what: str = "ratio") -> np.ndarray:
    """(n, 2) array of per-item (numerator, denominator), each 0 or 1 with
    numerator ≤ denominator: the unit the paired ratio comparison takes. A
    value outside is a ValueError naming ``what``."""
    a, b = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"{what}: numerator and denominator of shapes {a.shape} and {b.shape}; need two equal (n,)")
    if not (np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all() and (a <= b).all()):
        raise ValueError(f"{what}: per-item counts must be 0/1 with numerator <= denominator")
    return np.column_stack([a, b])


def _states(items: np.ndarray) -> np.ndarray:
    """Each item's state, shape (n,): 0 numerator (memorised), 1 denominator only (the other answer), 2 neither."""
    return np.where(items[:, 0] > 0, 0, np.where(items[:, 1] > 0, 1, 2))


def _difference(a_x, b_x, a_y, b_y) -> float:
    return a_x / b_x - a_y / b_y if b_x > 0 and b_y > 0 else math.nan


def paired_ratio_interval(
    x: np.ndarray, y: np.ndarray, *, confidence: float = 0.95, min_n: int = MIN_N_PAIRED_RATIO
) -> tuple[float, float, float]:
    """(difference, low, high) of the ratios Σa/Σb of ``x`` and ``y`` (each
    (n, 2) of :func:`ratio_items`, row i of both from the same item), by the
    module's delta method; the difference NaN where either run matched no
    item, the interval NaN below ``min_n`` items. Clipped to [−1, 1]."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"paired ratios of shapes {x.shape} and {y.shape}; need two equal (n, 2)")
    n = x.shape[0]
    if n == 0:
        return (math.nan,) * 3
    mean_x, mean_y = x.mean(axis=0), y.mean(axis=0)
    difference = _difference(mean_x[0], mean_x[1], mean_y[0], mean_y[1])
    if n < min_n or math.isnan(difference):
        return difference, math.nan, math.nan
    ratio_x, ratio_y = mean_x[0] / mean_x[1], mean_y[0] / mean_y[1]
    cells = np.zeros((3, 3))
    np.add.at(cells, (_states(x), _states(y)), 1.0)
    weights = (cells + PSEUDO_ITEMS) / (n + 9 * PSEUDO_ITEMS)
    state_a, state_b = np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0])  # (numerator, denominator) by state
    influence_x = (state_a - ratio_x * state_b) / mean_x[1]
    influence_y = (state_a - ratio_y * state_b) / mean_y[1]
    influence = influence_x[:, None] - influence_y[None, :]  # (state under x, state under y)
    variance = max(0.0, float(np.sum(weights * influence**2) - np.sum(weights * influence) ** 2))  # no -1e-17
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance / n)
    return difference, max(-1.0, difference - half), min(1.0, difference + half)


def swap_p(x: np.ndarray, y: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0) -> tuple[float, int | None]:
    """Two-sided p of the paired permutation test of ratio(x) = ratio(y)
    (``x``, ``y`` as in :func:`paired_ratio_interval`): the share of swap
    patterns (each item's two rows exchanged or not) whose |difference|
    reaches the observed one, ties and patterns that leave a run without a
    matched item counted. Returns (p, random patterns drawn; None: all 2^k
    enumerated). NaN where the observed difference is undefined; 1.0 where
    no item is answered differently."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    observed = _difference(*x.sum(axis=0), *y.sum(axis=0)) if x.size else math.nan
    if math.isnan(observed):
        return math.nan, None
    changed = np.flatnonzero(np.any(x != y, axis=1))
    if changed.size == 0 or observed == 0.0:
        return 1.0, None
    moves = (y[changed] - x[changed]).T  # (2, k): what swapping item j adds to x's (numerator, denominator)
    totals_x, totals_y = x.sum(axis=0), y.sum(axis=0)

    def extreme(swaps: np.ndarray) -> int:  # swaps: (patterns, k) of 0/1
        shift = swaps @ moves.T  # (patterns, 2)
        a_x, b_x = totals_x[0] + shift[:, 0], totals_x[1] + shift[:, 1]
        a_y, b_y = totals_y[0] - shift[:, 0], totals_y[1] - shift[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.abs(a_x / b_x - a_y / b_y)
        reached = statistic >= abs(observed) - 1e-12
        return int(np.sum(reached | ~np.isfinite(statistic)))

    if changed.size <= EXACT_SWAPS:
        swaps = (np.arange(2**changed.size)[:, None] >> np.arange(changed.size)) & 1
        return extreme(swaps.astype(float)) / 2**changed.size, None
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):  # chunks bound the memory at large k
        size = min(2000, n_resamples - start)
        hits += extreme(rng.integers(0, 2, size=(size, changed.size)).astype(float))
    return (1 + hits) / (1 + n_resamples), n_resamples


def paired_ratio_difference(
    x: np.ndarray, y: np.ndarray, *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> dict:
    """The paired comparison of the ratios of ``x`` and ``y`` (aligned (n, 2)
    per-item counts), in the columns of :func:`conflictlab.paired.paired_difference`:
    ``difference`` (ratio of x − ratio of y), ``difference_low``,
    ``difference_high``, ``p_paired``, ``n_pairs`` (every item, matched or not)
    and ``paired_test``."""
    difference, low, high = paired_ratio_interval(x, y, confidence=confidence)
    p, drawn = swap_p(x, y, n_resamples=n_resamples, seed=seed)
    patterns = "exact" if drawn is None else f"{drawn} patterns"
    return {
        "difference": difference,
        "difference_low": low,
        "difference_high": high,
        "p_paired": p,
        "n_pairs": int(np.asarray(x).shape[0]),
        "paired_test": f"{method_label(swap_p)} ({patterns}); {method_label(paired_ratio_interval)} CI",
    }


def join_on_ids(ids_x: Sequence, x, ids_y: Sequence, y, *, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) at the ids both hold, in ``ids_x``'s order: per-item (n, 2)
    counts joined on the item (:func:`conflictlab.paired.pair_on_ids` on the
    row numbers). Every item both runs answered stays, matched or not: that is
    the point of the comparison."""
    x, y = np.asarray(x, dtype=float).reshape(-1, 2), np.asarray(y, dtype=float).reshape(-1, 2)
    _, rows_x, rows_y = pair_on_ids(ids_x, np.arange(len(x)), ids_y, np.arange(len(y)), what=what)
    return x[rows_x.astype(int)], y[rows_y.astype(int)]


def best_by_ratio_tests(
    ids: Sequence[Sequence],
    items: Sequence[np.ndarray],
    *,
    higher_is_better: bool,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> int | None:
    """The index of the run to mark best among several on the same items, or
    None: the run with the best ratio beats every other in the swap test over
    the items both answered (all of them, matched or not), Holm-corrected
    across those comparisons at ``alpha``. ``ids[k]``, ``items[k]``: run k's
    item ids and (n, 2) per-item counts."""
    ratios = []
    for counts in items:
        totals = np.asarray(counts, dtype=float).reshape(-1, 2).sum(axis=0)
        ratios.append(totals[0] / totals[1] if totals[1] > 0 else math.nan)
    if len(ratios) < 2 or any(math.isnan(r) for r in ratios):
        return None
    sign = 1.0 if higher_is_better else -1.0
    best = int(np.argmax([sign * r for r in ratios]))
    p_values = []
    for k in (k for k in range(len(ratios)) if k != best):
        x, y = join_on_ids(ids[best], items[best], ids[k], items[k], what="best mark of a ratio")
        if x.size == 0 or not sign * _difference(*x.sum(axis=0), *y.sum(axis=0)) > 0:
            return None
        p_values.append(swap_p(x, y, n_resamples=n_resamples, seed=seed)[0])
    return best if bool(np.all(holm(p_values) < alpha)) else None

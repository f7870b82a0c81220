"""Rank agreement between two scores of the same items, with p-values a
reader can trust at small n (README, Statistics).

- :func:`rank_agreement` — Kendall's τ and Spearman's ρ with exact
  permutation p-values at n ≤ :data:`EXACT_RANK_MAX_N`, Monte-Carlo
  permutation p-values up to :data:`PERMUTATION_RANK_MAX_N` (the number of
  permutations stated in ``p_method``), asymptotic above.
- :func:`stratified_kendall` — Kendall's τ over pairs within strata only
  (agreement within conflict types), permutation p-value within strata.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Hashable, Sequence

import numpy as np

EXACT_RANK_MAX_N = 10  # exact permutation p-values up to here (10! orderings)
PERMUTATION_RANK_MAX_N = 50  # random-permutation p-values up to here; scipy's asymptotic ones above
RANK_PERMUTATIONS = 9999
UNDEFINED_CONSTANT = "undefined (constant input)"


def _check_finite(name: str, **arrays: np.ndarray) -> None:
    """A clear error when an input of ``name`` holds NaN or ±inf (which would pass through silently)."""
    for label, values in arrays.items():
        bad = ~np.isfinite(values)
        if bad.any():
            raise ValueError(
                f"{name}: {int(bad.sum())} non-finite value(s) in {label} (first at position {int(np.argmax(bad))})"
            )


def rank_agreement(
    x: Sequence[float], y: Sequence[float], *, n_permutations: int = RANK_PERMUTATIONS, seed: int = 0
) -> dict[str, float | str]:
    """Kendall's τ-b and Spearman's ρ of paired ``x``, ``y`` (shape (n,)) with
    two-sided p-values.

    n ≤ :data:`EXACT_RANK_MAX_N`: exact, the share of the n! orderings of
    ``y`` whose statistic is at least as extreme (at n = 3 the smallest is
    2/3! = 1/3, never the t approximation's 0). n ≤
    :data:`PERMUTATION_RANK_MAX_N`: ``n_permutations`` random orderings,
    p = min(1, 2·(b + 1)/(m + 1)) with b the orderings in the smaller tail
    (ties in x or y count as at least as extreme), floor 2/(m + 1). Above:
    scipy's asymptotic p-values, no floor (NaN). NaN or inf in the input is an
    error; at n < 3 or when either side is constant the statistics are NaN
    and ``p_method`` says why (:data:`UNDEFINED_CONSTANT`). Returns
    ``kendall_tau``, ``kendall_p``, ``spearman_rho``, ``spearman_p``,
    ``p_method``, ``p_floor``.
    """
    from scipy.stats import kendalltau, spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"rank_agreement: x has shape {x.shape}, y {y.shape}")
    _check_finite("rank_agreement", x=x, y=y)
    n = x.size
    empty = {
        "kendall_tau": math.nan,
        "kendall_p": math.nan,
        "spearman_rho": math.nan,
        "spearman_p": math.nan,
        "p_method": "",
        "p_floor": math.nan,
    }
    if n < 3:
        return {**empty, "p_method": f"undefined (n = {n} < 3)"}
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {**empty, "p_method": UNDEFINED_CONSTANT}
    tau, rho = kendalltau(x, y), spearmanr(x, y)
    out = {"kendall_tau": float(tau.statistic), "spearman_rho": float(rho.statistic)}
    if n <= EXACT_RANK_MAX_N:
        kendall_p, spearman_p = _exact_rank_p_values(x, y)
        out.update(kendall_p=kendall_p, spearman_p=spearman_p, p_method="exact", p_floor=2.0 / math.factorial(n))
    elif n <= PERMUTATION_RANK_MAX_N:
        kendall_p, spearman_p = _permutation_rank_p_values(x, y, n_permutations=n_permutations, seed=seed)
        out.update(
            kendall_p=kendall_p,
            spearman_p=spearman_p,
            p_method=f"permutation ({n_permutations} random orderings)",
            p_floor=2.0 / (n_permutations + 1),
        )
    else:
        # no floor: an underflowing asymptotic p shows as "< 1e-4", never 0
        out.update(kendall_p=float(tau.pvalue), spearman_p=float(rho.pvalue), p_method="asymptotic", p_floor=math.nan)
    return out


def _rank_statistics(x: np.ndarray, y: np.ndarray, orderings: np.ndarray) -> np.ndarray:
    """Numerators of τ and ρ for ``y`` taken in each row of ``orderings``
    (shape (b, n)), paired with ``x``: shape (2, b). With ties the
    denominators are the same for every ordering, so these order them."""
    from scipy.stats import rankdata

    n = x.size
    upper = np.triu_indices(n, 1)
    sign_x = np.sign(x[:, None] - x[None, :])[upper]
    rank_x, rank_y = rankdata(x) - (n + 1) / 2, rankdata(y) - (n + 1) / 2
    permuted = y[orderings]
    return np.stack(
        [(np.sign(permuted[:, upper[0]] - permuted[:, upper[1]]) * sign_x).sum(axis=1), rank_y[orderings] @ rank_x]
    )


def _permutation_rank_p_values(x: np.ndarray, y: np.ndarray, *, n_permutations: int, seed: int) -> tuple[float, float]:
    """Two-sided Monte-Carlo permutation p-values of τ-b and ρ (see :func:`rank_agreement`)."""
    rng = np.random.default_rng(seed)
    observed = _rank_statistics(x, y, np.arange(x.size)[None, :])[:, 0]
    slack = 1e-9 * np.maximum(1.0, np.abs(observed))
    at_least, at_most = np.zeros(2), np.zeros(2)
    for start in range(0, n_permutations, 2000):  # bounded memory
        orderings = rng.permuted(np.tile(np.arange(x.size), (min(2000, n_permutations - start), 1)), axis=1)
        null = _rank_statistics(x, y, orderings)
        at_least += (null >= observed[:, None] - slack[:, None]).sum(axis=1)
        at_most += (null <= observed[:, None] + slack[:, None]).sum(axis=1)
    p = np.minimum(1.0, 2 * (np.minimum(at_least, at_most) + 1) / (n_permutations + 1))
    return float(p[0]), float(p[1])


def stratified_kendall(
    x: Sequence[float], y: Sequence[float], strata: Sequence[Hashable], *, n_permutations: int = 4999, seed: int = 0
) -> dict[str, float]:
    """Kendall's τ over pairs *within* strata only, with a permutation p-value.

    τ_w = Σ_s S_s / Σ_s D_s, where per stratum s S_s = Σ_{i<j} sign(xi−xj)·
    sign(yi−yj) and D_s = √((n0−n1)(n0−n2)) is τ-b's denominator; with one
    stratum it is τ-b. Pairs across strata never count, so a difference
    between strata (a type effect) cannot make τ_w large. The p-value
    (two-sided, 2·min of the one-sided tails, capped at 1) permutes ``y``
    within each stratum ``n_permutations`` times: (1 + as extreme) /
    (1 + n_permutations), never below ``p_floor`` = 2 / (1 + n_permutations).
    Strata with fewer than 2 members add nothing. NaN or inf in ``x`` or
    ``y`` is an error; when no stratum has spread in both, τ is undefined and
    ``undefined`` says so (:data:`UNDEFINED_CONSTANT`; ``""`` otherwise).
    Returns ``tau``, ``p``, ``n`` (members of the strata that count),
    ``n_pairs``, ``p_floor``, ``undefined``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not x.size == y.size == len(strata):
        raise ValueError(f"stratified_kendall: {x.size} x, {y.size} y and {len(strata)} strata labels")
    _check_finite("stratified_kendall", x=x, y=y)
    members: dict[Hashable, list[int]] = {}
    for i, stratum in enumerate(strata):  # the labels given, once each
        members.setdefault(stratum, []).append(i)
    groups = [np.array(g) for g in members.values() if len(g) >= 2]
    empty = {
        "tau": math.nan,
        "p": math.nan,
        "n": 0,
        "n_pairs": 0,
        "p_floor": math.nan,
        "undefined": "undefined (no stratum of 2)",
    }
    if not groups:
        return empty

    rng = np.random.default_rng(seed)
    observed, null, denominator, n_pairs = 0.0, np.zeros(n_permutations), 0.0, 0
    for g in groups:
        pairs = g.size * (g.size - 1) // 2
        ranks = np.unique(y[g], return_inverse=True)[1].astype(np.int32)  # dense ranks of y
        observed += float(_within_sums(x[g], ranks[None, :])[0])
        denominator += math.sqrt((pairs - _tied_pairs(x[g])) * (pairs - _tied_pairs(y[g])))
        n_pairs += pairs
        # the ranks shuffled as y's values would be: the same draws, in the same order
        shuffled = np.stack([rng.permutation(ranks) for _ in range(n_permutations)])  # (R, |g|)
        null += _within_sums(x[g], shuffled)
    if denominator == 0:
        return {**empty, "n": int(sum(g.size for g in groups)), "n_pairs": n_pairs, "undefined": UNDEFINED_CONSTANT}
    slack = 1e-9 * max(1.0, abs(observed))
    tails = min((null >= observed - slack).sum(), (null <= observed + slack).sum())
    return {
        "tau": observed / denominator,
        "p": min(1.0, 2 * (1 + int(tails)) / (1 + n_permutations)),
        "n": int(sum(g.size for g in groups)),
        "n_pairs": n_pairs,
        "p_floor": 2 / (1 + n_permutations),
        "undefined": "",
    }


def _tied_pairs(values: np.ndarray) -> int:
    """Pairs of equal entries of ``values`` (shape (m,))."""
    counts = np.unique(values, return_counts=True)[1]
    return int((counts * (counts - 1) // 2).sum())


def _within_sums(x: np.ndarray, ranks: np.ndarray, *, block: int = 64) -> np.ndarray:
    """S = Σ_{i<j} sign(x_i − x_j)·sign(y_i − y_j) for ``x`` (shape (m,)) and
    each row of y's dense ranks ``ranks`` (shape (R, m), int32 from 0):
    exact integers, shape (R,).

    In x's order S counts each pair with x strictly apart +1 when y rises
    with it and −1 when y falls. The positions are taken in blocks that end
    where x changes, of at most ``block`` items or one run of equal x: pairs
    inside a block are compared directly (none in a run of equal x), pairs
    with an earlier block through per-row counts of the y ranks seen so far.
    O(R · m · (block + m / block)) time and O(R · m) memory, not the
    R · m²/2 pair signs (tens of GB at 3,000 items and 5,000 permutations).
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ranks = ranks[:, order]  # in x's order
    rows_n, m = ranks.shape
    levels = int(ranks.max()) + 1 if ranks.size else 0
    offsets = (np.arange(rows_n, dtype=np.int64) * levels)[:, None]
    tie = np.cumsum(np.r_[False, xs[1:] != xs[:-1]])  # per position, its group of equal x
    tie_start, tie_end = np.searchsorted(tie, tie, side="left"), np.searchsorted(tie, tie, side="right")
    seen = np.zeros((rows_n, levels), dtype=np.int32)  # per row, how many earlier items hold each rank
    total = np.zeros(rows_n, dtype=np.int64)
    low = 0
    while low < m:
        # end the block where x changes: before a group of equal x that would cross its end,
        # or, when that group starts the block, after it (a block of one x has no pairs inside)
        last = min(low + block, m) - 1
        high = int(tie_end[last]) if tie_start[last] == low or tie_end[last] == last + 1 else int(tie_start[last])
        here = ranks[:, low:high]  # (R, B)
        before = np.cumsum(seen, axis=1, dtype=np.int32)  # items of earlier blocks with rank <= r; all have a smaller x
        at_most = np.take_along_axis(before, here, axis=1)
        smaller = np.where(here > 0, np.take_along_axis(before, np.maximum(here - 1, 0), axis=1), 0)
        total += (smaller - (low - at_most)).sum(axis=1, dtype=np.int64)
        if xs[low] != xs[high - 1]:  # at most ``block`` items, not all of one x
            strictly = xs[low:high][:, None] < xs[low:high][None, :]  # [a, b]: x_a < x_b
            rises = (here[:, None, :] > here[:, :, None]) & strictly  # [r, a, b]: y_b > y_a
            falls = (here[:, None, :] < here[:, :, None]) & strictly
            total += np.count_nonzero(rises, axis=(1, 2)) - np.count_nonzero(falls, axis=(1, 2))
        seen += (
            np.bincount((offsets + here).ravel(), minlength=rows_n * levels)
            .reshape(rows_n, levels)
            .astype(np.int32, copy=False)
        )
        low = high
    return total


@functools.lru_cache(maxsize=EXACT_RANK_MAX_N + 1)
def _orderings(n: int) -> np.ndarray:
    """Every ordering of ``range(n)``, shape (n!, n), int8 (36 MB at n = 10)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def _exact_rank_p_values(x: np.ndarray, y: np.ndarray, *, chunk: int = 400_000) -> tuple[float, float]:
    """Two-sided exact permutation p-values of Kendall's τ-b and Spearman's ρ.

    Under H0 every pairing of ``y`` with ``x`` is equally likely; the
    numerators alone order the pairings (:func:`_rank_statistics`).
    Two-sided p = 2·min(P(T ≥ t), P(T ≤ t)), capped at 1, as scipy's
    ``permutation_test`` defines it (with ties the null need not be symmetric).
    """
    observed = _rank_statistics(x, y, np.arange(x.size)[None, :])[:, 0]
    slack = 1e-9 * np.maximum(1.0, np.abs(observed))  # float ties with the observed value count as "as extreme"
    at_least, at_most = np.zeros(2), np.zeros(2)
    orderings = _orderings(x.size)
    for start in range(0, len(orderings), chunk):
        null = _rank_statistics(x, y, orderings[start : start + chunk])  # (2, b)
        at_least += (null >= observed[:, None] - slack[:, None]).sum(axis=1)
        at_most += (null <= observed[:, None] + slack[:, None]).sum(axis=1)
    p = np.minimum(1.0, 2 * np.minimum(at_least, at_most) / len(orderings))
    return float(p[0]), float(p[1])

"""Rank agreement between two scores of the same items, with p-values a
reader can trust at small n (README, Statistics).

- :func:`rank_agreement` — Kendall's τ and Spearman's ρ with exact
  permutation p-values at n ≤ :data:`EXACT_RANK_MAX_N`, asymptotic above.
- :func:`stratified_kendall` — Kendall's τ over pairs within strata only
  (agreement within conflict types), permutation p-value within strata.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Hashable, Sequence

import numpy as np

EXACT_RANK_MAX_N = 10  # exact permutation p-values up to here (10! orderings)


def rank_agreement(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Kendall's τ-b and Spearman's ρ of paired ``x``, ``y`` (shape (n,)) with
    two-sided p-values.

    For n ≤ :data:`EXACT_RANK_MAX_N` the p-values are exact: the share of the
    n! orderings of ``y`` whose statistic is at least as extreme, so at n = 3
    the smallest is 2/3! = 1/3, never the t approximation's 0.0000. Above it,
    scipy's asymptotic p-values. NaN everywhere at n < 3 or when either side
    is constant. Returns ``kendall_tau``, ``kendall_p``, ``spearman_rho``,
    ``spearman_p``, ``p_method`` (``exact`` | ``asymptotic``), and
    ``p_floor``: the smallest p-value the test can give at this n.
    """
    from scipy.stats import kendalltau, spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    empty = {"kendall_tau": math.nan, "kendall_p": math.nan, "spearman_rho": math.nan, "spearman_p": math.nan,
             "p_method": "", "p_floor": math.nan}
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return empty
    tau, rho = kendalltau(x, y), spearmanr(x, y)
    out = {"kendall_tau": float(tau.statistic), "spearman_rho": float(rho.statistic)}
    if n <= EXACT_RANK_MAX_N:
        kendall_p, spearman_p = _exact_rank_p_values(x, y)
        out.update(kendall_p=kendall_p, spearman_p=spearman_p, p_method="exact", p_floor=2.0 / math.factorial(n))
    else:
        out.update(kendall_p=float(tau.pvalue), spearman_p=float(rho.pvalue), p_method="asymptotic", p_floor=0.0)
    return out


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
    Strata with fewer than 2 members add nothing. Returns ``tau``, ``p``,
    ``n`` (members of the strata that count), ``n_pairs``, ``p_floor``.
    """
    x, y, strata = np.asarray(x, dtype=float), np.asarray(y, dtype=float), list(strata)
    groups = [np.flatnonzero([s == key for s in strata]) for key in dict.fromkeys(strata)]
    groups = [g for g in groups if g.size >= 2]
    empty = {"tau": math.nan, "p": math.nan, "n": 0, "n_pairs": 0, "p_floor": math.nan}
    if not groups:
        return empty

    def parts(g: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, float, int]:
        upper = np.triu_indices(g.size, 1)
        sx = np.sign(x[g][:, None] - x[g][None, :])[upper]
        sy = np.sign(ys[..., :, None] - ys[..., None, :])[..., upper[0], upper[1]]
        denominator = math.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy.reshape(-1, sx.size)[0]))
        return sy @ sx, denominator, sx.size

    rng = np.random.default_rng(seed)
    observed, null, denominator, n_pairs = 0.0, np.zeros(n_permutations), 0.0, 0
    for g in groups:
        s, d, pairs = parts(g, y[g])
        observed, denominator, n_pairs = observed + float(s), denominator + d, n_pairs + pairs
        shuffled = np.stack([rng.permutation(y[g]) for _ in range(n_permutations)])  # (R, |g|)
        null += parts(g, shuffled)[0]
    if denominator == 0:
        return {**empty, "n": int(sum(g.size for g in groups)), "n_pairs": n_pairs}
    slack = 1e-9 * max(1.0, abs(observed))
    tails = min((null >= observed - slack).sum(), (null <= observed + slack).sum())
    return {
        "tau": observed / denominator,
        "p": min(1.0, 2 * (1 + int(tails)) / (1 + n_permutations)),
        "n": int(sum(g.size for g in groups)),
        "n_pairs": n_pairs,
        "p_floor": 2 / (1 + n_permutations),
    }


@functools.lru_cache(maxsize=EXACT_RANK_MAX_N + 1)
def _orderings(n: int) -> np.ndarray:
    """Every ordering of ``range(n)``, shape (n!, n), int8 (36 MB at n = 10)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def _exact_rank_p_values(x: np.ndarray, y: np.ndarray, *, chunk: int = 400_000) -> tuple[float, float]:
    """Two-sided exact permutation p-values of Kendall's τ-b and Spearman's ρ.

    Under H0 every pairing of ``y`` with ``x`` is equally likely. With ties the
    tie counts, and so each statistic's denominator, are the same for every
    pairing, so the numerators alone order the pairings: Σ sign(xi−xj)·
    sign(yi−yj) over pairs for τ, Σ (rank xi − mean)(rank yi − mean) for ρ.
    Two-sided p = 2·min(P(T ≥ t), P(T ≤ t)), capped at 1, as scipy's
    ``permutation_test`` defines it (with ties the null need not be symmetric).
    """
    from scipy.stats import rankdata

    n = x.size
    upper = np.triu_indices(n, 1)
    sign_x = np.sign(x[:, None] - x[None, :])[upper]
    rank_x, rank_y = rankdata(x) - (n + 1) / 2, rankdata(y) - (n + 1) / 2
    observed = np.array([sign_x @ np.sign(y[:, None] - y[None, :])[upper], rank_x @ rank_y])
    slack = 1e-9 * np.maximum(1.0, np.abs(observed))  # float ties with the observed value count as "as extreme"
    at_least, at_most = np.zeros(2), np.zeros(2)
    orderings = _orderings(n)
    for start in range(0, len(orderings), chunk):
        block = orderings[start:start + chunk]
        permuted = y[block]  # (b, n)
        null = np.stack([(np.sign(permuted[:, upper[0]] - permuted[:, upper[1]]) * sign_x).sum(axis=1),
                         rank_y[block] @ rank_x])  # (2, b)
        at_least += (null >= observed[:, None] - slack[:, None]).sum(axis=1)
        at_most += (null <= observed[:, None] + slack[:, None]).sum(axis=1)
    p = np.minimum(1.0, 2 * np.minimum(at_least, at_most) / len(orderings))
    return float(p[0]), float(p[1])

"""Estimators shared by every metric table.

One function per estimator, each stating what it estimates, its interval and
the smallest sample that gets one (README, "Statistics"):

- :func:`wilson_interval` — a proportion (accuracy, MR/OAR/CAR, recall,
  behaviour rates): Wilson score interval; none at n < 2.
- :func:`bootstrap_mean_ci` — a mean of non-binary per-sample scores
  (Balance, Faithfulness): percentile bootstrap; none at n < 2.
- :func:`mean_ci` — the same for means over up to millions of values
  (ConflictBank's mean entropy): the bootstrap below :data:`NORMAL_FROM`
  values, the normal interval from there on.
- :func:`marks_over_same_samples` — best/second marks only between cells over
  the same samples with n ≥ a minimum.
- :func:`balance` — how evenly a sample's non-negative contributions (clipped
  Shapley values, a judge's rating masses) are spread: shares, their Gini
  coefficient and Balance, the Gini rescaled to [0, 1].

Rank agreement (Kendall, Spearman) is in :mod:`conflictlab.rank_tests`,
which needs scipy; this module needs numpy alone, so that rules which only
count (data, generation) need no scipy in their environment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Hashable, Sequence

import numpy as np

MIN_N_INTERVAL = 2  # one observation says nothing about its own spread
DEFAULT_MIN_N_MARK = 30


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``successes / n`` and its Wilson score interval.

    Returns ``(p, low, high)``: all NaN at n = 0; ``p`` with a NaN interval
    at n = 1 (below :data:`MIN_N_INTERVAL`). Unlike a percentile bootstrap,
    the interval is not degenerate at 0% or 100%: at 0 of 10 it is
    [0, 27.8%]. Matches ``statsmodels.stats.proportion.proportion_confint(
    method="wilson")`` (tested).
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    if n == 0:
        return (math.nan,) * 3
    p = successes / n
    if n < MIN_N_INTERVAL:
        return p, math.nan, math.nan
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at p = 0 or 1 the bound is exactly 0 or 1; the formula leaves float rounding
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return p, low, high


def proportion_ci(outcomes: Sequence[bool] | np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """:func:`wilson_interval` of binary ``outcomes`` (shape (n,))."""
    outcomes = np.asarray(outcomes, dtype=float)
    if outcomes.size and not np.isin(outcomes, (0.0, 1.0)).all():
        raise ValueError("proportion_ci takes 0/1 outcomes; use bootstrap_mean_ci for graded scores")
    return wilson_interval(int(outcomes.sum()), int(outcomes.size), confidence=confidence)


# Indices drawn per block of bootstrap resamples: 4 MB of int64 whatever n is.
BOOTSTRAP_BLOCK = 1 << 19


def bootstrap_mean_ci(
    values: np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    block: int | None = None,
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and its percentile-bootstrap CI.

    Returns ``(mean, low, high)``: all NaN when ``values`` is empty, the mean
    with a NaN interval below :data:`MIN_N_INTERVAL` values. For 0/1 outcomes
    use :func:`proportion_ci`: the bootstrap interval of a proportion
    collapses to a point at 0% and 100%.

    The resamples are drawn ``max(1, block // n)`` at a time (``block`` None:
    :data:`BOOTSTRAP_BLOCK`), so memory stays bounded at any n (all of them at
    once are 8 GB at 2,000 x 250k); the generator's stream does not depend on
    how the draws are split into calls and each resample's mean is its own
    row's, so the numbers do not depend on ``block``.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (math.nan,) * 3
    if values.size < MIN_N_INTERVAL:
        return float(values.mean()), math.nan, math.nan
    rng = np.random.default_rng(seed)
    step = max(1, (BOOTSTRAP_BLOCK if block is None else block) // values.size)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, step):
        stop = min(start + step, n_resamples)
        resamples = rng.integers(0, values.size, size=(stop - start, values.size))
        means[start:stop] = np.take(values, resamples).mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(values.mean()), float(low), float(high)


# From this many values on, :func:`mean_ci` gives the normal interval instead
# of the bootstrap. The percentile bootstrap of a mean estimates the same
# interval plus a skewness term: its ends lie about |γ|(z² − 1)/(6z√n) of the
# half-width from the normal ones (γ the values' skewness), 0.3% at n = 5,000
# and |γ| = 1, less than its own Monte-Carlo noise at 2,000 resamples (~3% of
# the half-width, the 2.5% quantile's standard error); its cost is resamples × n draws
# (111 s for ConflictBank's 9.4M rows). Checked in tests/test_stats.py against
# scipy.stats.bootstrap and by coverage.
NORMAL_FROM = 5_000


def mean_ci(
    values: np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    normal_from: int = NORMAL_FROM,
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and its 95% interval: at n below
    ``normal_from`` :func:`bootstrap_mean_ci` (the same draws), from there on
    mean ± z·s/√n (s with n − 1). ``(mean, low, high)``; all NaN when
    empty, a NaN interval below :data:`MIN_N_INTERVAL` values."""
    values = np.asarray(values, dtype=float)
    if values.size < normal_from:
        return bootstrap_mean_ci(values, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return normal_mean_ci(values, confidence=confidence)


def normal_mean_ci(values: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and mean ± z·s/√n, s the standard
    deviation with n − 1; all NaN when empty, a NaN interval below
    :data:`MIN_N_INTERVAL` values."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (math.nan,) * 3
    mean = float(values.mean())
    if values.size < MIN_N_INTERVAL:
        return mean, math.nan, math.nan
    half = NormalDist().inv_cdf(0.5 + confidence / 2.0) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


def marks_over_same_samples(
    values: Sequence[float | None],
    samples: Sequence[Hashable],
    ns: Sequence[int],
    *,
    higher_is_better: bool,
    min_n: int = DEFAULT_MIN_N_MARK,
    decimals: int = 1,
    scale: float = 100.0,
) -> tuple[list[str], str]:
    """Best/second marks (``"best"``, ``"second"``, ``""``) per cell, and why
    none were given (``""`` when some were).

    ``samples``: per cell, an identity of the samples it averages (e.g. a
    frozenset of sample ids); cells are ranked against each other only when
    all non-empty cells share one identity and every one has n ≥ ``min_n``.
    Values are compared as displayed (``scale`` × value rounded to
    ``decimals``), so displayed ties share a mark; NaN/None gets none.
    """
    present = [i for i, v in enumerate(values) if v is not None and not math.isnan(v)]
    blank = [""] * len(values)
    if len(present) < 2:
        return blank, "fewer than two cells to compare"
    if len({samples[i] for i in present}) > 1:
        return blank, "cells cover different samples"
    if min(ns[i] for i in present) < min_n:
        return blank, f"n < {min_n}"
    shown = {i: round(scale * values[i], decimals) for i in present}
    ranked = sorted(set(shown.values()), reverse=higher_is_better)
    by_value = dict(zip(ranked, ("best", "second")))
    return [by_value.get(shown[i], "") if i in shown else "" for i in range(len(values))], ""


@dataclass(frozen=True)
class BalanceResult:
    shares: np.ndarray  # (n,), NaN when undefined
    balance: float  # normalised Gini in [0, 1], NaN when undefined
    gini: float  # unnormalised Gini (the paper code's number), NaN when undefined
    undefined: bool  # every φ_i <= 0


def balance(phi: np.ndarray) -> BalanceResult:
    """Shares and Balance of one sample's contributions ``phi`` (shape (n,), n >= 2).

    ContextConflict's Eq. 2: clip φ at 0, shares p_i = max(0, φ_i) / Σ_j max(0, φ_j),
    Balance = n/(n-1) · (1/n) Σ_i (2i - n - 1) p_[i] with p sorted ascending,
    which is the Gini coefficient of p rescaled to [0, 1] (0 = every piece
    used equally, 1 = one piece only). The paper's code reported the
    unrescaled Gini (maximum (n-1)/n), given here as ``gini`` for comparison.
    When every φ_i ≤ 0 the shares are undefined: the paper's code then used
    uniform shares, which scores as perfectly balanced; here the sample is
    flagged and its shares and Balance are NaN, to be excluded from means and
    counted.
    """
    phi = np.asarray(phi, dtype=np.float64)
    n = phi.size
    if n < 2:
        raise ValueError("Balance needs at least two evidence pieces")
    clipped = np.clip(phi, 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        nan = float("nan")
        return BalanceResult(np.full(n, np.nan), nan, nan, True)
    shares = clipped / total
    ranks = np.arange(1, n + 1)
    gini = float(np.sum((2 * ranks - n - 1) * np.sort(shares)) / n)
    return BalanceResult(shares, gini * n / (n - 1), gini, False)

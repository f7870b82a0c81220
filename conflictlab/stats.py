"""Estimators shared by every metric table.

One function per estimator, each stating what it estimates, its interval and
the smallest sample that gets one (docs/statistics.md, where the coverage of
each printed interval is measured at the n it is printed at):

- :func:`proportion_interval` — a proportion (accuracy, MR/OAR/CAR, recall,
  behaviour rates, gold-set agreement): Clopper-Pearson, whose coverage is
  at least nominal at every n and p (Wilson's dips to 0.85-0.92 at some
  n ≤ 40, docs/statistics.md); none at n < 2.
- :func:`mean_interval` — a mean of graded per-sample scores (Balance,
  Faithfulness, grounding, Δ, entropy): Student-t, clipped to the score's
  range; none at n < :data:`MIN_N_MEAN` (coverage below 93% there on our
  score shapes) and none when the sample has no spread (shown as "no spread").
- :func:`unit_proportion_interval` — a proportion whose prompts come in
  units (both evidence orders of an instance): Clopper-Pearson over units.
- :func:`cluster_means` — one value per unit of analysis (an instance asked
  in both evidence orders) before any interval is taken.
- :func:`format_p` — how every table prints a p-value.

Paired comparisons of the same items (two methods, two evidence orders) are
in :mod:`conflictlab.paired`.
- :func:`bootstrap_mean_ci`, :func:`wilson_interval` — kept for checks and
  for n large enough; no table prints them at small n.
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

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

MIN_N_INTERVAL = 2  # one observation says nothing about its own spread
# The smallest n a mean's Student-t interval is printed at: from here on its
# simulated coverage is >= 93.5% on every score shape of tests/test_coverage.py
# (Balance-like Beta mixtures, Balance of 1-5 ratings, Faithfulness-like
# fractions); at n = 10 it is 90% on a skewed Beta mixture, at n = 20 93.0%
# (docs/statistics.md has the table).
MIN_N_MEAN = 30
P_FLOOR = 1e-4  # a p-value below it prints as "< 1e-4"


def _too_few(successes: int, n: int) -> tuple[float, float, float] | None:
    """A proportion's result when n is too small for an interval (all NaN at
    n = 0, the share alone below :data:`MIN_N_INTERVAL`), else None; counts
    outside [0, n] are an error."""
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    if n == 0:
        return (math.nan,) * 3
    if n < MIN_N_INTERVAL:
        return successes / n, math.nan, math.nan
    return None


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``successes / n`` and its Wilson score interval.

    Returns ``(p, low, high)``: all NaN at n = 0; ``p`` with a NaN interval
    at n = 1 (below :data:`MIN_N_INTERVAL`). Unlike a percentile bootstrap,
    the interval is not degenerate at 0% or 100%: at 0 of 10 it is
    [0, 27.8%]. Matches ``statsmodels.stats.proportion.proportion_confint(
    method="wilson")`` (tested).
    """
    if (point_only := _too_few(successes, n)) is not None:
        return point_only
    p = successes / n
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at p = 0 or 1 the bound is exactly 0 or 1; the formula leaves float rounding
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return p, low, high


def proportion_ci(outcomes: Sequence[bool] | np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """:func:`proportion_interval` of binary ``outcomes`` (shape (n,))."""
    outcomes = np.asarray(outcomes, dtype=float)
    if outcomes.size and not np.isin(outcomes, (0.0, 1.0)).all():
        raise ValueError("proportion_ci takes 0/1 outcomes; use mean_interval for graded scores")
    return proportion_interval(int(outcomes.sum()), int(outcomes.size), confidence=confidence)


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) by its continued fraction
    (modified Lentz), accurate to ~1e-14; matches ``scipy.special.betainc``
    (tested). Here so that this module (and :mod:`conflictlab.paired`) needs numpy alone."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast below the mode
        return 1.0 - betainc(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 100_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def _solve(f, target: float, low: float, high: float) -> float:
    """x in [low, high] with increasing ``f(x) = target``, by bisection to 1e-13."""
    for _ in range(200):
        mid = 0.5 * (low + high)
        if f(mid) < target:
            low = mid
        else:
            high = mid
        if high - low < 1e-13 * max(1.0, abs(mid)):
            break
    return 0.5 * (low + high)


def _beta_ppf(q: float, a: float, b: float) -> float:
    """The ``q`` quantile of Beta(a, b)."""
    return _solve(lambda x: betainc(a, b, x), q, 0.0, 1.0)


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (q > 0.5) of Student's t with ``df`` degrees of
    freedom, from P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2); matches
    ``scipy.stats.t.ppf`` (tested)."""
    if df >= 1e4:
        # Cornish-Fisher expansion about the normal quantile: error O(df⁻³), where
        # the Beta inversion below would lose digits to x = df/(df + t²) ≈ 1
        z = NormalDist().inv_cdf(q)
        return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
    x = _beta_ppf(2.0 * (1.0 - q), df / 2.0, 0.5)  # = df / (df + t²)
    return math.sqrt(df * (1.0 - x) / x)


def clopper_pearson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``successes / n`` and its Clopper-Pearson ("exact")
    interval: the Beta quantiles whose coverage is at least ``confidence``
    at every n and true p. ``(p, low, high)``: all NaN at n = 0, a NaN
    interval at n = 1. Matches ``statsmodels`` ``proportion_confint(method=
    "beta")`` (tested)."""
    if (point_only := _too_few(successes, n)) is not None:
        return point_only
    p = successes / n
    return (p, *_beta_bounds(successes, n, confidence))


def _beta_bounds(successes: float, n: int, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson's Beta quantiles for ``successes`` of ``n`` (a fractional count too)."""
    alpha = 1.0 - confidence
    low = 0.0 if successes <= 0 else _beta_ppf(alpha / 2, successes, n - successes + 1)
    high = 1.0 if successes >= n else _beta_ppf(1 - alpha / 2, successes + 1, n - successes)
    return low, high


# The interval every table prints for a proportion (one place to change it).
proportion_interval = clopper_pearson_interval


def unit_proportion_interval(unit_means: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """A proportion over prompts that come in units (an instance asked in
    both evidence orders), from each unit's share ``unit_means`` (shape
    (k,), in [0, 1]): their mean and the Clopper-Pearson interval with k
    trials and Σ shares successes (Beta quantiles take a fractional count).

    A share in [0, 1] has variance at most μ(1 − μ), a Bernoulli's, so this
    is the binomial interval of k units or wider; the Student-t interval
    of the shares covers 89% at k = 30 when accuracy is near 90%
    (tests/test_coverage.py). ``(mean, low, high)``; all NaN when empty, a
    NaN interval at k = 1."""
    unit_means = np.asarray(unit_means, dtype=float)
    if unit_means.size and not ((unit_means >= 0) & (unit_means <= 1)).all():
        raise ValueError("unit_proportion_interval takes shares in [0, 1] (NaN included is an error)")
    k = unit_means.size
    if k == 0:
        return (math.nan,) * 3
    total = float(unit_means.sum())
    if k < MIN_N_INTERVAL:
        return total / k, math.nan, math.nan
    return (total / k, *_beta_bounds(total, k, confidence))


def mean_interval(
    values: np.ndarray, *, confidence: float = 0.95, bounds: tuple[float, float] | None = None, min_n: int | None = None
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and its Student-t interval
    mean ± t(n−1)·s/√n, clipped to ``bounds`` (the score's range) when given.

    ``(mean, low, high)``: all NaN when empty; a NaN interval below
    ``min_n`` (default :data:`MIN_N_MEAN`) values and when the values have
    no spread (s = 0: a zero-width interval would read as precise; tables
    say "no spread (n = k)"). NaN in ``values`` is an error, not a value.
    """
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError(
            f"mean_interval: {int(np.isnan(values).sum())} NaN of {values.size} values; drop and count them first"
        )
    if values.size == 0:
        return (math.nan,) * 3
    mean = float(values.mean())
    if values.size < (MIN_N_MEAN if min_n is None else min_n):
        return mean, math.nan, math.nan
    spread = float(values.std(ddof=1))
    if spread <= 1e-12 * max(1.0, abs(mean)):
        return mean, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, values.size - 1) * spread / math.sqrt(values.size)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return mean, low, high


def no_spread(values: np.ndarray) -> bool:
    """Whether ``values`` (shape (n,), n ≥ 1) are all equal: the reason a mean has no interval at n ≥ its minimum."""
    values = np.asarray(values, dtype=float)
    return values.size > 0 and float(np.ptp(values)) == 0.0


def cluster_means(values: np.ndarray, clusters: Sequence[Hashable]) -> tuple[np.ndarray, list[Hashable]]:
    """One value per unit of analysis: the mean of ``values`` (shape (n,))
    over the rows of each cluster (e.g. an instance asked in both evidence
    orders), in order of first appearance. Returns (means (k,), cluster labels (k,)).

    Intervals over rows that repeat a unit treat them as independent and are
    too narrow (by up to √rows per unit); over these means each unit counts once.
    """
    values = np.asarray(values, dtype=float)
    if values.size != len(clusters):
        raise ValueError(f"cluster_means: {values.size} values but {len(clusters)} cluster labels")
    labels = list(dict.fromkeys(clusters))
    index = {c: i for i, c in enumerate(labels)}
    codes = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=values.size)
    sums, counts = np.bincount(codes, weights=values, minlength=len(labels)), np.bincount(codes, minlength=len(labels))
    return sums / counts, labels


def cluster_bootstrap_weights(clusters: Sequence[Hashable], *, n_resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """Bootstrap over units, as row weights: shape (n_resamples, n_rows), the
    number of times each row's unit (``clusters``, shape (n_rows,)) was drawn
    when the k units are resampled with replacement. A statistic computed
    with these weights resamples whole units (an item with several labels,
    an instance in both orders), never the rows of one unit apart."""
    labels = list(dict.fromkeys(clusters))
    index = {c: i for i, c in enumerate(labels)}
    codes = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(n_resamples, len(labels)))
    counts = np.zeros((n_resamples, len(labels)))
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1.0)
    return counts[:, codes]


def format_p(p: float | None) -> str:
    """A p-value with two significant digits (``0.032``, ``0.50``,
    ``0.00021``), never ``0``: below :data:`P_FLOOR` it reads ``< 1e-4`` (an
    asymptotic p of 0.0 is an underflow, not a certainty); ``""`` for None or NaN."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    if p < P_FLOOR:
        return "< 1e-4"
    return f"{p:#.2g}"  # "#" keeps a trailing zero: 0.0020, 0.50, 1.0


def percentile_interval(draws: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``draws`` (shape (R,), NaN draws
    left out); NaN when fewer than half are defined or they have no spread."""
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return (float(low), float(high)) if high > low else (math.nan, math.nan)


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


def marks_over_same_samples(
    values: Sequence[float | None],
    samples: Sequence[Hashable],
    ns: Sequence[int],
    *,
    higher_is_better: bool,
    min_n: int,
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
    if not np.isfinite(phi).all():
        raise ValueError(
            f"balance: non-finite contribution(s) {phi.tolist()}; a NaN φ would pass into the shares unnoticed"
        )
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

"""Estimators shared by every metric table.

One function per estimator, each stating what it estimates, its interval and
the smallest sample that gets one (docs/statistics.md, where the coverage of
each printed interval is measured at the n it is printed at):

- :func:`proportion_interval` — a proportion (accuracy, MR/OAR/CAR, recall,
  behaviour rates, gold-set agreement): Clopper-Pearson, whose coverage is
  at least nominal at every n and p (Wilson's dips to 0.85-0.92 at some
  n ≤ 40, docs/statistics.md); none at n < 2.
- :func:`bounded_mean_interval` — a mean of graded scores within a known
  range (Balance, position shares, Faithfulness, grounding, entropy): the
  betting confidence interval of Waudby-Smith & Ramdas, whose level holds at
  every n for every distribution in the range (Student-t fell to 0.78 on
  point masses at 0 and 1); none at n < :data:`MIN_N_MEAN`.
- :func:`mean_interval` — a mean of unbounded graded scores (Δ):
  Student-t; none at n < :data:`MIN_N_MEAN` and none when the sample has no
  spread (shown as "no spread"). Table 3's skewed Δ get the calibrated
  bootstrap-t of :mod:`conflictlab.studentized` instead.
- :func:`unit_proportion_interval` — a proportion whose prompts come in
  units (both evidence orders of an instance), and shares in {0, ½, 1}:
  Clopper-Pearson over units.
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
# The smallest n a mean's interval is printed at. Student-t's simulated coverage
# on interior score shapes (Balance-like Beta mixtures, Balance of 1-5 ratings)
# reaches 93.5% from here, 90% at n = 10; the betting interval of bounded scores
# holds its level at any n, but below 30 it spans most of the range
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
    return (p, *clopper_pearson_bounds(successes, n, confidence))


def clopper_pearson_bounds(successes: float, n: int, confidence: float) -> tuple[float, float]:
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
    return (total / k, *clopper_pearson_bounds(total, k, confidence))


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` as a float array; NaN or ±inf is an error (a NaN mean, or an infinite one printed with
    "no spread", would pass into a table unnoticed)."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        bad = int((~np.isfinite(values)).sum())
        raise ValueError(f"{what}: {bad} NaN or infinite of {values.size} values; drop and count them first")
    return values


def _mean_too_few(values: np.ndarray, min_n: int | None) -> tuple[float, float, float] | None:
    """A mean's result when ``values`` (shape (n,)) are too few for an interval (all NaN when empty, the mean
    alone below ``min_n``, default :data:`MIN_N_MEAN`), else None."""
    if values.size == 0:
        return (math.nan,) * 3
    if values.size < (MIN_N_MEAN if min_n is None else min_n):
        return float(values.mean()), math.nan, math.nan
    return None


def mean_interval(
    values: np.ndarray, *, confidence: float = 0.95, bounds: tuple[float, float] | None = None, min_n: int | None = None
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and its Student-t interval
    mean ± t(n−1)·s/√n, clipped to ``bounds`` (the score's range) when given.

    ``(mean, low, high)``: all NaN when empty; a NaN interval below
    ``min_n`` (default :data:`MIN_N_MEAN`) values and when the values have
    no spread (s = 0: a zero-width interval would read as precise; tables
    say "no spread (n = k)"). NaN or ±inf in ``values`` is an error, not a
    value. For a score bounded in a known range prefer
    :func:`bounded_mean_interval`, whose coverage does not depend on the
    score's shape (point masses at the bounds take the t interval's to 0.78).
    """
    values = _finite(values, "mean_interval")
    if (point_only := _mean_too_few(values, min_n)) is not None:
        return point_only
    mean = float(values.mean())
    spread = float(values.std(ddof=1))
    if spread <= 1e-12 * max(1.0, abs(mean)):
        return mean, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, values.size - 1) * spread / math.sqrt(values.size)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return mean, low, high


# The betting interval's truncation c of a bet (Waudby-Smith & Ramdas suggest 1/2 to 3/4; 3/4
# gives 30 ones [0.85, 1] where 1/2 gives [0.79, 1], and is as wide as 1/2 on interior shapes): each
# factor of the capital stays >= 1 - c > 0, so one extreme value cannot wipe a bettor out.
BET_CAP = 0.75
# How many orders of the sample the betting capital is averaged over: the capital depends on the
# order the values arrive in; the average over fixed pseudo-random orders (chosen without looking at
# the values) is still an e-value, and it varies less with the order than one order's.
BETTING_ORDERS = 8
_GRID, _BISECTIONS = 16, 32  # the search for each bound: a coarse grid, then bisection in its cell


def betting_stakes(x: np.ndarray, *, alpha: float) -> np.ndarray:
    """The predictable plug-in bet of Waudby-Smith & Ramdas (arXiv 2010.09686, sec. 5) for a fixed
    n, before truncation: λ_t = √(2 log(2/α) / (n σ̂²_{t−1})), σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²)/(t + 1),
    μ̂_i = (1/2 + Σ_{j≤i} x_j)/(i + 1), σ̂²_0 = 1/4. ``x``: shape (..., n), values in [0, 1] in the
    order they are bet on; same shape out. Each λ_t uses x_1 … x_{t−1} only (predictable), which
    is what keeps the capital a martingale."""
    n = x.shape[-1]
    t = np.arange(1, n + 1)
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum(np.square(x - mu_hat), axis=-1)) / (t + 1)
    sigma2_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (n * sigma2_before))


def betting_capital(x: np.ndarray, m: np.ndarray, stakes: np.ndarray) -> np.ndarray:
    """The hedged betting capital of Waudby-Smith & Ramdas (arXiv 2010.09686, JRSS-B 2024, sec. 4)
    against the mean being ``m``: ``x`` of shape (B, P, n), values in [0, 1] in P orders each (the
    mean over the orders is returned), ``m`` of shape (B,), one null mean per row, ``stakes`` of
    x's shape (:func:`betting_stakes`); shape (B,).

    A bettor on "above m" holds K⁺ = Π (1 + λ⁺_t (x_t − m)) with λ⁺ = min(λ, c/m), one on "below
    m" K⁻ = Π (1 − λ⁻_t (x_t − m)) with λ⁻ = min(λ, c/(1 − m)) (c = :data:`BET_CAP`); the capital
    is (K⁺ + K⁻)/2. Each K is a non-negative martingale of mean 1 when m is the true mean of i.i.d.
    values (every factor ≥ 1 − c > 0), so by Markov's inequality the capital at n reaches 1/α with
    probability at most α whatever their distribution: the m it leaves below 1/α form a
    confidence set of level 1 − α at every n. The paper hedges with max(K⁺, K⁻)/2, which is never
    above this average, so the set here is never wider than the paper's; averaging over orders
    keeps the mean-1 property, hence the level.
    """
    m = np.asarray(m, dtype=float)[:, None, None]
    up = np.minimum(stakes, BET_CAP / np.maximum(m, 1e-300))
    down = np.minimum(stakes, BET_CAP / np.maximum(1.0 - m, 1e-300))
    with np.errstate(over="ignore"):
        above = np.exp(np.log1p(up * (x - m)).sum(axis=-1))
        below = np.exp(np.log1p(-down * (x - m)).sum(axis=-1))
    return (0.5 * (above + below)).mean(axis=-1)


def betting_bounds(x: np.ndarray, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), each of shape (B,): the betting confidence interval of the mean of each row of
    ``x`` (shape (B, P, n): values in [0, 1], each row in P orders), the m whose
    :func:`betting_capital` stays below 1/α. Each bound is searched between the row's mean and 0
    (or 1): the first point of a 16-point grid (the mean included) whose capital stays below 1/α,
    then bisection between it and the rejected point before it down to 2^-32 of the grid's cell."""
    alpha = 1.0 - confidence
    threshold = 1.0 / alpha
    stakes = betting_stakes(x, alpha=alpha)
    mean = x.mean(axis=(-2, -1))
    rows = np.arange(x.shape[0])
    out = []
    for edge in (0.0, 1.0):
        grid = edge + (mean - edge)[:, None] * np.linspace(0.0, 1.0, _GRID)  # (B, G): from the edge to the mean
        accepted = np.stack([betting_capital(x, grid[:, k], stakes) < threshold for k in range(_GRID)], axis=1)
        accepted[:, -1] = True  # the mean itself, whose capital stays near 1
        first = accepted.argmax(axis=1)
        rejected_side, accepted_side = grid[rows, np.maximum(first - 1, 0)], grid[rows, first]
        for _ in range(_BISECTIONS):
            mid = 0.5 * (rejected_side + accepted_side)
            ok = betting_capital(x, mid, stakes) < threshold
            accepted_side, rejected_side = np.where(ok, mid, accepted_side), np.where(ok, rejected_side, mid)
        out.append(np.where(first == 0, edge, accepted_side))
    return out[0], out[1]


def betting_orders(n: int, *, orders: int = BETTING_ORDERS, seed: int = 0) -> np.ndarray:
    """``orders`` pseudo-random orders of n values, shape (orders, n): the first is the identity."""
    rng = np.random.default_rng(seed)
    return np.stack([np.arange(n)] + [rng.permutation(n) for _ in range(orders - 1)])


def bounded_mean_interval(
    values: np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
    min_n: int | None = None,
    orders: int = BETTING_ORDERS,
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)), each within ``bounds`` (the score's range), and its betting
    confidence interval (Waudby-Smith & Ramdas' hedged capital, :func:`betting_capital`): coverage at
    least ``confidence`` at every n and for every distribution within the bounds (point masses at 0
    and 1, skewed mixtures), where the Student-t interval fell to 0.78 (docs/statistics.md). It is
    never a point: all-equal values still get an interval (at n = 30 all ones give [0.85, 1]).

    The capital is averaged over ``orders`` orders of the values (:func:`betting_orders`: the order
    given and seeded shuffles of it, chosen without looking at the values, so the level holds for
    values drawn i.i.d.); the interval depends a little on the order given. ``(mean, low, high)``: all
    NaN when empty, a NaN interval below ``min_n`` (default :data:`MIN_N_MEAN`); NaN, ±inf or a
    value outside ``bounds`` is an error."""
    values = _finite(values, "bounded_mean_interval")
    low_bound, high_bound = bounds
    if not high_bound > low_bound:
        raise ValueError(f"bounded_mean_interval: bounds {bounds} must be increasing")
    span = high_bound - low_bound
    if values.size and (values.min() < low_bound - 1e-12 * span or values.max() > high_bound + 1e-12 * span):
        raise ValueError(f"bounded_mean_interval: values in [{values.min()}, {values.max()}] leave the bounds {bounds}")
    if (point_only := _mean_too_few(values, min_n)) is not None:
        return point_only
    mean = float(values.mean())
    unit = np.clip((values - low_bound) / span, 0.0, 1.0)
    low, high = betting_bounds(unit[betting_orders(unit.size, orders=orders)][None], confidence=confidence)
    return mean, low_bound + span * float(low[0]), low_bound + span * float(high[0])


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
    left out); NaN when fewer than half are defined (the statistic is
    undefined in most resamples: the rest are not a sample of its spread) or
    they have no spread."""
    draws = np.asarray(draws, dtype=float)
    defined = draws[~np.isnan(draws)]
    if defined.size == 0 or 2 * defined.size < draws.size:
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
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

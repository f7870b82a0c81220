"""Paired comparisons: two methods (or two evidence orders) answering the same
items. The one place for them (issue 50, item 3): every methods table,
Table 4 and ``arbitration_orders`` call :func:`paired_difference`.

Each function takes two aligned per-item arrays ``x`` and ``y`` of shape
(n,), item i of both from the same item (:func:`pair_on_ids` aligns them by
id), and compares ``x`` with ``y`` (the difference is ``x − y``):

* proportions (0/1 outcomes): the exact McNemar test (:func:`mcnemar_exact`,
  a two-sided binomial test on the discordant pairs; equal to
  ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``) and Tango's
  asymptotic score interval (:func:`tango_interval`; Tango 1998, Stat. Med.
  17, 891-908), the paired analogue of Wilson's: its exact coverage stays
  ≥ 93% at every n from 2 over a grid that includes one-sided, sparse
  discordance, where Agresti-Min's and Newcombe's fall to 0.83-0.87
  (tests/test_coverage.py, docs/statistics.md);
* graded scores (Balance, Faithfulness, shares of two orders): the sign-flip
  permutation test of the mean difference (:func:`sign_flip_p`) and the
  adjusted Wald interval of :func:`adjusted_mean_interval` (z²/2 pseudo-pairs
  at each bound of the difference, with Student's t quantile), which covers
  sparse, one-signed, skewed differences where the plain t interval fell to
  0.76-0.89 at n = 30-300.

:func:`holm` adjusts a family of p-values (checked against
``statsmodels.stats.multitest.multipletests(method="holm")``). Needs numpy
alone (the quantiles and the incomplete beta are :mod:`conflictlab.stats`').
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from conflictlab.stats import MIN_N_INTERVAL, betainc, clopper_pearson_bounds, format_p, t_quantile

# Below this many nonzero differences the sign-flip test enumerates all 2**n sign patterns.
EXACT_SIGN_FLIP_N = 16
# Fewest pairs for a paired interval, by how the cells are compared (conflictlab.metrics.paired_comparison, the
# one place that decides it; a ratio's is conflictlab.paired_ratios.MIN_N_PAIRED_RATIO): Tango's interval of 0/1
# outcomes covers from 2 pairs; the adjusted t interval of everything else (graded scores, {0, 1/2, 1} instance
# shares) covers from 10 (tests/test_coverage.py), and below 10 it spans most of the range and says no more than
# n does.
PAIRED_MIN_N = {"proportion": MIN_N_INTERVAL, "mean": 10}


def pair_on_ids(
    ids_x: Sequence, x, ids_y: Sequence, y, *, what: str = "paired comparison"
) -> tuple[list, np.ndarray, np.ndarray]:
    """(shared ids in ``ids_x``'s order, x at them, y at them): the inner join
    of two per-item arrays on their ids. A repeated id on either side is a
    ValueError naming ``what`` (one item, one value)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(ids_x) != x.size or len(ids_y) != y.size:
        raise ValueError(f"{what}: {x.size} and {y.size} values for {len(ids_x)} and {len(ids_y)} ids")
    for ids, side in ((ids_x, "first"), (ids_y, "second")):
        if len(set(ids)) != len(ids):
            raise ValueError(f"{what}: the {side} side repeats an item id; pairing needs one value per item")
    at_y = {item: k for k, item in enumerate(ids_y)}
    shared = [(item, k) for k, item in enumerate(ids_x) if item in at_y]
    keep_x = np.array([k for _, k in shared], dtype=int)
    keep_y = np.array([at_y[item] for item, _ in shared], dtype=int)
    return [item for item, _ in shared], x[keep_x], y[keep_y]


def _check_pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired values of shapes {x.shape} and {y.shape}; need two equal (n,)")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired values hold NaN or infinity; drop the unscored items on both sides first")
    return x, y


def _binary(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = _check_pairs(x, y)
    if not (np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all()):
        raise ValueError("a paired comparison of proportions needs 0/1 outcomes")
    return x.astype(bool), y.astype(bool)


def mcnemar_exact(only_x: int, only_y: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: ``only_x``
    items right (1) under x and wrong under y, ``only_y`` the reverse. Under
    H0 each discordant pair goes either way with probability 1/2: p = min(1,
    2·P(Binomial(b + c, 1/2) ≤ min(b, c))), the binomial tail as the
    incomplete beta I_{1/2}(m − k, k + 1); 1.0 without discordant pairs. An
    exact p is never 0: thousands of one-sided pairs give the smallest
    positive float, not an underflow to 0."""
    if only_x < 0 or only_y < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_x}, {only_y}")
    m, k = only_x + only_y, min(only_x, only_y)
    if m == 0 or 2 * k == m:
        return 1.0
    return max(min(1.0, 2.0 * betainc(m - k, k + 1, 0.5)), float(np.finfo(float).tiny))


def tango_interval(
    only_x: int,
    only_y: int,
    n: int,
    *,
    confidence: float = 0.95,
    bias_correction: bool = True,
    skewness_correction: bool = True,
    all_discordant_exact: bool = True,
) -> tuple[float, float, float]:
    """(difference, low, high): (only_x − only_y)/n, the difference of two
    paired proportions, and Tango's asymptotic score interval: the δ whose
    score statistic (b − c − nδ)/√(n(2·p̃₂₁(δ) + δ(1 − δ))) lies within ±z,
    p̃₂₁(δ) the maximum-likelihood share of y-only pairs given δ (Tango's
    closed form). ``bias_correction``: the variance times n/(n − 1) (Laud's
    "N − 1" correction, the default of R's ``ratesci::scorepairci``), without
    which the exact coverage dips to 0.9298 at n = 30; plain Tango matches
    his published example (tested). ``skewness_correction``: Laud's (2017,
    Pharm. Stat. 16, 334-348; ``ratesci``'s SCAS): the bound is where the
    score less μ₃(z² − 1)/(6V^{3/2}) reaches ±z, μ₃ the score's third
    central moment under the restricted fit; it lifts the exact coverage
    near |δ| = 1, where the score's distribution is skewed
    (docs/statistics.md). All NaN at n = 0; a NaN interval below
    :data:`MIN_N_INTERVAL`. At b = c = 0 it is ±kz²/(n + kz²), k = n/(n − 1),
    like Wilson's at 0 of n, without the skewness term (±0.037 at n = 100)
    and a little narrower with it (±0.028): never a point.
    ``all_discordant_exact``: when every pair is discordant (b + c = n) the
    interval is Clopper-Pearson's for the split, 2p − 1 for p the share of
    x-only pairs (with every pair discordant δ = 2p − 1 and b is
    Binomial(n, p)): the score interval covered 0.9298 there at n = 31-32
    (every item discordant, P(x only) 0.8 or 0.9), this one ≥ 0.947 on
    those cells at n = 10-50 (docs/statistics.md)."""
    if not (0 <= only_x and 0 <= only_y and only_x + only_y <= n):
        raise ValueError(f"discordant counts {only_x}, {only_y} must be >= 0 and sum to at most n = {n}")
    if n == 0:
        return (math.nan,) * 3
    difference = (only_x - only_y) / n
    if n < MIN_N_INTERVAL:
        return difference, math.nan, math.nan
    if all_discordant_exact and only_x + only_y == n:
        low_share, high_share = clopper_pearson_bounds(only_x, n, confidence)
        return difference, 2.0 * low_share - 1.0, 2.0 * high_share - 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    inflation = n / (n - 1.0) if bias_correction else 1.0

    def score(delta: float) -> float:  # decreasing in delta
        a, b = 2.0 * n, -only_x - only_y + (2.0 * n - only_x + only_y) * delta
        c = -only_y * delta * (1.0 - delta)
        p21 = (math.sqrt(max(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)
        numerator, variance = only_x - only_y - n * delta, inflation * n * (2.0 * p21 + delta * (1.0 - delta))
        if variance <= 0.0:
            return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
        if not skewness_correction:
            return numerator / math.sqrt(variance)
        # the third central moment of b − c − nδ under the restricted fit: n pairs, each +1 (x only, share
        # p21 + δ), −1 (y only, p21) or 0, less δ
        p12 = p21 + delta
        third = n * (p12 * (1 - delta) ** 3 + p21 * (-1 - delta) ** 3 + (1 - p12 - p21) * (-delta) ** 3)
        return numerator / math.sqrt(variance) - third * (z * z - 1.0) / (6.0 * variance**1.5)

    def root(target: float, low: float, high: float) -> float:
        for _ in range(100):  # bisection: 2^-100 of [-1, 1], far below any printed digit
            mid = 0.5 * (low + high)
            low, high = (mid, high) if score(mid) > target else (low, mid)
        return 0.5 * (low + high)

    low = -1.0 if score(-1.0) <= z else root(z, -1.0, difference)
    high = 1.0 if score(1.0) >= -z else root(-z, difference, 1.0)
    return difference, low, high


def adjusted_mean_interval(
    differences: np.ndarray, *, bound: float, confidence: float = 0.95, min_n: int = PAIRED_MIN_N["mean"]
) -> tuple[float, float, float]:
    """(mean, low, high) of paired ``differences`` (shape (n,), each in
    [−bound, bound]: ``bound`` = the score's range) with pseudo-pairs in the
    manner of Agresti-Min carried to bounded scores: w = z²/2 pseudo-pairs at
    each of ±bound and one at 0 join the n differences, then
    centre ± t(n−1)·√(v/(n + 2w + 1)) over the n + 2w + 1, clipped to
    [−bound, bound]. The pseudo-pairs stand for the large changes a small
    sample has not met yet: the plain t interval of sparse, one-signed
    differences covers 0.76-0.89 (docs/statistics.md), and with half a
    pseudo-pair at each bound (Agresti-Min's weight, used before) it fell to
    0.87-0.91 when every item moves a little and a few flip (10% of items by
    −1 at n = 20, 4% at n = 100); their weight fades as 1/n. A NaN interval
    below ``min_n`` pairs and when the differences have no spread (all equal:
    shown as "no spread", and every coverage here is measured over the
    samples that print one)."""
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or not np.isfinite(d).all():
        raise ValueError(f"adjusted_mean_interval: need finite differences of shape (n,); got shape {d.shape}")
    if (np.abs(d) > bound * (1 + 1e-12)).any():
        raise ValueError(f"adjusted_mean_interval: a difference of {float(np.abs(d).max())} exceeds the bound {bound}")
    if d.size == 0:
        return (math.nan,) * 3
    mean = float(d.mean())
    if d.size < min_n or np.ptp(d) <= 1e-12 * bound:
        return mean, math.nan, math.nan
    low, high = adjusted_bounds(d[None], bound=bound, confidence=confidence)
    return mean, float(low[0]), float(high[0])


def pseudo_pairs(confidence: float) -> float:
    """w, the pseudo-pairs :func:`adjusted_mean_interval` adds at each bound: z²/2 (1.92 at 95%)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2.0) ** 2 / 2.0


def adjusted_bounds(d: np.ndarray, *, bound: float, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of :func:`adjusted_mean_interval` for each row of ``d`` (shape (B, n)), each (B,):
    vectorised, for the coverage simulations, without its checks."""
    n = d.shape[-1]
    w = pseudo_pairs(confidence)
    total = n + 2.0 * w + 1.0
    centre = d.sum(axis=-1) / total
    variance = (np.square(d).sum(axis=-1) + 2.0 * w * bound * bound) / total - centre * centre
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * np.sqrt(variance / total)
    return np.maximum(-bound, centre - half), np.minimum(bound, centre + half)


def sign_flip_p(differences, *, n_resamples: int = 10_000, seed: int = 0) -> tuple[float, int | None]:
    """Two-sided sign-flip permutation p-value of mean(differences) = 0, and
    the number of random sign patterns drawn (None: all 2**n enumerated, at
    n ≤ :data:`EXACT_SIGN_FLIP_N`). A pattern counts when its |mean| reaches
    the observed one (up to rounding), so ties count; the observed pattern is
    one of them, so p > 0. 1.0 when every difference is 0."""
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"sign-flip test: need finite differences of shape (n,), n ≥ 1; got shape {d.shape}")
    observed = abs(d.mean())
    if observed == 0.0:
        return 1.0, None
    tolerance = 1e-12 * max(1.0, float(np.abs(d).max()))
    if d.size <= EXACT_SIGN_FLIP_N:
        signs = 1 - 2 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
        means = np.abs(signs @ d) / d.size
        return float(np.mean(means >= observed - tolerance)), None
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):  # chunks bound the memory at large n
        size = min(2000, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(size, d.size))
        hits += int(np.sum(np.abs(signs @ d) / d.size >= observed - tolerance))
    return (1 + hits) / (1 + n_resamples), n_resamples


def paired_difference(
    x,
    y,
    *,
    proportion: bool,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """The paired comparison of ``x`` with ``y`` (aligned, shape (n,); NaN is
    an error): ``difference`` (mean of x − y), ``difference_low``,
    ``difference_high`` (NaN below :data:`PAIRED_MIN_N` pairs or without
    spread), ``p_paired``, ``n_pairs`` and ``paired_test`` (its name, with the
    number of random sign patterns where the sign-flip test drew them).
    ``proportion``: 0/1 outcomes, :func:`tango_interval` and
    :func:`mcnemar_exact`; else graded scores within ``bounds`` (the score's
    range; a value outside is an error), :func:`adjusted_mean_interval` and
    :func:`sign_flip_p`."""
    if proportion:
        x, y = _binary(x, y)
        only_x, only_y = int(np.sum(x & ~y)), int(np.sum(~x & y))
        diff, low, high = tango_interval(only_x, only_y, x.size, confidence=confidence)
        p, test = (mcnemar_exact(only_x, only_y) if x.size else math.nan), "exact McNemar; Tango score CI"
    else:
        x, y = _check_pairs(x, y)
        outside = (x < bounds[0]) | (x > bounds[1]) | (y < bounds[0]) | (y > bounds[1])
        if outside.any():
            raise ValueError(f"paired values must lie in {bounds}; {int(outside.sum())} pair(s) do not")
        diff, low, high = adjusted_mean_interval(x - y, bound=bounds[1] - bounds[0], confidence=confidence)
        if x.size:
            p, drawn = sign_flip_p(x - y, n_resamples=n_resamples, seed=seed)
            test = ("sign-flip (exact)" if drawn is None else f"sign-flip ({drawn} patterns)") + "; adjusted t CI"
        else:
            p, test = math.nan, "undefined (no pairs)"
    return {
        "difference": diff,
        "difference_low": low,
        "difference_high": high,
        "p_paired": p,
        "n_pairs": int(x.size),
        "paired_test": test,
    }


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, shape (len(p_values),), each ≤ 1."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or np.isnan(p).any():
        raise ValueError("Holm's adjustment needs a 1-D array of p-values without NaN")
    order = np.argsort(p, kind="stable")
    scaled = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, scaled)
    return adjusted


def best_by_paired_tests(
    ids: Sequence[Sequence],
    values: Sequence,
    *,
    higher_is_better: bool,
    proportion: bool,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> int | None:
    """The index of the row to mark best among several methods on the same
    items, or None: the row with the best mean beats every other row in a
    paired test (:func:`paired_difference` over the ids both share), with
    Holm's correction across those comparisons at ``alpha``. ``ids[k]``,
    ``values[k]``: row k's item ids and per-item values (NaN-free)."""
    means = [float(np.mean(v)) if len(v) else math.nan for v in values]
    if len(means) < 2 or any(math.isnan(m) for m in means):
        return None
    sign = 1.0 if higher_is_better else -1.0
    best = int(np.argmax([sign * m for m in means]))
    p_values = []
    for k in range(len(means)):
        if k == best:
            continue
        _, x, y = pair_on_ids(ids[best], values[best], ids[k], values[k])
        if x.size == 0:
            return None
        result = paired_difference(x, y, proportion=proportion, n_resamples=n_resamples, seed=seed)
        if sign * result["difference"] <= 0:
            return None
        p_values.append(result["p_paired"])
    return best if bool(np.all(holm(p_values) < alpha)) else None


# The columns a methods table (and Table 4) gives each row against its baseline.
PAIRED_COLUMNS = (
    "difference",
    "difference_low",
    "difference_high",
    "p_paired",
    "p_paired_text",
    "n_pairs",
    "paired_test",
)


def paired_columns(
    items: tuple, reference: tuple, *, proportion: bool, what: str, n_resamples: int = 10_000, seed: int = 0
) -> dict:
    """The paired columns (``difference``, ``difference_low``,
    ``difference_high``, ``p_paired``, ``p_paired_text``, ``n_pairs``,
    ``paired_test``) of ``items`` against ``reference``, each (item ids,
    per-item values), joined on the ids; the interval null below
    :data:`PAIRED_MIN_N` pairs or without spread, everything but
    ``n_pairs = 0`` null without shared items. ``what`` names the
    comparison in errors."""
    _, x, y = pair_on_ids(*items, *reference, what=what)
    if x.size == 0:
        return {"n_pairs": 0}
    result = paired_difference(x, y, proportion=proportion, n_resamples=n_resamples, seed=seed)
    result = {k: nan_to_none(v) for k, v in result.items()}
    return {**result, "p_paired_text": format_p(result["p_paired"])}


def nan_to_none(v):
    """``v``, or None for a NaN float (a CSV cell left empty rather than printed as nan)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

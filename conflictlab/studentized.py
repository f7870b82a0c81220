"""Means of unbounded, skewed per-sample differences (Table 3's Δ_high and Δ_low; issue 59, item 4).

Δ = ℓ_full − ℓ_without is a difference of log-likelihoods: unbounded and
skewed, where Student's t interval undercovers (lognormal σ = 1: 0.88 at
n = 30; σ = 1.5: 0.80-0.86 at n = 30-100). The bootstrap-t interval
(:func:`bootstrap_t_interval`) takes the t statistic's quantiles from the
sample itself, so a skewed sample gets an asymmetric interval; its coverage
is measured on lognormal σ = 1 and 1.5 (benchmarks/skewed_coverage.py,
docs/statistics.md) and it is printed only from the n where both reach 93%
(:data:`MIN_N_BOOTSTRAP_T`). No interval of a mean of unbounded scores has a
guarantee at any n (a rare huge value moves the mean without showing in the
sample), so the minimum n is a measured one, on these shapes.

Two such quantities measured on the same samples are compared per sample
(:func:`paired_skewed_difference`): the mean of Δ_high − Δ_low, its
bootstrap-t interval, and the sign-flip p (:func:`conflictlab.paired.sign_flip_p`,
exact over every sign pattern up to 16 samples), never two marginal intervals.
"""

from __future__ import annotations

import math

import numpy as np

from conflictlab.paired import sign_flip_p

# Fewest samples for a bootstrap-t interval: from here its coverage is >= 0.93 on lognormal
# sigma = 1 and sigma = 1.5 (benchmarks/skewed_coverage.py; at n = 100, sigma = 1.5 gives 0.92).
MIN_N_BOOTSTRAP_T = 300
# Indices drawn per block of resamples (4 MB of int64), whatever n is.
_BLOCK = 1 << 19


def bootstrap_t_interval(
    values, *, confidence: float = 0.95, n_resamples: int = 1999, seed: int = 0, min_n: int = MIN_N_BOOTSTRAP_T
) -> tuple[float, float, float]:
    """(mean, low, high) of ``values`` (shape (n,), finite): the
    studentized-bootstrap interval [x̄ − t*_{1−α/2}·s/√n, x̄ − t*_{α/2}·s/√n],
    t* the order statistics of (x̄* − x̄)/(s*/√n) over ``n_resamples``
    resamples (a resample without spread gives ±∞, counted as the extreme it
    is). NaN interval below ``min_n``, without spread, or where an end is
    not finite (the sample cannot bound the mean). NaN or ±∞ in ``values`` is
    a ValueError."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not np.isfinite(x).all():
        raise ValueError(f"bootstrap_t_interval: need finite values of shape (n,); got shape {x.shape} or NaN/inf")
    if x.size == 0:
        return (math.nan,) * 3
    mean = float(x.mean())
    spread = float(x.std(ddof=1)) if x.size > 1 else 0.0
    if x.size < min_n or spread <= 1e-12 * max(1.0, abs(mean)):
        return mean, math.nan, math.nan
    n, rng = x.size, np.random.default_rng(seed)
    statistics = np.empty(n_resamples)
    rows = max(1, _BLOCK // n)
    for start in range(0, n_resamples, rows):
        sample = x[rng.integers(0, n, size=(min(rows, n_resamples - start), n))]
        centre, scale = sample.mean(axis=1), sample.std(axis=1, ddof=1) / math.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (centre - mean) / scale
        statistics[start : start + len(t)] = np.where(scale > 0, t, np.sign(centre - mean) * np.inf)
    statistics = np.sort(np.nan_to_num(statistics, nan=0.0, posinf=np.inf, neginf=-np.inf))
    tail = int(math.floor((1.0 - confidence) / 2.0 * (n_resamples + 1)))  # the order statistic of the tail
    lower_t, upper_t = statistics[max(tail, 1) - 1], statistics[n_resamples - max(tail, 1)]
    standard_error = spread / math.sqrt(n)
    low, high = mean - upper_t * standard_error, mean - lower_t * standard_error
    if not (math.isfinite(low) and math.isfinite(high)):
        return mean, math.nan, math.nan
    return mean, low, high


def paired_skewed_difference(
    x, y, *, confidence: float = 0.95, n_resamples: int = 1999, seed: int = 0, min_n: int = MIN_N_BOOTSTRAP_T
) -> dict:
    """Per-sample comparison of two skewed quantities measured on the same
    samples (``x``, ``y``: shape (n,), aligned): ``difference`` (mean of
    x − y), ``difference_low``/``difference_high`` (:func:`bootstrap_t_interval`
    of x − y), ``p`` (two-sided sign-flip p of mean(x − y) = 0; exact over
    all 2^n patterns at n ≤ 16) and ``n``. NaN p at n = 0."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired values of shapes {x.shape} and {y.shape}; need two equal (n,)")
    difference, low, high = bootstrap_t_interval(
        x - y, confidence=confidence, n_resamples=n_resamples, seed=seed, min_n=min_n
    )
    p = sign_flip_p(x - y, seed=seed)[0] if x.size else math.nan
    return {"difference": difference, "difference_low": low, "difference_high": high, "p": p, "n": int(x.size)}

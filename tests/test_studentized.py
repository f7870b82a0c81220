"""conflictlab.studentized: the bootstrap-t interval of a skewed mean and the per-sample test of two (issue 59,
item 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conflictlab.stats import mean_interval
from conflictlab.studentized import (
    CALIBRATED_CONFIDENCE,
    MIN_N_BOOTSTRAP_T,
    bootstrap_t_interval,
    paired_skewed_difference,
    skewed_mean_interval,
)


def test_bootstrap_t_is_affine_equivariant_and_asymmetric_on_a_skewed_sample():
    x = np.random.default_rng(0).lognormal(0.0, 1.0, 400)
    mean, low, high = bootstrap_t_interval(x, n_resamples=999)
    assert mean == pytest.approx(x.mean()) and low < mean < high
    assert high - mean > mean - low  # a right-skewed sample: the upper side is the longer one
    shifted = bootstrap_t_interval(3.0 * x - 2.0, n_resamples=999)
    assert shifted == pytest.approx((3 * mean - 2, 3 * low - 2, 3 * high - 2))
    flipped = bootstrap_t_interval(-x, n_resamples=999)
    assert flipped == pytest.approx((-mean, -high, -low))


def test_bootstrap_t_is_its_formula():
    """The interval is x̄ − t*·s/√n at the order statistics ⌊(α/2)(B + 1)⌋ and B + 1 − that of the resampled t."""
    values = np.random.default_rng(6).lognormal(0.0, 1.0, 40)
    mean, low, high = bootstrap_t_interval(values, n_resamples=999, seed=3)
    draws = values[np.random.default_rng(3).integers(0, 40, size=(999, 40))]
    t = np.sort((draws.mean(axis=1) - mean) * math.sqrt(40) / draws.std(axis=1, ddof=1))
    scale = values.std(ddof=1) / math.sqrt(40)
    assert (low, high) == pytest.approx((mean - t[999 - 25] * scale, mean - t[25 - 1] * scale))


def test_table3_prints_no_interval_where_it_has_not_been_shown_to_cover():
    x = np.random.default_rng(1).lognormal(0.0, 1.0, MIN_N_BOOTSTRAP_T - 1)
    assert math.isnan(skewed_mean_interval(x)[1]) and not math.isnan(bootstrap_t_interval(x)[1])
    assert math.isnan(skewed_mean_interval(np.full(MIN_N_BOOTSTRAP_T, 2.0))[1])  # no spread
    assert all(math.isnan(v) for v in bootstrap_t_interval(np.array([])))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_t_interval(np.array([1.0, np.inf]))
    wider = skewed_mean_interval(np.random.default_rng(1).lognormal(0.0, 1.0, 200))
    plain = bootstrap_t_interval(np.random.default_rng(1).lognormal(0.0, 1.0, 200))
    assert wider[1] < plain[1] < plain[2] < wider[2]  # the calibrated level is the wider interval


def test_paired_difference_has_an_exact_sign_flip_p_at_small_n():
    rng = np.random.default_rng(2)
    high, low = rng.lognormal(0.0, 1.0, 10), rng.lognormal(0.0, 1.0, 10)
    d = high - low
    patterns = [abs(np.dot(s, d)) / 10 for s in itertools.product((-1, 1), repeat=10)]
    exact = np.mean(np.array(patterns) >= abs(d.mean()) - 1e-12)
    out = paired_skewed_difference(high, low)
    assert out["p"] == pytest.approx(exact) and out["n"] == 10
    assert out["difference"] == pytest.approx(d.mean()) and math.isnan(out["difference_low"])  # n < minimum


def test_paired_difference_sees_what_two_marginal_intervals_miss():
    """Δ_high and Δ_low that move together: their marginal intervals overlap, the per-sample difference is
    clearly positive."""
    rng = np.random.default_rng(3)
    shared = rng.lognormal(0.0, 1.0, 400)
    high, low = shared + 0.2 + rng.normal(0, 0.05, 400), shared
    marginal_high, marginal_low = skewed_mean_interval(high), skewed_mean_interval(low)
    assert marginal_high[1] < marginal_low[2]  # the old claim's rule would say "not clearly larger"
    out = paired_skewed_difference(high, low)
    assert out["difference_low"] > 0.15 and out["p"] < 1e-3


def _coverage(interval, sigma: float, n: int, samples: int) -> float:
    rng = np.random.default_rng(7)
    truth, hits = math.exp(sigma**2 / 2), 0
    for k in range(samples):
        _, low, high = interval(rng.lognormal(0.0, sigma, n), k)
        hits += low <= truth <= high
    return hits / samples


def test_on_a_skewed_shape_the_calibrated_level_covers_where_95_nominal_and_student_t_do_not():
    n = MIN_N_BOOTSTRAP_T
    calibrated = _coverage(
        lambda x, k: bootstrap_t_interval(x, confidence=CALIBRATED_CONFIDENCE, n_resamples=499, seed=k), 1.5, n, 400
    )
    nominal = _coverage(lambda x, k: bootstrap_t_interval(x, n_resamples=499, seed=k), 1.5, n, 400)
    student = _coverage(lambda x, k: mean_interval(x), 1.5, n, 400)
    assert student < nominal < calibrated and student < 0.9 and calibrated >= 0.93

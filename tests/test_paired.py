"""conflictlab.paired: each estimator against statsmodels/scipy or a published example (coverage: test_coverage)."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from conflictlab.paired import (
    adjusted_mean_interval,
    best_by_paired_tests,
    holm,
    mcnemar_exact,
    pair_on_ids,
    paired_difference,
    sign_flip_p,
    tango_interval,
)
from conflictlab.stats import t_quantile


def _pairs(rng, n, cells):
    """n paired 0/1 outcomes whose 2x2 cells (both 1, x only, y only, neither) have probabilities ``cells``."""
    k = rng.choice(4, size=n, p=cells)
    return np.isin(k, (0, 1)).astype(float), np.isin(k, (0, 2)).astype(float)


@pytest.mark.parametrize("n", [1, 7, 30, 200])
def test_mcnemar_matches_statsmodels_exact(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        x, y = _pairs(rng, n, (0.3, 0.25, 0.1, 0.35))
        table = [
            [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
            [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
        ]
        expected = mcnemar(table, exact=True).pvalue
        assert mcnemar_exact(int(table[0][1]), int(table[1][0])) == pytest.approx(expected, rel=1e-10)
        assert paired_difference(x, y, proportion=True)["p_paired"] == pytest.approx(expected, rel=1e-10)


def test_mcnemar_p_never_underflows_to_zero():
    assert 0 < mcnemar_exact(5000, 0) < 1e-300
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(4, 4) == 1.0


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.04])
    assert np.allclose(holm(p), multipletests(p, method="holm")[1])


def test_sign_flip_matches_scipy_exact_permutation_test():
    rng = np.random.default_rng(4)
    d = rng.normal(0.4, 1.0, size=9)
    expected = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    ).pvalue
    p, drawn = sign_flip_p(d)
    assert drawn is None and p == pytest.approx(expected, rel=1e-9)


def test_sign_flip_counts_ties_and_never_reaches_zero():
    p, _ = sign_flip_p(np.ones(5))  # every pattern but two has a smaller |mean|: 2 of 32
    assert p == pytest.approx(2 / 32)
    p, drawn = sign_flip_p(np.full(40, 3.0), n_resamples=500)
    assert drawn == 500 and p == pytest.approx(1 / 501)


def test_tango_interval_matches_the_published_example_and_a_numerical_score_inversion():
    """Fagerland, Lydersen & Laake (2014, Stat. Methods Med. Res. 23, Table 7): airway
    hyper-responsiveness before/after transplant, (a, b, c, d) = (1, 1, 7, 12), Tango
    -0.517 to -0.026 (plain Tango). And at other tables: the bounds where the score
    statistic, its variance times n/(n - 1) and its constrained MLE found numerically
    (scipy), less Laud's skewness term μ₃(z² − 1)/(6V^{3/2}) (μ₃ the third central moment
    of the paired difference under that MLE, taken here from the cells' probabilities), equals ±z."""
    from scipy.optimize import brentq, minimize_scalar

    diff, low, high = tango_interval(1, 7, 21, bias_correction=False, skewness_correction=False)
    assert diff == pytest.approx(-6 / 21) and (low, high) == pytest.approx((-0.517, -0.026), abs=5e-4)
    z = stats.norm.ppf(0.975)

    def score(delta, b, c, n, offset, skew):
        def nll(p21):  # cells (p12, p21, rest) with p12 = p21 + delta
            p12, rest = p21 + delta, 1 - 2 * p21 - delta
            return -(b * np.log(p12) + c * np.log(p21) + (n - b - c) * np.log(rest))

        p21 = minimize_scalar(
            nll, bounds=(max(0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12), method="bounded", options={"xatol": 1e-12}
        ).x
        variance = n / (n - 1) * n * (2 * p21 + delta * (1 - delta))
        values, probabilities = np.array([1.0, -1.0, 0.0]), np.array([p21 + delta, p21, 1 - 2 * p21 - delta])
        third = n * float(probabilities @ (values - delta) ** 3)
        correction = third * (z * z - 1) / (6 * variance**1.5) if skew else 0.0
        return (b - c - n * delta) / np.sqrt(variance) - correction + offset

    for b, c, n in ((5, 2, 30), (12, 3, 40), (3, 9, 25), (20, 18, 200), (14, 0, 15)):
        for skew in (True, False):
            _, low, high = tango_interval(b, c, n, skewness_correction=skew)
            assert low == pytest.approx(brentq(score, -0.999, (b - c) / n, args=(b, c, n, -z, skew)), abs=1e-6)
            expected_high = 1.0 if c == 0 and b == n - 1 and score(0.999, b, c, n, z, skew) > 0 else None
            if expected_high is None:
                expected_high = brentq(score, (b - c) / n, 0.999, args=(b, c, n, z, skew))
            assert high == pytest.approx(expected_high, abs=1e-6)


def test_tango_interval_has_width_at_zero_discordance_and_reaches_the_bounds():
    kz2 = 100 / 99 * stats.norm.ppf(0.975) ** 2
    diff, low, high = tango_interval(0, 0, 100, skewness_correction=False)
    assert diff == 0 and (low, high) == pytest.approx((-kz2 / (100 + kz2), kz2 / (100 + kz2)), rel=1e-9)
    _, low_skew, high_skew = tango_interval(0, 0, 100)  # the skewness term narrows it, never to a point
    assert low_skew == pytest.approx(-high_skew) and 0 < high_skew < high
    assert tango_interval(10, 0, 10)[2] == 1.0 and tango_interval(0, 10, 10)[1] == -1.0
    assert np.isnan(tango_interval(1, 0, 1)[1]) and all(np.isnan(tango_interval(0, 0, 0)))
    with pytest.raises(ValueError, match="at most n"):
        tango_interval(3, 3, 5)


def test_adjusted_mean_interval_adds_z_squared_over_two_pseudo_pairs_at_each_bound():
    d = np.r_[np.ones(7), -np.ones(2), np.zeros(21)]  # b = 7, c = 2, n = 30
    mean, low, high = adjusted_mean_interval(d, bound=1.0)
    w = stats.norm.ppf(0.975) ** 2 / 2  # 1.92 pseudo-pairs at +1 and at -1, one at 0
    m = 30 + 2 * w + 1
    centre = (7 + w - 2 - w) / m
    half = t_quantile(0.975, 29) * np.sqrt(((7 + w + 2 + w) / m - centre**2) / m)
    assert mean == pytest.approx(5 / 30) and (low, high) == pytest.approx((centre - half, centre + half))
    # scale-free: differences of 0-100 scores with bound 100 give 100 times those of 0-1 scores
    assert np.allclose(adjusted_mean_interval(100 * d, bound=100.0), 100 * np.array((mean, low, high)))


def test_adjusted_mean_interval_no_spread_few_pairs_and_bad_input():
    assert np.isnan(adjusted_mean_interval(np.full(40, 0.2), bound=1.0)[1])  # no spread: no interval
    mean, low, high = adjusted_mean_interval(np.r_[np.full(8, 0.1), -0.1], bound=1.0)  # 9 < 10 pairs
    assert mean == pytest.approx(0.7 / 9) and np.isnan(low) and np.isnan(high)
    _, low, high = adjusted_mean_interval(np.r_[np.ones(29), 0.0], bound=1.0)
    assert high == 1.0 and low < 1.0  # clipped to the range
    with pytest.raises(ValueError, match="exceeds the bound"):
        adjusted_mean_interval(np.r_[np.zeros(20), 1.5], bound=1.0)
    with pytest.raises(ValueError, match="finite"):
        adjusted_mean_interval(np.r_[np.zeros(20), np.nan], bound=1.0)


def test_paired_difference_of_graded_scores_uses_a_sign_flip_p():
    rng = np.random.default_rng(8)
    x, y = rng.random(12), 0.8 * rng.random(12)
    out = paired_difference(x, y, proportion=False)
    reference = stats.permutation_test(
        (x - y,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue
    assert out["paired_test"].startswith("sign-flip (exact)") and out["p_paired"] == pytest.approx(reference)
    assert (out["difference_low"], out["difference_high"]) == pytest.approx(
        adjusted_mean_interval(x - y, bound=1.0)[1:], nan_ok=True
    )
    x, y = rng.random(40), rng.random(40)
    out = paired_difference(x, y, proportion=False, n_resamples=4999)
    reference = stats.permutation_test(
        (x - y,), np.mean, permutation_type="samples", n_resamples=9999, random_state=1
    ).pvalue
    assert out["p_paired"] >= 1 / 5000 and abs(out["p_paired"] - reference) < 0.03
    with pytest.raises(ValueError, match="must lie in"):
        paired_difference(100 * x, 100 * y, proportion=False)
    with pytest.raises(ValueError, match="NaN"):
        paired_difference(np.array([0.1, np.nan]), np.array([0.2, 0.3]), proportion=False)


def test_paired_difference_of_proportions_is_paired():
    a = np.array([1, 1, 1, 0, 1, 1, 0, 1, 1, 1] * 3, dtype=float)
    b = np.array([1, 0, 1, 0, 0, 1, 0, 1, 0, 1] * 3, dtype=float)
    out = paired_difference(a, b, proportion=True)
    assert out["difference"] == pytest.approx(0.3) and out["n_pairs"] == 30
    assert out["p_paired"] == pytest.approx(mcnemar_exact(9, 0)) and out["difference_low"] > 0
    assert (out["difference_low"], out["difference_high"]) == pytest.approx(tango_interval(9, 0, 30)[1:])


def test_pair_on_ids_joins_and_refuses_repeats():
    ids, x, y = pair_on_ids(["a", "b", "c"], [1, 0, 1], ["c", "a", "z"], [0, 1, 1])
    assert ids == ["a", "c"] and list(x) == [1, 1] and list(y) == [1, 0]
    with pytest.raises(ValueError, match="repeats an item id"):
        pair_on_ids(["a", "a"], [1, 0], ["a"], [1])


def test_best_only_where_paired_tests_say_so():
    rng = np.random.default_rng(0)
    ids = list(range(200))
    base = (rng.random(200) < 0.3).astype(float)
    strong = np.where(rng.random(200) < 0.5, 1.0, base)  # ~65%: beats both others
    weak = np.where(rng.random(200) < 0.05, 1.0, base)
    assert best_by_paired_tests([ids] * 3, [base, strong, weak], higher_is_better=True, proportion=True) == 1
    # a method as good as another: no best
    assert best_by_paired_tests([ids] * 2, [strong, strong.copy()], higher_is_better=True, proportion=True) is None


def test_paired_difference_reports_its_test():
    x, y = np.arange(1, 21) / 21, np.arange(20) / 21
    result = paired_difference(x, y, proportion=False, n_resamples=999)
    assert result["n_pairs"] == 20 and result["difference"] == pytest.approx(1 / 21)
    assert result["paired_test"] == "sign-flip (999 patterns); adjusted t CI"
    assert np.isnan(result["difference_low"])  # every difference equal: no spread, no interval

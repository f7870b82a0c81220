"""The shared estimators against reference implementations and simulations
with a known truth (README, Statistics)."""

import math

import numpy as np
import pytest
from scipy.stats import kendalltau, permutation_test, spearmanr

from conflictlab.report.tables import format_estimate
from conflictlab.rank_tests import rank_agreement, stratified_kendall
from conflictlab.stats import balance, bootstrap_mean_ci, marks_over_same_samples, proportion_ci, wilson_interval


@pytest.mark.parametrize("n", [2, 3, 7, 30, 228])
def test_wilson_matches_statsmodels(n):
    proportion_confint = pytest.importorskip(
        "statsmodels.stats.proportion", reason="statsmodels is a test dependency (pyproject [test])"
    ).proportion_confint
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        p, low, high = wilson_interval(k, n)
        ref_low, ref_high = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert p == pytest.approx(k / n)
        assert (low, high) == pytest.approx((ref_low, ref_high), abs=1e-12)
        assert low <= p <= high


def test_wilson_no_interval_below_two():
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    p, low, high = wilson_interval(1, 1)
    assert p == 1.0 and math.isnan(low) and math.isnan(high)
    # not degenerate at the boundary, where the percentile bootstrap collapses
    p, low, high = wilson_interval(10, 10)
    assert p == 1.0 and high == 1.0 and low < 0.75
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="0/1"):
        proportion_ci([0.5, 1.0])


@pytest.mark.parametrize("n,truth", [(40, 0.3), (100, 0.9)])
def test_wilson_coverage_near_nominal(n, truth):
    rng = np.random.default_rng(1)
    hits = 0
    trials = 4000
    for k in rng.binomial(n, truth, size=trials):
        _, low, high = wilson_interval(int(k), n)
        hits += low <= truth <= high
    assert abs(hits / trials - 0.95) <= 0.03


def test_bootstrap_no_interval_below_two_and_coverage():
    mean, low, high = bootstrap_mean_ci(np.array([0.4]))
    assert mean == 0.4 and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in bootstrap_mean_ci(np.array([])))
    rng = np.random.default_rng(2)
    truth, trials, hits = 2 / 7, 2000, 0  # mean of Beta(2, 5)
    for seed in range(trials):
        values = rng.beta(2, 5, size=60)
        _, low, high = bootstrap_mean_ci(values, n_resamples=500, seed=seed)
        hits += low <= truth <= high
    assert abs(hits / trials - 0.95) <= 0.03


def test_rank_agreement_exact_at_small_n():
    # n = 3, perfect agreement: 2 of the 3! orderings are as extreme, p = 1/3
    # (the t approximation of Spearman's p says 0)
    out = rank_agreement([1, 2, 3], [10, 20, 30])
    assert out["spearman_rho"] == pytest.approx(1.0) and out["kendall_tau"] == pytest.approx(1.0)
    assert out["spearman_p"] == pytest.approx(1 / 3) and out["kendall_p"] == pytest.approx(1 / 3)
    assert out["p_method"] == "exact" and out["p_floor"] == pytest.approx(1 / 3)
    assert spearmanr([1, 2, 3], [10, 20, 30]).pvalue < 1e-6


def test_rank_agreement_matches_scipy_exact():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=7), rng.normal(size=7)
    y = 0.6 * x + y
    out = rank_agreement(x, y)
    assert out["kendall_p"] == pytest.approx(kendalltau(x, y, method="exact").pvalue, abs=1e-12)
    # one sample permuted against the fixed other: the n! pairings (scipy's documented form)
    reference = permutation_test((x,), lambda a: spearmanr(a, y).statistic, permutation_type="pairings",
                                 n_resamples=np.inf, alternative="two-sided")
    assert out["spearman_p"] == pytest.approx(reference.pvalue, abs=1e-9)


def test_rank_agreement_exact_with_ties_matches_permutation():
    x = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 4.0])
    y = np.array([0.1, 0.3, 0.2, 0.2, 0.5, 0.4])
    out = rank_agreement(x, y)
    for key, stat in (("kendall_p", lambda a: kendalltau(a, y).statistic),
                      ("spearman_p", lambda a: spearmanr(a, y).statistic)):
        reference = permutation_test((x,), stat, permutation_type="pairings", n_resamples=np.inf, alternative="two-sided")
        assert out[key] == pytest.approx(reference.pvalue, abs=1e-9)


def test_rank_agreement_large_n_asymptotic_and_degenerate():
    rng = np.random.default_rng(4)
    x = rng.normal(size=25)
    y = x + rng.normal(size=25)
    out = rank_agreement(x, y)
    assert out["p_method"] == "asymptotic"
    assert out["spearman_p"] == pytest.approx(spearmanr(x, y).pvalue)
    assert math.isnan(rank_agreement([1, 2], [1, 2])["kendall_tau"])
    assert math.isnan(rank_agreement([1, 1, 1], [1, 2, 3])["spearman_p"])


def test_format_estimate():
    assert format_estimate(0.625, 0.481, 0.752) == "62.5 [48.1, 75.2]"
    assert format_estimate(1.0, math.nan, math.nan) == "100.0"
    assert format_estimate(None) == ""
    assert format_estimate(0.4123, 0.3, 0.5, scale=1, decimals=3) == "0.412 [0.300, 0.500]"


def test_marks_only_over_same_samples_with_enough_n():
    same = frozenset(range(40))
    marks, why = marks_over_same_samples([0.5, 0.7, 0.6], [same] * 3, [40] * 3, higher_is_better=True)
    assert marks == ["", "best", "second"] and why == ""
    marks, why = marks_over_same_samples([0.5, 0.7, 0.6], [same] * 3, [40] * 3, higher_is_better=False)
    assert marks == ["best", "", "second"]
    marks, why = marks_over_same_samples([0.5, 0.7], [same, frozenset(range(39))], [40, 39], higher_is_better=True)
    assert marks == ["", ""] and why == "cells cover different samples"
    marks, why = marks_over_same_samples([0.5, 0.7], [same] * 2, [40] * 2, higher_is_better=True, min_n=50)
    assert marks == ["", ""] and why == "n < 50"
    # displayed ties share a mark; NaN gets none
    marks, _ = marks_over_same_samples([0.7001, 0.7002, math.nan, 0.2], [same] * 4, [40] * 4, higher_is_better=True)
    assert marks == ["best", "best", "", "second"]


def test_stratified_kendall_is_tau_b_with_one_stratum():
    x = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0])
    y = np.array([0.1, 0.3, 0.2, 0.2, 0.5, 0.4, 0.9])
    out = stratified_kendall(x, y, ["a"] * 7, n_permutations=4999)
    assert out["tau"] == pytest.approx(kendalltau(x, y).statistic)
    exact = rank_agreement(x, y)["kendall_p"]
    assert abs(out["p"] - exact) < 0.02  # Monte Carlo error of 4,999 permutations
    assert out["p"] >= out["p_floor"] and out["n"] == 7 and out["n_pairs"] == 21


def test_stratified_kendall_ignores_a_type_effect():
    # two types far apart on both scores, no agreement within a type: the
    # pooled tau is large, the within-type tau is not, and its test holds its size
    rng = np.random.default_rng(5)
    rejections, trials = 0, 400
    for trial in range(trials):
        strata = np.repeat([0, 1], 8)
        x = rng.normal(size=16) + 5 * strata
        y = rng.normal(size=16) + 5 * strata
        out = stratified_kendall(x, y, strata, n_permutations=199, seed=trial)
        rejections += out["p"] <= 0.05
        if trial == 0:
            assert kendalltau(x, y).statistic > 0.4 and abs(out["tau"]) < 0.4
    assert abs(rejections / trials - 0.05) <= 0.03


def test_balance_extremes_and_paper_gini():
    equal = balance(np.array([0.2, 0.2, 0.2, 0.2]))
    assert equal.balance == pytest.approx(0.0) and equal.gini == pytest.approx(0.0)
    single = balance(np.array([0.0, 1.3, -0.4]))
    assert single.balance == pytest.approx(1.0)
    assert single.gini == pytest.approx(2 / 3)  # the paper code's unnormalised maximum (n-1)/n
    assert np.allclose(single.shares, [0, 1, 0])
    mid = balance(np.array([1.0, 3.0]))
    assert mid.balance == pytest.approx(0.5)  # shares 0.25/0.75: n/(n-1) * (1/n) * (0.75 - 0.25)


def test_balance_undefined_when_no_positive_contribution():
    result = balance(np.array([-0.1, 0.0, -2.0]))
    assert result.undefined
    assert math.isnan(result.balance) and np.isnan(result.shares).all()


@pytest.mark.parametrize("n", [2, 3, 5, 12])
def test_gini_and_balance_match_two_independent_forms_and_a_closed_form(n):
    rng = np.random.default_rng(n)
    checked = 0
    for phi in rng.normal(size=(60, n)):
        if (phi <= 0).all():
            assert balance(phi).undefined
            continue
        result = balance(phi)
        p = np.clip(phi, 0.0, None) / np.clip(phi, 0.0, None).sum()
        # Gini's mean difference: sum_i sum_j |p_i - p_j| / (2 n^2 mean(p)), mean(p) = 1/n
        mean_difference = np.abs(p[:, None] - p[None, :]).sum() / (2 * n)
        # one minus twice the area under the Lorenz curve (exact for its polygon)
        lorenz = np.concatenate([[0.0], np.cumsum(np.sort(p))])
        area = ((lorenz[1:] + lorenz[:-1]) / 2).sum() / n
        assert result.gini == pytest.approx(mean_difference, abs=1e-12)
        assert result.gini == pytest.approx(1.0 - 2.0 * area, abs=1e-12)
        assert result.balance == pytest.approx(result.gini * n / (n - 1), abs=1e-12)
        assert 0.0 <= result.balance <= 1.0 + 1e-12 and result.shares.sum() == pytest.approx(1.0)
        checked += 1
    assert checked > 40
    for k in range(1, n + 1):  # k pieces share everything evenly: Gini (n-k)/n, Balance (n-k)/(n-1)
        result = balance(np.array([2.0] * k + [-0.5] * (n - k)))
        assert result.gini == pytest.approx((n - k) / n) and result.balance == pytest.approx((n - k) / (n - 1))
    with pytest.raises(ValueError, match="two"):
        balance(np.array([1.0]))


def test_mean_ci_bootstraps_below_normal_from_and_is_normal_from_there_on():
    from conflictlab.stats import NORMAL_FROM, mean_ci, normal_mean_ci

    rng = np.random.default_rng(3)
    for n in (2, 17, NORMAL_FROM - 1):
        values = rng.exponential(size=n)
        assert mean_ci(values, n_resamples=300, seed=n) == bootstrap_mean_ci(values, n_resamples=300, seed=n)
    values = rng.exponential(size=NORMAL_FROM)
    mean, low, high = mean_ci(values, n_resamples=300, seed=1)
    assert (mean, low, high) == normal_mean_ci(values)
    half = 1.959963984540054 * values.std(ddof=1) / math.sqrt(values.size)
    assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half), rel=1e-12)
    for implementation in (mean_ci, normal_mean_ci):
        assert all(math.isnan(v) for v in implementation(np.array([])))
        m, lo, hi = implementation(np.array([0.7]))
        assert m == 0.7 and math.isnan(lo) and math.isnan(hi)


def test_normal_interval_at_normal_from_is_scipys_percentile_bootstrap_within_its_noise():
    from scipy.stats import bootstrap

    from conflictlab.stats import NORMAL_FROM, mean_ci

    # skewness 2, twice the entropies' (benchmarks/conflictbank_metrics.py): the ends differ most
    values = np.random.default_rng(4).exponential(size=NORMAL_FROM)
    mean, low, high = mean_ci(values)
    reference = bootstrap((values,), np.mean, n_resamples=10_000, batch=500, method="percentile", random_state=5).confidence_interval
    half = (reference.high - reference.low) / 2
    # 10,000 resamples: each end's Monte-Carlo error is ~1.4% of the half-width, the skewness term 0.7%
    assert abs(low - reference.low) <= 0.05 * half and abs(high - reference.high) <= 0.05 * half


def test_normal_interval_coverage_at_normal_from():
    from conflictlab.stats import NORMAL_FROM, mean_ci

    rng = np.random.default_rng(6)
    trials, hits = 2000, 0
    for _ in range(trials):
        values = rng.exponential(size=NORMAL_FROM)  # truth: mean 1
        _, low, high = mean_ci(values)
        hits += low <= 1.0 <= high
    assert abs(hits / trials - 0.95) <= 0.03


@pytest.mark.parametrize("block", [1, 4, 64])
def test_within_stratum_sums_are_the_pair_sign_sums_with_ties(block):
    from conflictlab.rank_tests import _within_sums

    rng = np.random.default_rng(block)
    for m in (2, 9, 40, 120):
        x = rng.integers(0, 6, m).astype(float)  # ties in x, some straddling a block's end
        x[: m // 2] = 2.0  # a run of equal x longer than a block
        ranks = np.stack([rng.integers(0, 4, m) for _ in range(5)]).astype(np.int32)  # ties in y
        upper = np.triu_indices(m, 1)
        direct = (np.sign(x[:, None] - x[None, :])[upper] * np.sign(ranks[:, :, None] - ranks[:, None, :])[:, upper[0], upper[1]]).sum(axis=1)
        np.testing.assert_array_equal(_within_sums(x, ranks, block=block), direct)

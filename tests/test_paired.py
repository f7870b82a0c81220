"""conflictlab.paired: each estimator against statsmodels/scipy, and the coverage of its interval by simulation."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from conflictlab.paired import (
    best_by_paired_tests,
    format_p,
    holm,
    mcnemar_exact_p,
    pair_on_ids,
    paired_difference,
    paired_mean_ci,
    paired_proportion_ci,
    sign_flip_p,
)


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
        assert mcnemar_exact_p(x, y) == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_mcnemar_p_never_underflows_to_zero():
    assert 0 < mcnemar_exact_p(np.ones(5000), np.zeros(5000)) < 1e-300


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


def test_t_interval_matches_scipy_ttest_rel():
    rng = np.random.default_rng(5)
    x, y = rng.normal(1, 1, 12), rng.normal(0, 1, 12)
    ci = stats.ttest_rel(x, y).confidence_interval(0.95)
    diff, low, high = paired_mean_ci(x, y)
    assert (diff, low, high) == pytest.approx((np.mean(x - y), ci.low, ci.high))


def test_no_spread_gives_no_interval():
    diff, low, high = paired_mean_ci([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    assert diff == 2.0 and np.isnan(low) and np.isnan(high)


def test_paired_proportion_interval_contains_difference_and_stays_in_bounds():
    x, y = np.array([1, 1, 1, 1, 0, 1.0]), np.array([0, 0, 0, 0, 0, 0.0])
    diff, low, high = paired_proportion_ci(x, y)
    assert diff == pytest.approx(5 / 6) and -1 <= low < diff < high <= 1


@pytest.mark.parametrize(
    "cells", [(0.4, 0.1, 0.1, 0.4), (0.7, 0.15, 0.05, 0.1), (0.2, 0.05, 0.25, 0.5), (0.85, 0.05, 0.05, 0.05)]
)
@pytest.mark.parametrize("n", [5, 10, 30, 100])
def test_paired_proportion_interval_covers(cells, n):
    """Newcombe's paired interval (continuity-corrected phi) covers the true
    difference at >= 93% at every n from PAIRED_MIN_N up (the uncorrected one fell to 0.92)."""
    rng = np.random.default_rng(n)
    truth, reps, covered = cells[1] - cells[2], 1500, 0
    for _ in range(reps):
        _, low, high = paired_proportion_ci(*_pairs(rng, n, cells))
        covered += low - 1e-12 <= truth <= high + 1e-12
    assert covered / reps >= 0.93


@pytest.mark.parametrize("shape", ["balance", "rating"])
@pytest.mark.parametrize("n", [10, 30, 100])
def test_paired_mean_interval_covers(shape, n):
    """The t interval of a paired mean difference on data shaped like ours:
    Balance-like Beta mixtures on 0-100 and 1-5 ratings, 40% of items changed
    by the method (skewed, partly zero differences), a shifted truth."""
    rng = np.random.default_rng(n)

    def draw(size):
        if shape == "balance":
            return np.where(rng.random(size) < 0.3, 100 * rng.beta(0.5, 8, size), 100 * rng.beta(2, 3, size))
        return rng.choice([1, 2, 3, 4, 5], size=size, p=[0.05, 0.1, 0.2, 0.35, 0.3]).astype(float)

    shift = 5.0 if shape == "balance" else 0.3
    truth = -0.4 * shift  # E[x − y]: 40% of items redrawn from the same law and shifted down
    reps, covered, shown = 1500, 0, 0
    for _ in range(reps):
        y = draw(n)
        x = np.where(rng.random(n) < 0.4, draw(n) - shift, y)
        _, low, high = paired_mean_ci(x, y)
        if np.isnan(low):  # no spread: no interval printed
            continue
        shown += 1
        covered += low <= truth <= high
    assert covered / shown >= 0.93


def test_pair_on_ids_joins_and_refuses_repeats():
    ids, x, y = pair_on_ids(["a", "b", "c"], [1, 0, 1], ["c", "a", "z"], [0, 1, 1])
    assert ids == ["a", "c"] and list(x) == [1, 1] and list(y) == [1, 0]
    with pytest.raises(ValueError, match="repeats an item id"):
        pair_on_ids(["a", "a"], [1, 0], ["a"], [1])


def test_format_p_never_zero_two_significant_digits():
    assert format_p(0.0) == "< 1e-4" and format_p(3e-7) == "< 1e-4"
    assert format_p(0.0123) == "0.012" and format_p(0.5) == "0.50" and format_p(1.0) == "1.0"
    assert format_p(2 * 0.5**10) == "0.0020"
    assert format_p(None) == "" and format_p(float("nan")) == ""


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
    x, y = np.arange(20.0), np.arange(20.0) - 1
    result = paired_difference(x, y, proportion=False, n_resamples=999)
    assert (
        result["n_pairs"] == 20 and result["difference"] == 1.0 and result["paired_test"].startswith("sign-flip (999")
    )

"""Coverage of every interval method a table prints, at every n it is printed
at, on data shaped like ours (docs/statistics.md has the measured table).

Each test asserts coverage >= 93% for nominal 95% intervals. Proportions and
paired proportions are computed exactly (every outcome weighted by its
probability); means and κ by simulation with a fixed seed.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

from conflictlab.judges.gold import MIN_N_ITEMS_BOOTSTRAP
from conflictlab.stats import (
    MIN_N_MEAN,
    agresti_min_interval,
    cluster_bootstrap_weights,
    mean_interval,
    percentile_interval,
    proportion_interval,
    t_quantile,
    unit_proportion_interval,
)

FLOOR = 0.93
PROPORTION_NS = (2, 3, 4, 5, 7, 10, 15, 20, 25, 30, 35, 40, 50, 75, 100, 150, 200)
PROBABILITIES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.98)
MEAN_NS = (MIN_N_MEAN, 40, 50, 75, 100, 200)


def test_proportion_interval_covers_at_every_n_and_p():
    worst = {}
    for n in PROPORTION_NS:
        bounds = np.array([proportion_interval(k, n)[1:] for k in range(n + 1)])  # (n + 1, 2), one per outcome
        for p in PROBABILITIES:
            covers = (bounds[:, 0] <= p) & (p <= bounds[:, 1])
            worst[n, p] = float(binom.pmf(np.arange(n + 1), n, p)[covers].sum())
    assert min(worst.values()) >= FLOOR, min(worst.items(), key=lambda item: item[1])


def _beta_mix(w, a1, b1, a2, b2):
    """A Balance-like score on 0-100: a mixture of two Betas."""

    def draw(rng, shape):
        first = rng.random(shape) < w
        return 100 * np.where(first, rng.beta(a1, b1, shape), rng.beta(a2, b2, shape))

    return draw, 100 * (w * a1 / (a1 + b1) + (1 - w) * a2 / (a2 + b2)), (0.0, 100.0)


def _pooled(values):
    """A score drawn from a large pool of its values (its mean is the truth)."""

    def draw(rng, shape):
        return values[rng.integers(0, values.size, size=shape)]

    return draw, float(values.mean()), (float(values.min()), float(values.max()))


def _rating_balance(probabilities, pieces, rng):
    """Balance (0-100) of ``pieces`` ratings 1-5 each (mass rating - 1), undefined samples left out, as Table 7."""
    ratings = rng.choice(5, size=(400_000, pieces), p=probabilities).astype(float)  # rating - 1
    ratings = ratings[ratings.sum(axis=1) > 0]  # every rating 1: Balance undefined, left out as Table 7 does
    shares = np.sort(ratings / ratings.sum(axis=1, keepdims=True), axis=1)
    ranks = np.arange(1, pieces + 1)
    balance = ((2 * ranks - pieces - 1) * shares).sum(axis=1) / (pieces - 1)
    return balance * 100


def _faithfulness(a, b, rng):
    """Share of a response's 1-6 statements supported, each response with its own support rate ~ Beta(a, b)."""
    statements = rng.integers(1, 7, size=400_000)
    return rng.binomial(statements, rng.beta(a, b, size=statements.size)) / statements


def _paired_balance_difference(rng):
    """One item's Balance (0-100) under method A minus under method B: correlated through the item."""
    item = rng.beta(2, 3, size=400_000)
    return 100 * (
        np.clip(item + rng.normal(0.05, 0.1, item.size), 0, 1) - np.clip(item + rng.normal(0, 0.1, item.size), 0, 1)
    )


def _both_orders(p_first, p_last, same, rng):
    """An instance's mean over its two evidence orders (0, 0.5 or 1): correlated answers."""
    first = rng.random(400_000) < p_first
    last = np.where(rng.random(first.size) < same, first, rng.random(first.size) < p_last)
    return (first.astype(float) + last) / 2.0


def _mean_shapes():
    rng = np.random.default_rng(11)
    return {
        "Beta mix .5 B(2,5) + .5 B(5,2)": _beta_mix(0.5, 2, 5, 5, 2),
        "Beta mix .7 B(1,8) + .3 B(8,1)": _beta_mix(0.7, 1, 8, 8, 1),
        "Beta(.5,.5)": _beta_mix(1.0, 0.5, 0.5, 1, 1),
        "Beta mix .8 B(2,8) + .2 B(9,1)": _beta_mix(0.8, 2, 8, 9, 1),
        "Balance of 3 ratings 1-5, uniform": _pooled(_rating_balance([0.2] * 5, 3, rng)),
        "Balance of 3 ratings 1-5, skewed": _pooled(_rating_balance([0.05, 0.05, 0.1, 0.2, 0.6], 3, rng)),
        "Balance of 2 ratings 1-5, skewed": _pooled(_rating_balance([0.4, 0.3, 0.15, 0.1, 0.05], 2, rng)),
        "Faithfulness, support ~ B(4,2)": _pooled(_faithfulness(4, 2, rng)),
        "Faithfulness, support ~ B(1,1)": _pooled(_faithfulness(1, 1, rng)),
        "paired difference of Balance, same items": _pooled(_paired_balance_difference(rng)),
    }


def mean_coverage(draw, truth, bounds, n, *, trials=20_000, seed=0, min_n=MIN_N_MEAN):
    """Coverage of :func:`mean_interval` at ``n``: vectorised over ``trials``
    samples with the library's t quantile (a sample without spread has no
    interval and counts as a miss); the first 50 checked against the function."""
    values = draw(np.random.default_rng(seed), (trials, n))
    mean, spread = values.mean(axis=1), values.std(axis=1, ddof=1)
    half = t_quantile(0.975, n - 1) * spread / math.sqrt(n)
    low, high = np.maximum(mean - half, bounds[0]), np.minimum(mean + half, bounds[1])
    flat = spread <= 1e-12 * np.maximum(1.0, np.abs(mean))
    low[flat], high[flat] = np.nan, np.nan
    for row in range(50):
        expected = mean_interval(values[row], bounds=bounds, min_n=min_n)
        assert np.allclose((low[row], high[row]), expected[1:], equal_nan=True, rtol=1e-12)
    return float(((low <= truth) & (truth <= high)).mean())


def test_mean_interval_covers_from_its_minimum_n_on_every_score_shape():
    coverage = {(name, n): mean_coverage(*shape, n) for name, shape in _mean_shapes().items() for n in MEAN_NS}
    assert min(coverage.values()) >= FLOOR, min(coverage.items(), key=lambda item: item[1])


def test_below_its_minimum_n_the_mean_interval_would_undercover():
    """Why no interval is printed below MIN_N_MEAN: at n = 10 some shape of ours falls short."""
    shapes = _mean_shapes()
    assert min(mean_coverage(*shapes[name], 10, min_n=10) for name in shapes) < FLOOR


def test_unit_proportion_interval_covers_instances_asked_in_both_orders():
    """Accuracy with the instance as the unit (the mean of its two orders), near 50% and near the bounds."""
    rng = np.random.default_rng(5)
    for p_first, p_last, same in (
        (0.6, 0.5, 0.7),
        (0.9, 0.85, 0.8),
        (0.95, 0.95, 0.5),
        (0.5, 0.5, 0.95),
        (0.98, 0.9, 0.3),
        (0.1, 0.2, 0.6),
    ):
        pool = _both_orders(p_first, p_last, same, rng)
        truth = (p_first + same * p_first + (1 - same) * p_last) / 2
        for n in (2, 5, 10, 20, 30, 40, 75, 150):
            sums = pool[rng.integers(0, pool.size, size=(4000, n))].sum(axis=1)
            totals, counts = np.unique(sums, return_counts=True)  # the interval depends on the sum only
            covered = 0
            for total, count in zip(totals, counts):
                shares = np.r_[np.ones(int(total)), [total % 1] if total % 1 else []]
                _, low, high = unit_proportion_interval(np.r_[shares, np.zeros(n - shares.size)])
                covered += count * (low <= truth <= high)
            assert covered / 4000 >= FLOOR, (p_first, p_last, same, n, covered / 4000)


@pytest.mark.parametrize("n", [2, 5, 10, 20, 30, 50, 100])
def test_paired_proportion_difference_covers_exactly(n):
    """Agresti-Min over every (b, c) outcome, weighted by its multinomial probability."""
    from scipy.stats import multinomial

    for p_first, p_last, same in (
        (0.6, 0.5, 0.7),
        (0.9, 0.8, 0.8),
        (0.5, 0.5, 0.9),
        (0.3, 0.5, 0.5),
        (0.95, 0.95, 0.95),
    ):
        # cells: right only under the first, right only under the last, the rest
        only_first = (1 - same) * p_first * (1 - p_last)
        only_last = (1 - same) * (1 - p_first) * p_last
        truth = only_first - only_last
        covered = 0.0
        for b in range(n + 1):
            for c in range(n + 1 - b):
                _, low, high = agresti_min_interval(b, c, n)
                if low <= truth <= high:
                    covered += multinomial.pmf(
                        [b, c, n - b - c], n, [only_first, only_last, 1 - only_first - only_last]
                    )
        assert covered >= FLOOR, (n, p_first, p_last, same, covered)


@pytest.mark.slow  # ~1 min on 2 cores: 1,000 data sets x 1,000 resamples per case
@pytest.mark.parametrize("n", [100, 150])
def test_kappa_bootstrap_covers_from_its_minimum_n(n):
    from conflictlab.judges.ratings import MIN_N_KAPPA, cohen_kappa_interval

    assert n >= MIN_N_KAPPA
    rng = np.random.default_rng(n)

    def binary(gold, agree):
        return np.array([[(1 - gold) * agree, (1 - gold) * (1 - agree)], [gold * (1 - agree), gold * agree]])  # noqa: E731

    three = np.full((3, 3), 0.3 / 6) + np.eye(3) * (0.7 / 3 - 0.3 / 6)
    for joint in (binary(0.6, 0.8), binary(0.3, 0.9), three):
        k = joint.shape[0]
        truth = (np.trace(joint) - joint.sum(1) @ joint.sum(0)) / (1 - joint.sum(1) @ joint.sum(0))
        hits = 0
        for _ in range(1000):
            cells = rng.choice(k * k, size=n, p=joint.ravel())
            _, low, high = cohen_kappa_interval(
                cells // k, cells % k, n_resamples=1000, seed=int(rng.integers(1 << 30))
            )
            hits += low <= truth <= high
        assert hits / 1000 >= FLOOR, (joint.tolist(), hits / 1000)


@pytest.mark.slow  # ~30 s: 1,000 gold sets x 2,000 item resamples
@pytest.mark.parametrize("n_items", [MIN_N_ITEMS_BOOTSTRAP, 100])
def test_item_bootstrap_of_multi_label_agreement_covers(n_items):
    """Gold items with 2-5 labels each (a rating per evidence piece), the judge's agreement varying by item."""
    rng = np.random.default_rng(n_items)
    labels = rng.integers(2, 6, size=200_000)
    rates = rng.beta(6, 2, size=labels.size)
    truth = float((labels * rates).sum() / labels.sum())  # the share of labels agreed, over the item population
    hits = 0
    for _ in range(1000):
        items = rng.integers(0, labels.size, size=n_items)
        sizes = labels[items]
        agrees = (rng.random(sizes.sum()) < np.repeat(rates[items], sizes)).astype(float)
        weights = cluster_bootstrap_weights(
            np.repeat(np.arange(n_items), sizes).tolist(), seed=int(rng.integers(1 << 30))
        )
        low, high = percentile_interval((weights @ agrees) / weights.sum(axis=1))
        hits += low <= truth <= high
    assert hits / 1000 >= FLOOR, hits / 1000

"""Coverage of every interval method a table prints, at every n it is printed
at, on data shaped like ours (docs/statistics.md has the measured table).

Each test asserts coverage >= 93% for nominal 95% intervals. Proportions and
paired proportions are computed exactly (every outcome weighted by its
probability); means, paired means and κ by simulation with a fixed seed.
benchmarks/coverage_table.py prints the table of docs/statistics.md from the
functions here.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

from conflictlab.judges.gold import MIN_N_ITEMS_BOOTSTRAP
from conflictlab.paired import PAIRED_MIN_N, adjusted_mean_interval, tango_interval
from conflictlab.stats import (
    MIN_N_MEAN,
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


def proportion_coverage(interval, n):
    """Worst exact coverage of ``interval(k, n) -> (p, low, high)`` over :data:`PROBABILITIES` at ``n``, and its p."""
    bounds = np.array([interval(k, n)[1:] for k in range(n + 1)])  # (n + 1, 2), one per outcome
    coverage = [
        float(binom.pmf(np.arange(n + 1), n, p)[(bounds[:, 0] <= p) & (p <= bounds[:, 1])].sum()) for p in PROBABILITIES
    ]
    return min(coverage), PROBABILITIES[int(np.argmin(coverage))]


def test_proportion_interval_covers_at_every_n_and_p():
    worst = min((proportion_coverage(proportion_interval, n), n) for n in PROPORTION_NS)
    assert worst[0][0] >= FLOOR, worst


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


# Instances asked in both orders: P(right, first order), P(right, last), P(the last repeats the first).
BOTH_ORDERS = (
    (0.6, 0.5, 0.7),
    (0.9, 0.85, 0.8),
    (0.95, 0.95, 0.5),
    (0.5, 0.5, 0.95),
    (0.98, 0.9, 0.3),
    (0.1, 0.2, 0.6),
)


def unit_coverage(p_first, p_last, same, n, *, trials=4000, seed=5):
    """Coverage of :func:`unit_proportion_interval` at ``n`` instances by ``trials`` samples."""
    rng = np.random.default_rng(seed)
    pool = _both_orders(p_first, p_last, same, rng)
    truth = (p_first + same * p_first + (1 - same) * p_last) / 2
    sums = pool[rng.integers(0, pool.size, size=(trials, n))].sum(axis=1)
    covered = 0
    for total, count in zip(*np.unique(sums, return_counts=True)):  # the interval depends on the sum only
        shares = np.r_[np.ones(int(total)), [total % 1] if total % 1 else []]
        _, low, high = unit_proportion_interval(np.r_[shares, np.zeros(n - shares.size)])
        covered += count * (low <= truth <= high)
    return covered / trials


@pytest.mark.parametrize("n", [2, 5, 10, 20, 30, 40, 75, 150])
def test_unit_proportion_interval_covers_instances_asked_in_both_orders(n):
    """Accuracy with the instance as the unit (the mean of its two orders), near 50% and near the bounds."""
    worst = min((unit_coverage(*case, n), case) for case in BOTH_ORDERS)
    assert worst[0] >= FLOOR, (n, worst)


# Paired 0/1 outcomes: P(right only under x), P(right only under y). One-sided, sparse
# discordance (a method that only fixes items) is where Wald-type intervals fail.
DISCORDANCE = [(b, c) for b in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45) for c in (0, 0.005, 0.01, 0.05, 0.1, 0.2)]
PAIRED_PROPORTION_NS = (2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100)


def paired_proportion_coverage(interval, n, cells=DISCORDANCE):
    """Worst exact coverage over ``cells`` of ``interval(b, c, n) -> (d, low, high)``
    at ``n``, and its cell: every (b, c) outcome weighted by its multinomial
    probability (outcomes below 1e-12 under every cell are skipped and count as misses)."""
    from scipy.stats import multinomial

    b, c = (v.ravel() for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    b, c = b[b + c <= n], c[b + c <= n]
    pmf = np.array([multinomial.pmf(np.c_[b, c, n - b - c], n, [qb, qc, 1 - qb - qc]) for qb, qc in cells])
    kept = pmf.max(axis=0) > 1e-12
    bounds = np.full((b.size, 2), np.nan)
    bounds[kept] = [interval(int(i), int(j), n)[1:] for i, j in zip(b[kept], c[kept])]
    truth = np.array([qb - qc for qb, qc in cells])[:, None]
    covered = (bounds[:, 0] - 1e-12 <= truth) & (truth <= bounds[:, 1] + 1e-12)
    coverage = (pmf * covered).sum(axis=1)
    return float(coverage.min()), cells[int(coverage.argmin())]


@pytest.mark.parametrize("n", PAIRED_PROPORTION_NS)
def test_paired_proportion_difference_covers_exactly(n):
    """Tango's score interval, from PAIRED_MIN_N pairs, over every (b, c) outcome."""
    assert n >= PAIRED_MIN_N["clopper-pearson"]
    worst, cell = paired_proportion_coverage(tango_interval, n)
    assert worst >= FLOOR, (n, cell, worst)


def agresti_min(b, c, n):
    """Agresti-Min's paired interval (Wald after adding 1/2 to each cell): not printed, shown to fail here."""
    centre, m = (b - c) / (n + 2), n + 2.0
    half = 1.959963984540054 * math.sqrt(((b + c + 1) - (b - c) ** 2 / m) / m**2)
    return (b - c) / n, max(-1.0, centre - half), min(1.0, centre + half)


def test_agresti_min_would_undercover_on_one_sided_sparse_discordance():
    """Why Tango's interval: at b = c = 0 Agresti-Min's is ±1.96/(n + 2), too short
    when 2% of items change one way (0.87 at n = 100)."""
    assert paired_proportion_coverage(agresti_min, 100)[0] < FLOOR


def _pool(values):
    return values, float(values.mean())


def _paired_shapes():
    """Per-item differences x − y of scores on 0-1 (pools of 400,000; a pool's mean is the truth)."""
    rng = np.random.default_rng(13)
    size = 400_000

    def balance_like(s):  # many exact zeros, a mode near 0, a broad bulk
        return np.where(rng.random(s) < 0.3, rng.beta(0.5, 8, s), np.where(rng.random(s) < 0.2, 0.0, rng.beta(2, 3, s)))

    def redrawn(draw, share, shift=0.0):  # the method changes a share of items; the rest tie exactly
        y = draw(size)
        return np.where(rng.random(size) < share, np.clip(draw(size) - shift, 0, 1), y) - y

    def one_signed(share, a, b, scale):  # sparse, skewed changes, all downwards
        y = rng.beta(2, 3, size)
        return np.clip(y - (rng.random(size) < share) * scale * rng.beta(a, b, size), 0, 1) - y

    def ratings(p):
        return lambda s: rng.choice(5, size=s, p=p) / 4.0  # a 1-5 rating on 0-1

    def bernoulli(q_up, q_down):  # 0/1 outcomes read as graded scores
        u = rng.random(size)
        return (u < q_up).astype(float) - ((u >= q_up) & (u < q_up + q_down))

    def both_orders(changed):  # arbitration: an instance's share over its two orders
        base = (rng.random((size, 2)) < 0.7).mean(axis=1)
        return np.where(rng.random(size) < changed, (rng.random((size, 2)) < 0.85).mean(axis=1), base) - base

    skewed = [0.05, 0.1, 0.2, 0.35, 0.3]
    return {
        "Balance-like, 40% redrawn -0.05": _pool(redrawn(balance_like, 0.4, 0.05)),
        "Balance-like, 10% redrawn -0.1": _pool(redrawn(balance_like, 0.1, 0.1)),
        "one-signed 10%, 0.4 B(2,2)": _pool(one_signed(0.1, 2, 2, 0.4)),
        "one-signed 3%, 0.6 B(2,2)": _pool(one_signed(0.03, 2, 2, 0.6)),
        "one-signed 10%, B(0.5,3)": _pool(one_signed(0.1, 0.5, 3, 1.0)),
        "ratings 1-5, 40% redrawn": _pool(redrawn(ratings(skewed), 0.4)),
        "ratings 1-5, 10% redrawn -1": _pool(redrawn(ratings(skewed), 0.1, 0.25)),
        "Bernoulli pairs 10%/2%": _pool(bernoulli(0.1, 0.02)),
        "Bernoulli pairs 30%/0%": _pool(bernoulli(0.3, 0.0)),
        "Bernoulli pairs 5%/0%": _pool(bernoulli(0.05, 0.0)),
        "both orders, 15% changed": _pool(both_orders(0.15)),
    }


PAIRED_MEAN_NS = (10, 20, 30, 50, 100, 300)


def paired_mean_coverage(pool, truth, n, *, trials=4000, seed=0, adjusted=True):
    """(coverage, samples that print an interval) of :func:`adjusted_mean_interval`
    (or, ``adjusted`` False, the plain t interval) at ``n``, over those of
    ``trials`` samples that print one (a sample without spread prints "no
    spread"); vectorised with the library's t quantile, the first 50 checked
    against the function."""
    d = pool[np.random.default_rng(seed).integers(0, pool.size, size=(trials, n))]
    quantile = t_quantile(0.975, n - 1)
    if adjusted:
        centre = d.sum(axis=1) / (n + 2)
        half = quantile * np.sqrt(((np.square(d).sum(axis=1) + 1.0) / (n + 2) - centre**2) / (n + 2))
        low, high = np.maximum(centre - half, -1.0), np.minimum(centre + half, 1.0)
    else:
        centre, half = d.mean(axis=1), quantile * d.std(axis=1, ddof=1) / math.sqrt(n)
        low, high = centre - half, centre + half
    shown = np.ptp(d, axis=1) > 1e-12
    if adjusted:
        for row in range(50):
            expected = adjusted_mean_interval(d[row], bound=1.0, min_n=2)[1:]
            assert np.allclose((low[row], high[row]) if shown[row] else (np.nan,) * 2, expected, equal_nan=True)
    return float(((low <= truth) & (truth <= high))[shown].mean()), int(shown.sum())


def test_paired_mean_interval_covers_from_its_minimum_n_on_every_shape():
    assert min(PAIRED_MEAN_NS) >= PAIRED_MIN_N["student-t"]
    shapes = _paired_shapes()
    coverage = {(name, n): paired_mean_coverage(*shape, n)[0] for name, shape in shapes.items() for n in PAIRED_MEAN_NS}
    assert min(coverage.values()) >= FLOOR, min(coverage.items(), key=lambda item: item[1])


def test_plain_t_interval_of_paired_differences_would_undercover():
    """Why the adjusted interval: the t interval of sparse, one-signed differences falls short at n = 30."""
    assert paired_mean_coverage(*_paired_shapes()["one-signed 10%, B(0.5,3)"], 30, adjusted=False)[0] < FLOOR


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

"""Print the coverage table of docs/statistics.md: every printed interval
method against n, on the shapes of tests/test_coverage.py (the worst shape
per cell), with the same draws the tests make.

    PYTHONPATH=$PWD python benchmarks/coverage_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import binom, multinomial

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.stats import agresti_min_interval, proportion_interval, unit_proportion_interval, wilson_interval  # noqa: E402
from tests import test_coverage as T  # noqa: E402

NS = (2, 5, 10, 20, 30, 50, 100, 200)


def proportion(method, n):
    bounds = np.array([method(k, n)[1:] for k in range(n + 1)])
    return min(
        float(binom.pmf(np.arange(n + 1), n, p)[(bounds[:, 0] <= p) & (p <= bounds[:, 1])].sum())
        for p in T.PROBABILITIES
    )


def paired(n):
    worst = 1.0
    for p_first, p_last, same in (
        (0.6, 0.5, 0.7),
        (0.9, 0.8, 0.8),
        (0.5, 0.5, 0.9),
        (0.3, 0.5, 0.5),
        (0.95, 0.95, 0.95),
    ):
        a, b = (1 - same) * p_first * (1 - p_last), (1 - same) * (1 - p_first) * p_last
        covered = sum(
            multinomial.pmf([i, j, n - i - j], n, [a, b, 1 - a - b])
            for i in range(n + 1)
            for j in range(n + 1 - i)
            if (lambda lo, hi: lo <= a - b <= hi)(*agresti_min_interval(i, j, n)[1:])
        )
        worst = min(worst, covered)
    return worst


def units(n):
    rng, worst = np.random.default_rng(5), 1.0
    for p_first, p_last, same in (
        (0.6, 0.5, 0.7),
        (0.9, 0.85, 0.8),
        (0.95, 0.95, 0.5),
        (0.5, 0.5, 0.95),
        (0.98, 0.9, 0.3),
        (0.1, 0.2, 0.6),
    ):
        pool = T._both_orders(p_first, p_last, same, rng)
        truth = (p_first + same * p_first + (1 - same) * p_last) / 2
        sums = pool[rng.integers(0, pool.size, size=(4000, n))].sum(axis=1)
        covered = 0
        for total, count in zip(*np.unique(sums, return_counts=True)):
            shares = np.r_[np.ones(int(total)), [total % 1] if total % 1 else []]
            _, low, high = unit_proportion_interval(np.r_[shares, np.zeros(n - shares.size)])
            covered += count * (low <= truth <= high)
        worst = min(worst, covered / 4000)
    return worst


def means(n):
    return min(T.mean_coverage(*shape, n, min_n=2) for shape in T._mean_shapes().values())


rows = {
    "Clopper-Pearson (proportions; exact)": lambda n: proportion(proportion_interval, n),
    "Wilson (not printed; exact)": lambda n: proportion(wilson_interval, n),
    "Agresti-Min paired difference (exact)": paired,
    "Clopper-Pearson over units (both orders)": units,
    "Student-t mean (20,000 samples per shape)": means,
}
print("| method (worst shape) | " + " | ".join(f"n = {n}" for n in NS) + " |")
print("|---|" + "---|" * len(NS))
for name, coverage in rows.items():
    print(f"| {name} | " + " | ".join(f"{coverage(n):.3f}" for n in NS) + " |", flush=True)

"""Print the coverage table of docs/statistics.md: every interval method a
table prints (and the ones it replaced) against n, on the shapes of
tests/test_coverage.py, with the same draws the tests make. Each cell is the
worst case over the shapes, and, where simulated, its Monte Carlo standard
error sqrt(c(1 - c)/m), m the samples that printed an interval.

    PYTHONPATH=$PWD python benchmarks/coverage_table.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.paired import tango_interval  # noqa: E402
from conflictlab.stats import proportion_interval, wilson_interval  # noqa: E402
from tests import test_coverage as T  # noqa: E402

NS = (2, 5, 10, 20, 30, 50, 100, 200)


def exact(coverage):
    return f"{coverage:.3f}"


def simulated(coverage, m):
    return f"{coverage:.3f} ± {math.sqrt(coverage * (1 - coverage) / m):.3f}"


def proportion(method, n):
    return exact(T.proportion_coverage(method, n)[0])


def paired_proportion(method, n):
    return exact(T.paired_proportion_coverage(method, n)[0])


def units(n):
    return simulated(min(T.unit_coverage(*case, n) for case in T.BOTH_ORDERS), 4000)


def means(n):
    shapes = T._mean_shapes().values()
    return simulated(min(T.mean_coverage(*shape, n, min_n=2) for shape in shapes), 20_000)


def paired_means(adjusted):
    def cell(n):
        return simulated(*min(T.paired_mean_coverage(*s, n, adjusted=adjusted) for s in T._paired_shapes().values()))

    return cell


rows = {
    "Clopper-Pearson, proportions (printed from 2; exact)": lambda n: proportion(proportion_interval, n),
    "Wilson (not printed; exact)": lambda n: proportion(wilson_interval, n),
    "Tango score, paired proportions (printed from 2; exact)": lambda n: paired_proportion(tango_interval, n),
    "Agresti-Min, paired proportions (not printed; exact)": lambda n: paired_proportion(T.agresti_min, n),
    "Clopper-Pearson over units, both orders (from 2; 4,000 samples)": units,
    "Student-t mean (printed from 30; 20,000 samples)": means,
    "adjusted t, paired graded scores (printed from 10; 4,000 samples)": paired_means(True),
    "plain t, paired graded scores (not printed; 4,000 samples)": paired_means(False),
}
print("| method (worst shape) | " + " | ".join(f"n = {n}" for n in NS) + " |")
print("|---|" + "---|" * len(NS))
for name, coverage in rows.items():
    print(f"| {name} | " + " | ".join(coverage(n) for n in NS) + " |", flush=True)

"""Print the coverage tables of docs/statistics.md: every interval method a
table prints (and the ones it replaced) against n, on the shapes of
tests/test_coverage.py, with the same draws the tests make but more samples;
then issue 59's shapes one by one, the interval printed before against the
one printed now. Each cell of the first table is the worst case over the
shapes and, where simulated, ± its Monte Carlo standard error
sqrt(c(1 - c)/m), m the samples that printed an interval.

    PYTHONPATH=$PWD python benchmarks/coverage_table.py
"""

from __future__ import annotations

import math
import sys
import time
from functools import cache, partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.paired import tango_interval  # noqa: E402
from conflictlab.stats import proportion_interval, wilson_interval  # noqa: E402
from conflictlab.studentized import CALIBRATED_CONFIDENCE, MIN_N_BOOTSTRAP_T  # noqa: E402
from tests import test_coverage as T  # noqa: E402

NS = (2, 5, 10, 20, 30, 50, 100, 200)
MEAN_TRIALS, BETTING_TRIALS, PAIRED_TRIALS, UNIT_TRIALS, SKEWED_TRIALS = 20_000, 10_000, 4000, 4000, 1000
plain_tango = partial(tango_interval, skewness_correction=False, all_discordant_exact=False)


def exact(coverage):
    return f"{coverage:.3f}"


def simulated(coverage, m):
    return f"{coverage:.3f} ± {math.sqrt(coverage * (1 - coverage) / m):.3f}"


def proportion(method, n):
    return exact(T.proportion_coverage(method, n)[0])


def paired_proportion(method, n):
    return exact(T.paired_proportion_coverage(method, n)[0])


def units(n):
    return simulated(min(T.unit_coverage(*case, n, trials=UNIT_TRIALS) for case in T.BOTH_ORDERS), UNIT_TRIALS)


def shares_t(n):
    # every instance right: Student-t never has a spread, never an interval (0.000); the row shows the rest
    cases = [case for case in T.BOTH_ORDERS if case != (1.0, 1.0, 1.0)]
    return simulated(min(T.share_t_coverage(*case, n) for case in cases), 20_000)


def means(n):
    shapes = T._mean_shapes().values()
    return simulated(min(T.mean_coverage(*shape, n, min_n=2) for shape in shapes), MEAN_TRIALS)


def betting(n):
    shapes = T._mean_shapes().values()
    return simulated(min(T.betting_coverage(*shape, n, trials=BETTING_TRIALS) for shape in shapes), BETTING_TRIALS)


def paired_means(method):
    def cell(n):
        return simulated(*min(T.paired_mean_coverage(*s, n, method=method) for s in T._paired_shapes().values()))

    return cell


@cache
def skewed_cell(method, sigma, n):
    """Coverage on lognormal ``sigma`` at ``n``: Table 3's printed interval only from the n it prints it at."""
    if method == "bootstrap-t" and n < MIN_N_BOOTSTRAP_T or method == "t" and n < 30:
        return None
    return T.skewed_coverage(*T._lognormal(sigma, np.random.default_rng(21)), n, trials=SKEWED_TRIALS, method=method)


def skewed(method):
    def cell(n):
        worst = [skewed_cell(method, sigma, n) for sigma in (1.0, 1.5)]
        return "—" if None in worst else simulated(min(worst), SKEWED_TRIALS)

    return cell


rows = {
    "Clopper-Pearson, proportions (printed from 2; exact)": lambda n: proportion(proportion_interval, n),
    "Wilson (not printed; exact)": lambda n: proportion(wilson_interval, n),
    "Tango score + Laud's skewness term, paired proportions (printed from 2; exact)": lambda n: paired_proportion(
        tango_interval, n
    ),
    "Tango score without it (printed before; exact)": lambda n: paired_proportion(plain_tango, n),
    "Agresti-Min, paired proportions (not printed; exact)": lambda n: paired_proportion(T.agresti_min, n),
    f"Clopper-Pearson over units, {{0, ½, 1}} shares (printed from 2; {UNIT_TRIALS:,} samples)": units,
    "Student-t, the same shares but all right (before: conflict_accuracy, text_followed; 20,000 samples)": shares_t,
    f"betting (hedged capital), 0-1 scores (printed from 30; {BETTING_TRIALS:,} samples)": betting,
    f"Student-t, the same 0-1 scores (printed before from 30; {MEAN_TRIALS:,} samples)": means,
    f"adjusted t, z²/2 pseudo-pairs, paired graded scores (printed from 10; {PAIRED_TRIALS:,} samples)": paired_means(
        "adjusted"
    ),
    f"adjusted t, ½ pseudo-pair (printed before; {PAIRED_TRIALS:,} samples)": paired_means("half"),
    f"plain t, paired graded scores (not printed; {PAIRED_TRIALS:,} samples)": paired_means("plain"),
    f"bootstrap-t at {CALIBRATED_CONFIDENCE:.0%} nominal, {T.TABLE3_RESAMPLES:,} resamples, lognormal σ = 1, 1.5 "
    f"(Table 3, printed from {MIN_N_BOOTSTRAP_T}; {SKEWED_TRIALS:,} samples)": skewed("bootstrap-t"),
    f"Student-t, lognormal σ = 1, 1.5 (Table 3 before; {SKEWED_TRIALS:,} samples)": skewed("t"),
}


def by_shape():
    """Issue 59's shapes one by one: (shape, n, before's name, its coverage, now's name, its coverage)."""
    shapes, paired = T._mean_shapes(), T._paired_shapes()
    out = []
    for (p_first, p_last, same), n, label in (
        ((0.9, 0.9, 0.5), 30, "arbitration shares, accuracy 0.90"),
        ((0.95, 0.95, 0.5), 50, "arbitration shares, accuracy 0.95"),
        ((1.0, 1.0, 1.0), 30, "arbitration shares, all right"),
    ):
        before = simulated(T.share_t_coverage(p_first, p_last, same, n), 20_000)
        now = simulated(T.unit_coverage(p_first, p_last, same, n, trials=UNIT_TRIALS), UNIT_TRIALS)
        out.append((label, n, "Student-t", before, "Clopper-Pearson over units", now))
    for name in (
        "80% at 1 + 20% B(2,2)",
        "90% at 1 + 10% B(2,2)",
        "2-piece share: 85% at 1, 5% at 0, 10% at 1/2",
        "95% B(.5,20) + 5% at 1",
        "near 0: 98% at 0 + 2% B(2,2)",
        "entropy, bits of 4: 60% at 0 + 40% 2·B(2,3)",
    ):
        for n in (30, 100):
            before = simulated(T.mean_coverage(*shapes[name], n), MEAN_TRIALS)
            now = simulated(T.betting_coverage(*shapes[name], n, trials=BETTING_TRIALS), BETTING_TRIALS)
            out.append((name, n, "Student-t", before, "betting", now))
    for flip, n in ((10, 20), (5, 40), (4, 100)):
        shape = paired[f"every item moves, {flip}% flip by -1"]
        before = simulated(*T.paired_mean_coverage(*shape, n, method="half"))
        now = simulated(*T.paired_mean_coverage(*shape, n))
        out.append((f"paired: every item moves, {flip}% flip by -1", n, "adjusted t, ½", before, "z²/2", now))
    for cell, n in (((0.93, 0.0), 15), ((0.99, 0.0), 15), ((0.9, 0.05), 30), ((0.95, 0.0), 100)):
        before = exact(T.paired_proportion_coverage(plain_tango, n, cells=[cell])[0])
        now = exact(T.paired_proportion_coverage(tango_interval, n, cells=[cell])[0])
        out.append((f"paired 0/1, discordance {cell}", n, "Tango", before, "Tango + skewness", now))
    for sigma in (1.0, 1.5):
        for n in T.SKEWED_NS:
            before = simulated(skewed_cell("t", sigma, n), SKEWED_TRIALS)
            now = simulated(skewed_cell("bootstrap-t", sigma, n), SKEWED_TRIALS)
            out.append((f"lognormal σ = {sigma}", n, "Student-t", before, "Table 3's bootstrap-t", now))
    return out


if __name__ == "__main__":
    start = time.perf_counter()
    print("| method (worst shape) | " + " | ".join(f"n = {n}" for n in NS) + " |")
    print("|---|" + "---|" * len(NS))
    for name, coverage in rows.items():
        print(f"| {name} | " + " | ".join(coverage(n) for n in NS) + " |", flush=True)
    print()
    print("| issue 59's shape | n | before | coverage | now | coverage |")
    print("|---|---|---|---|---|---|")
    for row in by_shape():
        print("| " + " | ".join(str(v) for v in row) + " |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s wall, {time.process_time():.0f} s CPU", file=sys.stderr)

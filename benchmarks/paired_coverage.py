"""Coverage of the paired intervals (conflictlab.paired) shape by shape, at
the n they are printed at; benchmarks/coverage_table.py gives the worst shape
per method. Draws and shapes are tests/test_coverage.py's.

    PYTHONPATH=$PWD python benchmarks/paired_coverage.py

Prints two Markdown tables: Tango's interval on paired 0/1 outcomes (exact,
every outcome weighted by its probability) per discordance (P(x only),
P(y only)), with Laud's skewness term and without it; and, per graded shape,
the adjusted t interval (z²/2 pseudo-pairs at each bound) against the weight
it replaced (½) and the plain t interval (4,000 samples; coverage over the
samples that print an interval, ± its Monte Carlo standard error).
"""

from __future__ import annotations

import math
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.paired import tango_interval  # noqa: E402
from tests import test_coverage as T  # noqa: E402

PROPORTION_NS = (5, 10, 15, 30, 100)
MEAN_NS = (10, 20, 40, 100, 300)
CELLS = ((0.02, 0.0), (0.05, 0.0), (0.1, 0.02), (0.3, 0.0), (0.45, 0.05), (0.2, 0.2), (0.75, 0.2), (0.93, 0.0))
TANGOS = {
    "with skewness term": tango_interval,
    "without": partial(tango_interval, skewness_correction=False, all_discordant_exact=False),
}

print("| discordance (x only, y only) | Tango | " + " | ".join(f"n = {n}" for n in PROPORTION_NS) + " |")
print("|---|---|" + "---|" * len(PROPORTION_NS))
for cell in CELLS:
    for label, interval in TANGOS.items():
        row = [T.paired_proportion_coverage(interval, n, cells=[cell])[0] for n in PROPORTION_NS]
        print(f"| {cell} | {label} | " + " | ".join(f"{c:.3f}" for c in row) + " |", flush=True)

print()
print("| graded shape | interval | " + " | ".join(f"n = {n}" for n in MEAN_NS) + " |")
print("|---|---|" + "---|" * len(MEAN_NS))
for name, shape in T._paired_shapes().items():
    for method, label in (("adjusted", "adjusted t, z²/2"), ("half", "adjusted t, ½"), ("plain", "plain t")):
        cells = []
        for n in MEAN_NS:
            coverage, shown = T.paired_mean_coverage(*shape, n, method=method)
            cells.append(f"{coverage:.3f} ± {math.sqrt(coverage * (1 - coverage) / shown):.3f}")
        print(f"| {name} | {label} | " + " | ".join(cells) + " |", flush=True)

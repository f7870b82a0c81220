"""Coverage of the paired intervals (conflictlab.paired) shape by shape, at
the n they are printed at; benchmarks/coverage_table.py gives the worst shape
per method. Draws and shapes are tests/test_coverage.py's.

    PYTHONPATH=$PWD python benchmarks/paired_coverage.py

Prints two Markdown tables: Tango's interval on paired 0/1 outcomes (exact,
every outcome weighted by its probability) per discordance (P(x only),
P(y only)); and, per graded shape, the adjusted t interval against the plain
t interval it replaced (4,000 samples; coverage over the samples that print
an interval, ± its Monte Carlo standard error).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.paired import tango_interval  # noqa: E402
from tests import test_coverage as T  # noqa: E402

PROPORTION_NS = (5, 10, 30, 100)
MEAN_NS = (10, 30, 100, 300)

print("| discordance (x only, y only) | " + " | ".join(f"n = {n}" for n in PROPORTION_NS) + " |")
print("|---|" + "---|" * len(PROPORTION_NS))
for cell in ((0.02, 0.0), (0.05, 0.0), (0.1, 0.02), (0.3, 0.0), (0.45, 0.05), (0.2, 0.2)):
    row = [T.paired_proportion_coverage(tango_interval, n, cells=[cell])[0] for n in PROPORTION_NS]
    print(f"| {cell} | " + " | ".join(f"{c:.3f}" for c in row) + " |", flush=True)

print()
print("| graded shape | interval | " + " | ".join(f"n = {n}" for n in MEAN_NS) + " |")
print("|---|---|" + "---|" * len(MEAN_NS))
for name, shape in T._paired_shapes().items():
    for adjusted in (True, False):
        cells = []
        for n in MEAN_NS:
            coverage, shown = T.paired_mean_coverage(*shape, n, adjusted=adjusted)
            cells.append(f"{coverage:.3f} ± {math.sqrt(coverage * (1 - coverage) / shown):.3f}")
        label = "adjusted t" if adjusted else "plain t"
        print(f"| {name} | {label} | " + " | ".join(cells) + " |", flush=True)

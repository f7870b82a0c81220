"""Coverage of the paired ratio interval (conflictlab.paired_ratios) shape by shape.

    PYTHONPATH=$PWD python benchmarks/ratio_coverage.py [samples]

Per joint shape of two runs' item states (tests/test_paired_ratios.py's
``ratio_shapes``: the issue's 2,000-item pattern, sparse one-way changes, a
low match rate, MR near 0, changes both ways) and n, the share of ``samples``
data sets (default 2,000) whose 95% interval of MR_x − MR_y holds the true
difference, over those that print one, ± the Monte Carlo standard error: the
interval as printed (half a pseudo-item per cell) against the plain delta
method (none). Prints a Markdown table; fixed seeds.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab import paired_ratios  # noqa: E402
from tests.test_paired_ratios import _coverage, ratio_shapes  # noqa: E402

SAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
NS = (10, 20, 30, 50, 100, 300, 1000)
PRINTED = paired_ratios.PSEUDO_ITEMS

print(f"| shape | interval | {' | '.join(f'n = {n}' for n in NS)} |")
print("|---|---|" + "---|" * len(NS))
for name, cells in ratio_shapes().items():
    for label, pseudo in (("printed (½ pseudo-item per cell)", PRINTED), ("plain delta method", 0.0)):
        paired_ratios.PSEUDO_ITEMS = pseudo  # the module reads it at each call
        row = []
        for n in NS:
            coverage, shown = _coverage(cells, n, SAMPLES)
            row.append(f"{coverage:.3f} ± {math.sqrt(coverage * (1 - coverage) / shown):.3f}")
        print(f"| {name} | {label} | {' | '.join(row)} |", flush=True)
paired_ratios.PSEUDO_ITEMS = PRINTED

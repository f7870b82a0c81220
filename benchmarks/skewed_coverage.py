"""Coverage of Table 3's intervals on skewed, unbounded differences (issue 59, item 4).

    PYTHONPATH=$PWD python benchmarks/skewed_coverage.py [samples] [resamples] [n,n,...]

Per lognormal shape (σ = 1 and 1.5, the log-likelihood differences' skew)
and n (default 30-1,000), the share of ``samples`` data sets (default 1,000) whose 95% interval
of the mean holds the true mean exp(σ²/2): the bootstrap-t interval of
:func:`conflictlab.studentized.bootstrap_t_interval` (``resamples`` each,
default 999) at the nominal level Table 3 prints (``CALIBRATED_CONFIDENCE``)
and at 95%, against Student's t (:func:`conflictlab.stats.mean_interval`),
± the Monte Carlo standard error (the two bootstrap rows share resamples). Prints a Markdown table; fixed seeds.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conflictlab.stats import mean_interval  # noqa: E402
from conflictlab.studentized import CALIBRATED_CONFIDENCE, bootstrap_t_interval  # noqa: E402

SAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
RESAMPLES = int(sys.argv[2]) if len(sys.argv) > 2 else 999
NS = tuple(int(n) for n in sys.argv[3].split(",")) if len(sys.argv) > 3 else (30, 50, 100, 200, 300, 500, 1000)


def coverage(interval, sigma: float, n: int) -> tuple[float, int]:
    """(coverage, data sets that printed an interval) of ``interval`` on lognormal(0, ``sigma``) samples of ``n``."""
    rng = np.random.default_rng(int(100 * sigma) + n)
    truth, hits, shown = math.exp(sigma**2 / 2), 0, 0
    for k in range(SAMPLES):
        _, low, high = interval(rng.lognormal(0.0, sigma, n), k)
        if not math.isnan(low):
            shown += 1
            hits += low <= truth <= high
    return hits / shown, shown


METHODS = {
    f"bootstrap-t at {CALIBRATED_CONFIDENCE:.0%} nominal (printed)": lambda x, k: bootstrap_t_interval(
        x, confidence=CALIBRATED_CONFIDENCE, n_resamples=RESAMPLES, seed=k
    ),
    "bootstrap-t at 95% nominal": lambda x, k: bootstrap_t_interval(x, n_resamples=RESAMPLES, seed=k),
    "Student-t": lambda x, k: mean_interval(x, min_n=2),
}
print(f"| shape | interval | {' | '.join(f'n = {n}' for n in NS)} |")
print("|---|---|" + "---|" * len(NS))
for sigma in (1.0, 1.5):
    for name, interval in METHODS.items():
        cells = []
        for n in NS:
            c, shown = coverage(interval, sigma, n)
            cells.append(f"{c:.3f} ± {math.sqrt(c * (1 - c) / shown):.3f}")
        print(f"| lognormal σ = {sigma:g} | {name} | {' | '.join(cells)} |", flush=True)

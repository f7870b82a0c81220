"""Coverage of the paired intervals (conflictlab.paired) by simulation, at the n they are printed at.

    python benchmarks/paired_coverage.py [reps]

Prints one line per (interval, data shape, n): the share of simulated 95%
intervals that cover the true difference (no-spread samples, which print no
interval, are left out of the share and counted).
"""

import sys

import numpy as np

from conflictlab.paired import paired_mean_ci, paired_proportion_ci

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
rng = np.random.default_rng(0)
CELLS = {  # P(both 1), P(method only), P(base only), P(neither)
    "balanced discordance": (0.4, 0.1, 0.1, 0.4),
    "method better": (0.7, 0.15, 0.05, 0.1),
    "base better, low": (0.2, 0.05, 0.25, 0.5),
    "near ceiling": (0.85, 0.05, 0.05, 0.05),
}


def balance(size):
    return np.where(rng.random(size) < 0.3, 100 * rng.beta(0.5, 8, size), 100 * rng.beta(2, 3, size))


def rating(size):
    return rng.choice([1, 2, 3, 4, 5], size=size, p=[0.05, 0.1, 0.2, 0.35, 0.3]).astype(float)


print("interval | data | n | coverage | no interval")
for name, cells in CELLS.items():
    for n in (5, 10, 30, 100):
        covered = 0
        for _ in range(REPS):
            k = rng.choice(4, size=n, p=cells)
            _, low, high = paired_proportion_ci(np.isin(k, (0, 1)).astype(float), np.isin(k, (0, 2)).astype(float))
            covered += low - 1e-12 <= cells[1] - cells[2] <= high + 1e-12
        print(f"Newcombe paired | {name} | {n} | {covered / REPS:.3f} | 0")
for name, draw, shift, share in (
    ("Balance 0-100, 40% changed", balance, 5.0, 0.4),
    ("rating 1-5, 40% changed", rating, 0.3, 0.4),
    ("Balance, 10% changed by -20 (sparse, skewed)", None, 20.0, 0.1),
):
    for n in (10, 30, 100):
        covered = shown = 0
        for _ in range(REPS):
            if draw is None:
                y = 100 * rng.beta(2, 3, n)
                x = y - (rng.random(n) < share) * 2 * shift * rng.beta(2, 2, n)
            else:
                y = draw(n)
                x = np.where(rng.random(n) < share, draw(n) - shift, y)
            _, low, high = paired_mean_ci(x, y)
            if np.isnan(low):
                continue
            shown += 1
            covered += low <= -share * shift <= high
        print(f"t (paired mean) | {name} | {n} | {covered / max(shown, 1):.3f} | {REPS - shown}")

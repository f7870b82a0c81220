"""Coverage of the ΔER interval on simulated pairs with a known ΔER.

    python benchmarks/delta_er_coverage.py --pairs 6 10 20 40 --k 2 --draws 400

Conflict rows have variances 5·0.6^i, consistent rows 5·0.8^i over 12
dimensions. The estimand is θ_n = E[ΔER of n pairs] (ER depends on n when
n < d; see ``conflictlab.contextconflict.mechanistic.delta_er``), computed as
the mean over 40,000 independent draws. Prints the share of draws whose 95%
interval covers θ_n, and, for contrast, the n → ∞ ΔER of the two spectra.
"""

import argparse

import numpy as np

from conflictlab.contextconflict.mechanistic import delta_er


def energy_ratios(h: np.ndarray, k: int) -> np.ndarray:
    """ER of each (n, d) matrix in ``h`` (..., n, d)."""
    energy = np.linalg.svd(h - h.mean(axis=-2, keepdims=True), compute_uv=False) ** 2
    return energy[..., :k].sum(-1) / energy.sum(-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[6, 10, 20, 40])
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--draws", type=int, default=400)
    args = parser.parse_args()
    d, k = 12, args.k
    conflict, consistent = 5 * 0.6 ** np.arange(d), 5 * 0.8 ** np.arange(d)
    population = conflict[:k].sum() / conflict.sum() - consistent[:k].sum() / consistent.sum()
    for n in args.pairs:
        rng = np.random.default_rng(1)
        truth = float(
            np.mean(
                energy_ratios(rng.normal(size=(40_000, n, d)) * np.sqrt(conflict), k)
                - energy_ratios(rng.normal(size=(40_000, n, d)) * np.sqrt(consistent), k)
            )
        )
        rng = np.random.default_rng(2)
        results = [
            delta_er(
                rng.normal(size=(n, d)) * np.sqrt(conflict),
                rng.normal(size=(n, d)) * np.sqrt(consistent),
                k=k,
                n_permutations=0,
            )
            for _ in range(args.draws)
        ]
        with_interval = [r for r in results if not r.ci_reason]
        covered = sum(r.ci_low <= truth <= r.ci_high for r in with_interval)
        reason = f" (no interval: {results[0].ci_reason})" if not with_interval else ""
        print(
            f"{n:4d} pairs, k = {k}: θ_n = {truth:.4f} (n → ∞: {population:.4f}); "
            f"the 95% interval covers θ_n in {covered}/{len(with_interval)} draws{reason}"
        )


if __name__ == "__main__":
    main()

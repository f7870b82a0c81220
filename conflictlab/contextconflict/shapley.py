"""Shapley values of evidence pieces.

A game over ``n`` pieces is given by its values ``v`` on coalitions, indexed
by bit mask: bit ``i`` of the mask is set when piece ``i`` (0-based, in the
sample's order) is in the coalition. ``values`` of shape ``(2**n,)`` holds
v(S) at index ``mask(S)``; ``values[0]`` is v(∅).

The Balance score built on them (paper Eq. 2) is a statistic of the shares,
:func:`conflictlab.stats.balance`.
"""

from __future__ import annotations

import hashlib
from math import factorial

import numpy as np


def popcounts(n: int) -> np.ndarray:
    """Coalition sizes of every mask in ``range(2**n)``; shape (2**n,)."""
    masks = np.arange(1 << n)
    counts = np.zeros_like(masks)
    for bit in range(n):
        counts += (masks >> bit) & 1
    return counts


def exact_shapley(values: np.ndarray) -> np.ndarray:
    """Exact Shapley values from all ``2**n`` coalition values.

    φ_i = Σ_{S ⊆ N∖{i}} |S|!(n−|S|−1)!/n! · (v(S ∪ {i}) − v(S)).
    ``values`` has shape (2**n,); returns shape (n,).
    """
    values = np.asarray(values, dtype=np.float64)
    n = int(np.log2(values.size))
    if values.size != 1 << n or n < 1:
        raise ValueError(f"values must have 2**n entries for some n >= 1, got {values.size}")
    sizes = popcounts(n)
    weights = np.array([factorial(s) * factorial(n - s - 1) / factorial(n) for s in range(n)])
    masks = np.arange(1 << n)
    phi = np.empty(n)
    for i in range(n):
        without = masks[(masks >> i) & 1 == 0]
        phi[i] = np.sum(weights[sizes[without]] * (values[without | (1 << i)] - values[without]))
    return phi


def sample_seed(seed: int, sample_id: str) -> list[int]:
    """The permutation seed of one sample: the configured seed and its id, so
    that Monte Carlo errors of different samples are independent and a
    sample's draw does not depend on which others are scored."""
    digest = hashlib.sha256(sample_id.encode("utf-8")).digest()
    return [seed, *(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))]


def antithetic_permutations(n: int, n_permutations: int, seed: int | list[int]) -> np.ndarray:
    """``n_permutations`` orders of ``range(n)``: random ones, each followed by
    its reverse (antithetic pairs cancel much of the order noise).
    Shape (n_permutations, n); ``n_permutations`` must be even."""
    if n_permutations < 2 or n_permutations % 2:
        raise ValueError(f"n_permutations must be an even number >= 2, got {n_permutations}")
    rng = np.random.default_rng(seed)
    half = np.array([rng.permutation(n) for _ in range(n_permutations // 2)])
    return np.stack([half, half[:, ::-1]], axis=1).reshape(n_permutations, n)


def permutation_masks(permutations: np.ndarray) -> set[int]:
    """Every coalition a set of permutations visits (what must be scored)."""
    needed = {0}
    for order in permutations:
        mask = 0
        for i in order:
            mask |= 1 << int(i)
            needed.add(mask)
    return needed


def sampled_shapley(values: dict[int, float], permutations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Permutation-sampling Shapley estimate and its standard error.

    ``values`` maps every mask in ``permutation_masks(permutations)`` to v.
    Antithetic pairs (consecutive rows) are averaged first, so the standard
    error is over independent pairs. Returns (φ, se), each shape (n,).
    """
    m, n = permutations.shape
    contributions = np.empty((m, n))
    for row, order in enumerate(permutations):
        mask, previous = 0, values[0]
        for i in order:
            mask |= 1 << int(i)
            contributions[row, i] = values[mask] - previous
            previous = values[mask]
    pairs = contributions.reshape(m // 2, 2, n).mean(axis=1)
    se = pairs.std(axis=0, ddof=1) / np.sqrt(pairs.shape[0]) if pairs.shape[0] > 1 else np.full(n, np.nan)
    return pairs.mean(axis=0), se

"""Shapley values of evidence pieces and the Balance score built on them.

A game over ``n`` pieces is given by its values ``v`` on coalitions, indexed
by bit mask: bit ``i`` of the mask is set when piece ``i`` (0-based, in the
sample's order) is in the coalition. ``values`` of shape ``(2**n,)`` holds
v(S) at index ``mask(S)``; ``values[0]`` is v(∅).

Balance (paper Eq. 2): clip φ at 0, shares p_i = max(0, φ_i) / Σ_j max(0, φ_j),
Balance = n/(n-1) · (1/n) Σ_i (2i - n - 1) p_[i] with p sorted ascending, which
is the Gini coefficient of p rescaled to [0, 1] (0 = every piece used
equally, 1 = one piece only). The paper's code reported the unrescaled Gini
(maximum (n-1)/n), given here as ``gini`` for comparison. When every φ_i ≤ 0
the shares are undefined: the paper's code then used uniform shares, which
scores as perfectly balanced; here the sample is flagged and its shares and
Balance are NaN, to be excluded from means and counted.
"""

from __future__ import annotations

import hashlib

from dataclasses import dataclass
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


@dataclass(frozen=True)
class BalanceResult:
    shares: np.ndarray  # (n,), NaN when undefined
    balance: float  # normalised Gini in [0, 1], NaN when undefined
    gini: float  # unnormalised Gini (the paper code's number), NaN when undefined
    undefined: bool  # every φ_i <= 0


def balance(phi: np.ndarray) -> BalanceResult:
    """Shares and Balance of one sample's Shapley values ``phi`` (shape (n,), n >= 2)."""
    phi = np.asarray(phi, dtype=np.float64)
    n = phi.size
    if n < 2:
        raise ValueError("Balance needs at least two evidence pieces")
    clipped = np.clip(phi, 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        nan = float("nan")
        return BalanceResult(np.full(n, np.nan), nan, nan, True)
    shares = clipped / total
    ranks = np.arange(1, n + 1)
    gini = float(np.sum((2 * ranks - n - 1) * np.sort(shares)) / n)
    return BalanceResult(shares, gini * n / (n - 1), gini, False)

"""Small statistics shared by every metric table."""

from __future__ import annotations

from typing import Callable, Hashable, Sequence, TypeVar

import numpy as np

T = TypeVar("T")


def bootstrap_mean_ci(
    values: np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of ``values`` (shape (n,)) and its percentile-bootstrap CI.

    Returns ``(mean, low, high)``; NaN for all three when ``values`` is empty.
    A single value gives a zero-width interval.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, values.size, size=(n_resamples, values.size))
    means = values[resamples].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(values.mean()), float(low), float(high)


def sample_per_group(rows: Sequence[T], group_of: Callable[[T], Hashable], limit: int, *, seed: int) -> list[T]:
    """At most ``limit`` rows per group, drawn with ``seed``, input order kept.

    Groups are visited in sorted order and each draws a permutation from one
    generator, so the draw depends only on the rows, ``limit`` and ``seed``.
    """
    rng = np.random.default_rng(seed)
    keep: set[int] = set()
    groups = [group_of(row) for row in rows]
    for group in sorted(set(groups)):
        positions = [i for i, g in enumerate(groups) if g == group]
        keep.update(positions[i] for i in rng.permutation(len(positions))[:limit])
    return [row for i, row in enumerate(rows) if i in keep]

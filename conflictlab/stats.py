"""Small statistics shared by every metric table."""

from __future__ import annotations

import numpy as np


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

"""CONFLICTS Task 1 scores: accuracy and the confusion matrix over the
predictions of :mod:`conflictlab.conflicts.responses` (an unparseable
generated label, None, counts as wrong)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from conflictlab.conflicts.dataset import CATEGORIES
from conflictlab.stats import bootstrap_mean_ci

ORDER = tuple(CATEGORIES)  # category order of score vectors and confusion matrices


def task1_accuracy(predicted: Sequence[str | None], gold: Sequence[str], *, n_resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(accuracy, CI low, CI high); an unparseable prediction (None) is wrong."""
    correct = np.array([p == g for p, g in zip(predicted, gold, strict=True)], dtype=float)
    return bootstrap_mean_ci(correct, n_resamples=n_resamples, seed=seed)


def confusion_matrix(predicted: Sequence[str | None], gold: Sequence[str]) -> np.ndarray:
    """Counts, shape (5, 6): rows gold categories in :data:`ORDER`, columns
    predicted ones, the last column unparseable predictions."""
    matrix = np.zeros((len(ORDER), len(ORDER) + 1), dtype=np.int64)
    for p, g in zip(predicted, gold, strict=True):
        matrix[ORDER.index(g), len(ORDER) if p is None else ORDER.index(p)] += 1
    return matrix

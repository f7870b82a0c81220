"""CONFLICTS Task 1 scores: accuracy and the confusion matrix over the
predictions of :mod:`conflictlab.conflicts.responses` (an unparseable
generated label, None, counts as wrong: it stays in the denominator)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflictlab import metrics
from conflictlab.conflicts.dataset import ORDER


def task1_accuracy(predicted: Sequence[str | None], gold: Sequence[str]) -> tuple[float, float, float]:
    """(accuracy, 95% Wilson low, high) over every query, shapes (n,); an
    unparseable prediction (None) is wrong; NaN interval at n < 2."""
    return metrics.estimate(metrics.get("type_accuracy"), [p == g for p, g in zip(predicted, gold, strict=True)])


def confusion_matrix(
    predicted: Sequence[str | None], gold: Sequence[str], counts: Sequence[int] | None = None
) -> np.ndarray:
    """Counts, shape (5, 6): rows gold categories in :data:`ORDER`, columns
    predicted ones, the last column unparseable predictions. ``counts``
    (shape (n,)): how many queries each (predicted, gold) pair stands for; None: one each."""
    matrix = np.zeros((len(ORDER), len(ORDER) + 1), dtype=np.int64)
    for p, g, count in zip(predicted, gold, [1] * len(gold) if counts is None else counts, strict=True):
        matrix[ORDER.index(g), len(ORDER) if p is None else ORDER.index(p)] += count
    return matrix

"""CONFLICTS Task 1 read-out and its scores.

The in-process read-out is exact and needs no parsing: after the Task 1
prompt and the reply's ``Type:``, each category name is scored in full
(:func:`conflictlab.lm.choices.option_loglikelihoods`; the names share first
tokens, "Conflict due to ..."), and the prediction is the most likely name.
Generated answers (vLLM, endpoints) go through
:func:`conflictlab.conflicts.prompts.parse_label`, with unparseable answers
counted.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from conflictlab.conflicts.dataset import CATEGORIES
from conflictlab.conflicts.prompts import TASK1_PREFIX, TAXONOMY, task1_messages
from conflictlab.stats import bootstrap_mean_ci

ORDER = tuple(CATEGORIES)  # category order of score vectors and confusion matrices


def task1_scores(lm, question: str, results: Sequence[dict]) -> np.ndarray:
    """log p(category name | Task 1 prompt, "Type:") per category in
    :data:`ORDER`, shape (5,), float64."""
    from conflictlab.lm.choices import option_loglikelihoods

    chat = lm.tokenizer.apply_chat_template(task1_messages(question, results), tokenize=False, add_generation_prompt=True)
    encode = lambda text: lm.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompt = encode(chat + TASK1_PREFIX)
    return option_loglikelihoods(lm, prompt, [encode(" " + TAXONOMY[name].label) for name in ORDER])


def predicted_category(scores: np.ndarray) -> str:
    return ORDER[int(np.argmax(scores))]


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

"""Context-aware steering on NQ-Swap, with directions cross-fitted over folds of the items.

The direction is the CAS baseline's (the ContextConflict paper's "amplifies the
model's overall reliance on context"): per decoder layer l, the mean residual
state at the last prompt token of the with-context prompts minus that of the
closed-book prompts, scaled to unit length,
``u_l = (c̄_l − q̄_l) / max(‖c̄_l − q̄_l‖, 1e-8)``. Here the with-context prompt is
the substituted one, the conflict the steering is to resolve towards the context.

No item is steered by a direction computed from its own states: the items are
split into ``folds`` seeded folds, and the items of fold k are steered by the
direction of all other folds' items (cross-fitting). So every item has a steered
answer and the steered row pairs with the baseline on every item, with no
separate calibration split to lose.
"""

from __future__ import annotations

import numpy as np

from conflictlab.wildcards import format_alpha

KIND = "cas"


def run_name(alpha: float) -> str:
    """The steered run's name in tables and files: ``cas-a<alpha>`` (alpha spelled as file names spell it)."""
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"steering alpha must be finite and > 0, got {alpha!r}")
    return f"{KIND}-a{format_alpha(alpha)}"


def fold_of(n_items: int, folds: int, seed: int) -> np.ndarray:
    """Each item's fold, shape (n_items,), int: a seeded permutation dealt round-robin,
    so fold sizes differ by at most one. Needs 2 ≤ ``folds`` ≤ ``n_items``."""
    if not 2 <= folds <= n_items:
        raise ValueError(f"cross-fitted steering needs 2 <= folds <= items, got {folds} folds for {n_items} items")
    order = np.random.default_rng(seed).permutation(n_items)
    fold = np.empty(n_items, dtype=np.int64)
    fold[order] = np.arange(n_items) % folds
    return fold


def cas_direction(with_context: np.ndarray, closed_book: np.ndarray, eps: float = 1e-8) -> np.ndarray:
    """The unit CAS direction per layer, shape (n_layers, hidden), float32, from the states of
    the same items with and without context, each (n, n_layers, hidden)."""
    if with_context.shape != closed_book.shape or with_context.ndim != 3 or not len(with_context):
        raise ValueError(f"states of shapes {with_context.shape} and {closed_book.shape}; need two equal (n>0, L, d)")
    diff = with_context.astype(np.float64).mean(0) - closed_book.astype(np.float64).mean(0)
    norm = np.maximum(np.linalg.norm(diff, axis=-1, keepdims=True), eps)
    return (diff / norm).astype(np.float32)


def cross_fitted_directions(with_context: np.ndarray, closed_book: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Shape (folds, n_layers, hidden): row k is :func:`cas_direction` of the items outside fold k
    (``fold``: each item's fold, shape (n,), values 0..folds-1, every fold non-empty)."""
    folds = int(fold.max()) + 1
    if set(np.unique(fold).tolist()) != set(range(folds)):
        raise ValueError(f"folds must be numbered 0..{folds - 1}, each non-empty; got {sorted(set(fold.tolist()))}")
    return np.stack([cas_direction(with_context[fold != k], closed_book[fold != k]) for k in range(folds)])

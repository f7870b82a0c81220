"""Batching token-id rows: the one place that pads, orders and sizes batches,
and the one out-of-memory policy.

Every model operation (generation, likelihoods, choice logits, hidden states,
the Shapley subset scorer) cuts its rows with :func:`batches` under a
:class:`BatchPolicy`: rows longest first (an out-of-memory shows in the first
batch, and a batch holds rows of similar length), at most ``batch_size`` rows
and at most ``token_budget`` padded tokens (rows × longest row) per batch. On
out-of-memory the policy halves (rows and budget) and the same batch is cut
again, down to one row; the halved limits stay for the rest of the job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


def pad_batch(prompts: Sequence[Sequence[int]], pad_id: int, *, side: str = "left"):
    """``(input_ids, attention_mask)``, both long tensors of shape
    (len(prompts), longest prompt), padded on ``side`` with ``pad_id``."""
    import torch

    if side not in ("left", "right"):
        raise ValueError(f"padding side must be 'left' or 'right', got {side!r}")
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        span = slice(width - len(prompt), width) if side == "left" else slice(0, len(prompt))
        ids[row, span] = torch.tensor(list(prompt), dtype=torch.long)
        mask[row, span] = 1
    return ids, mask


def is_out_of_memory(err: BaseException) -> bool:
    """A CUDA or host allocation failure (torch raises both as RuntimeError subclasses)."""
    import torch

    return isinstance(err, (torch.OutOfMemoryError, MemoryError)) or "out of memory" in str(err).lower()


@dataclass
class BatchPolicy:
    """Limits of one batch: ``batch_size`` rows and ``token_budget`` padded
    tokens (None: no limit of that kind; at least one must be set)."""

    batch_size: int | None = None
    token_budget: int | None = None

    def __post_init__(self):
        if self.batch_size is None and self.token_budget is None:
            raise ValueError("a batch policy needs a batch_size, a token_budget or both")
        for name in ("batch_size", "token_budget"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")

    def fits(self, rows: int, width: int) -> bool:
        return (self.batch_size is None or rows <= self.batch_size) and (
            self.token_budget is None or rows * width <= self.token_budget
        )

    def halve(self) -> bool:
        """Halve both limits; False when a batch is already a single row at
        the smallest budget (nothing left to shrink)."""
        smaller = False
        if self.batch_size is not None and self.batch_size > 1:
            self.batch_size //= 2
            smaller = True
        if self.token_budget is not None and self.token_budget > 64:
            self.token_budget //= 2
            smaller = True
        return smaller


def batches(
    lengths: Sequence[int],
    run: Callable[[list[int]], T],
    policy: BatchPolicy,
    *,
    order: Sequence[int] | None = None,
) -> Iterator[tuple[list[int], T]]:
    """Yield ``(indices, run(indices))`` for consecutive batches of rows.

    ``lengths[i]`` is row i's length in tokens; rows are taken in ``order``
    (default: longest first) and grouped while ``policy`` fits. A batch whose
    ``run`` runs out of memory is retried after :meth:`BatchPolicy.halve`;
    any other error, or running out of memory on one row at the smallest
    limits, propagates.
    """
    order = list(order) if order is not None else sorted(range(len(lengths)), key=lambda i: -lengths[i])
    start = 0
    while start < len(order):
        chunk = [order[start]]
        width = lengths[order[start]]
        for i in order[start + 1 :]:
            wider = max(width, lengths[i])
            if not policy.fits(len(chunk) + 1, wider):
                break
            chunk.append(i)
            width = wider
        try:
            out = run(chunk)
        except (RuntimeError, MemoryError) as err:
            if not is_out_of_memory(err) or not policy.halve():
                raise
            log.warning("out of memory on a batch of %d rows; limits halved to %s", len(chunk), policy)
            _empty_cache()
            continue
        yield chunk, out
        start += len(chunk)


def map_batches(
    lengths: Sequence[int],
    run: Callable[[list[int]], Sequence[T]],
    policy: BatchPolicy,
    *,
    order: Sequence[int] | None = None,
) -> list[T]:
    """``run`` over batches (see :func:`batches`, which takes rows in ``order``), one result per row, in input order."""
    results: list = [None] * len(lengths)
    for chunk, out in batches(lengths, run, policy, order=order):
        for i, value in zip(chunk, out):
            results[i] = value
    return results


def _empty_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()

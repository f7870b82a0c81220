"""Padding token-id prompts into batches (the one place that does it)."""

from __future__ import annotations

from typing import Sequence


def longest_first(prompts: Sequence[Sequence[int]]) -> list[int]:
    """Prompt indices, longest first: an out-of-memory shows in the first
    batch, and batches hold prompts of similar length."""
    return sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))


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

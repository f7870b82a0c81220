"""Next-token logits over a fixed set of answer tokens.

One forward per batch of left-padded prompts, the LM head at the last
position only; the read-out of arbitration's A/B, ConflictBank's A–D and
closed judge verdicts.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from conflictlab.lm.batching import BatchPolicy, map_batches, pad_batch
from conflictlab.lm.loading import LoadedModel


def single_token_ids(tokenizer, texts: Sequence[str]) -> list[int]:
    """The token id of each of ``texts``, each of which must encode to exactly
    one token (no special tokens), else ValueError naming it."""
    ids = []
    for text in texts:
        encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(encoded) != 1:
            raise ValueError(
                f"answer option {text!r} is {len(encoded)} tokens for {type(tokenizer).__name__} "
                f"({tokenizer.name_or_path}); a choice read-out needs exactly one"
            )
        ids.append(encoded[0])
    return ids


def choice_logits(
    lm: LoadedModel, prompts: Sequence[Sequence[int]], token_ids: Sequence[int], *, batch_size: int = 8
) -> np.ndarray:
    """Logits of ``token_ids`` at the position after each prompt, float64,
    shape (len(prompts), len(token_ids)). A softmax over a row equals the
    next-token distribution renormalised over those tokens."""
    import torch

    select = torch.tensor(list(token_ids), device=lm.device)

    def run(batch: list[int]) -> np.ndarray:
        ids, mask = pad_batch([prompts[i] for i in batch], lm.pad_id, side="left")
        with torch.inference_mode():
            logits = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device), logits_to_keep=1).logits[:, -1]
        return logits[:, select].float().cpu().numpy().astype(np.float64)

    rows = map_batches([len(p) for p in prompts], run, BatchPolicy(batch_size=batch_size))
    return np.array(rows, dtype=np.float64).reshape(len(prompts), len(token_ids))

"""Residual-stream activations at the last prompt token, every layer, one pass.

``last_token_states`` runs one forward per batch with
``output_hidden_states=True`` and keeps, for each prompt, the hidden state
after every decoder layer at its last non-padding position (found from the
attention mask, so left and right padding both work). The paper's code ran a
separate full forward per layer; here every layer comes from the same pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.batching import longest_first, pad_batch


def last_token_index(attention_mask):
    """Index of the last non-padding position of each row, shape (batch,).

    Works for left padding (last column) and right padding (last 1 in the
    row) alike.
    """
    import torch

    positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    return (attention_mask.long() * positions).argmax(dim=1)


@dataclass
class ExtractionStats:
    prompts: int = 0
    forwards: int = 0


def last_token_states(
    model,
    prompts: Sequence[Sequence[int]],
    *,
    batch_size: int = 8,
    pad_id: int = 0,
    padding_side: str = "left",
    stats: ExtractionStats | None = None,
) -> np.ndarray:
    """Hidden states after each decoder layer at each prompt's last token.

    Returns float32 array of shape (len(prompts), n_layers, hidden_size).
    Prompts are batched longest first; each batch is one forward pass.
    """
    import torch

    device = next(model.parameters()).device
    n_layers = model.config.get_text_config().num_hidden_layers
    hidden = model.config.get_text_config().hidden_size
    out = np.empty((len(prompts), n_layers, hidden), dtype=np.float32)
    order = longest_first(prompts)
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        ids, mask = pad_batch([prompts[i] for i in batch], pad_id, side=padding_side)
        ids, mask = ids.to(device), mask.to(device)
        with torch.inference_mode():
            result = model(input_ids=ids, attention_mask=mask, output_hidden_states=True, logits_to_keep=1)
        # hidden_states[0] is the embedding output; [1:] follow each layer.
        states = torch.stack(result.hidden_states[1 : n_layers + 1], dim=1)  # (batch, layers, seq, d)
        last = last_token_index(mask)
        picked = states[torch.arange(len(batch), device=device), :, last]  # (batch, layers, d)
        out[batch] = picked.float().cpu().numpy()
        if stats is not None:
            stats.forwards += 1
            stats.prompts += len(batch)
    return out


INDEX_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),
        pa.field("n_prompt_tokens", pa.int32(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("rule", pa.string(), nullable=False),  # pair rule ("" for projection prompts)
        pa.field("ambiguous", pa.bool_(), nullable=False),
    ]
)

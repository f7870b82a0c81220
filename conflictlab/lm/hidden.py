"""Residual-stream states at the last prompt token, every layer, one pass.

:func:`hidden_states` runs one forward per batch (cut by
:func:`conflictlab.lm.batching.batches`) and keeps, for each prompt, the
output of every decoder layer (forward hooks) at its last non-padding
position (found from the attention mask, so left and right padding both
work). The paper's code ran a separate full forward per layer; here every
layer comes from the same pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conflictlab.lm.batching import BatchPolicy, batches, pad_batch
from conflictlab.lm.loading import LoadedModel, require_decoder_only


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


def hidden_states(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    *,
    batch_size: int = 8,
    padding_side: str = "left",
    stats: ExtractionStats | None = None,
) -> np.ndarray:
    """Hidden states after each decoder layer at each prompt's last token.

    Returns float32 array of shape (len(prompts), n_layers, hidden_size).
    """
    import torch

    require_decoder_only(lm, "hidden states at the last prompt token")
    layers = lm.model.get_decoder().layers
    out = np.empty((len(prompts), len(layers), lm.hidden_size), dtype=np.float32)
    # Forward hooks on the decoder layers rather than output_hidden_states:
    # transformers returns the last entry after the final norm, which is not
    # the residual stream. All layers are still read from one pass.
    captured: dict[int, torch.Tensor] = {}
    picked_index: dict[str, torch.Tensor] = {}

    def capture(layer_index):
        def hook(module, inputs, output):
            states = output[0] if isinstance(output, tuple) else output
            rows = torch.arange(states.shape[0], device=states.device)
            # A split model's layers sit on several devices, the mask on the first.
            captured[layer_index] = states[rows, picked_index["last"].to(states.device)].float().cpu()

        return hook

    def run(batch: list[int]) -> np.ndarray:
        ids, mask = pad_batch([prompts[i] for i in batch], lm.pad_id, side=padding_side)
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        picked_index["last"] = last_token_index(mask)
        captured.clear()
        with torch.inference_mode():
            lm.model(input_ids=ids, attention_mask=mask, logits_to_keep=1)
        return torch.stack([captured[i] for i in range(len(layers))], dim=1).numpy()

    handles = [layer.register_forward_hook(capture(i)) for i, layer in enumerate(layers)]
    try:
        for batch, states in batches([len(p) for p in prompts], run, BatchPolicy(batch_size=batch_size)):
            out[batch] = states
            if stats is not None:
                stats.forwards += 1
                stats.prompts += len(batch)
    finally:
        for handle in handles:
            handle.remove()
    return out


def hidden_states_of_sets(
    lm: LoadedModel,
    prompt_sets: Sequence[Sequence[Sequence[int]]],
    *,
    batch_size: int = 8,
    stats: ExtractionStats | None = None,
) -> list[np.ndarray]:
    """:func:`hidden_states` of several prompt lists, each distinct prompt
    forwarded once (analyses that share prompts, such as a conflict prompt that
    is also the combined prompt of a projection, pay for it once).

    Returns one float32 array per list, shape (len(list), n_layers, hidden_size).
    """
    distinct: dict[tuple[int, ...], int] = {}
    rows = [[distinct.setdefault(tuple(p), len(distinct)) for p in prompts] for prompts in prompt_sets]
    states = hidden_states(lm, [list(p) for p in distinct], batch_size=batch_size, stats=stats)
    return [states[r] for r in rows]

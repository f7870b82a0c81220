"""Activation steering hooks: add a vector to decoder layers' outputs while a model runs.

Injection: h^(l) <- h^(l) + alpha * u^(l) on the output of decoder layer l, for
the configured layers, at one position per sequence per forward pass:

* ``first_generated``: only in the prefill pass, at the last prompt position
  (the step that produces the first generated token);
* ``all_tokens``: that position and, in every later decoding step, the
  position of the token being fed (so every generated token's position
  except the last one, which is never fed back).

With left padding the last prompt position is the last column for every row,
so padding and earlier prompt positions are never touched (checked: the hook
refuses a batch whose last column is padding). Hooks are removed on exit,
including on error.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field

import numpy as np

SCHEDULES = ("first_generated", "all_tokens")


@dataclass
class InjectionLog:
    """What the hooks did: one ``(forward, layer, rows, position, width)``
    entry per addition, ``position`` being the sequence index in a pass of
    ``width`` positions."""

    forwards: int = 0
    additions: list[tuple[int, int, int, int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Steering:
    """``alpha * direction[l]`` added to decoder layer l's output under ``schedule``.

    ``direction``: (n_layers, hidden); ``layers``: 0-based decoder layers to
    steer (None: all).
    """

    direction: np.ndarray
    alpha: float
    schedule: str
    layers: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"unknown steering schedule {self.schedule!r}; known: {', '.join(SCHEDULES)}")

    def key(self) -> str:
        """A digest of everything that changes the steered output."""
        digest = hashlib.sha256(np.ascontiguousarray(self.direction, dtype=np.float32).tobytes())
        digest.update(repr((float(self.alpha), self.schedule, self.layers)).encode())
        return digest.hexdigest()[:16]

    @contextlib.contextmanager
    def hooks(self, model, log: InjectionLog | None = None):
        """Register the injection hooks on ``model`` (a transformers causal
        LM) for the duration of the ``with`` block."""
        import torch

        decoder_layers = model.get_decoder().layers
        if self.direction.shape[0] != len(decoder_layers):
            raise ValueError(f"steering direction has {self.direction.shape[0]} layers, the model {len(decoder_layers)}")
        layers = range(len(decoder_layers)) if self.layers is None else self.layers
        bad = [layer for layer in layers if not 0 <= layer < len(decoder_layers)]
        if bad:
            raise ValueError(f"steering.layers {bad} outside the model's 0..{len(decoder_layers) - 1}")
        param = next(model.parameters())
        vectors = {layer: (self.alpha * torch.as_tensor(self.direction[layer])).to(param.device, param.dtype) for layer in layers}
        log = log if log is not None else InjectionLog()
        state = {"prefill": True}

        def before_forward(module, args, kwargs):
            cache = kwargs.get("past_key_values")
            state["prefill"] = cache is None or cache.get_seq_length() == 0
            mask = kwargs.get("attention_mask")
            if state["prefill"] and mask is not None and mask.dim() == 2 and not bool(mask[:, -1].all()):
                raise ValueError("steering needs left-padded prompts: the last position of some row is padding")
            log.forwards += 1

        def after_layer(layer):
            def hook(module, inputs, output):
                if self.schedule == "first_generated" and not state["prefill"]:
                    return None
                hidden = output[0] if isinstance(output, tuple) else output
                hidden[:, -1, :] += vectors[layer]
                log.additions.append((log.forwards - 1, layer, hidden.shape[0], hidden.shape[1] - 1, hidden.shape[1]))
                return None

            return hook

        handles = [model.register_forward_pre_hook(before_forward, with_kwargs=True)]
        try:
            handles += [decoder_layers[layer].register_forward_hook(after_layer(layer)) for layer in layers]
            yield log
        finally:
            for handle in handles:
                handle.remove()

"""Activation steering hooks: add a vector to decoder layers' outputs while a model runs.

Injection: h^(l) <- h^(l) + alpha * u^(l) on the output of decoder layer l, for
the configured layers, at one position per sequence per forward pass (one
steering for every row of a batch, or one per row: :func:`steering_hooks`):

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

    def hooks(self, model, log: InjectionLog | None = None):
        """Register the injection hooks on ``model`` (a transformers causal
        LM) for the duration of the ``with`` block, the same vector for every row."""
        return steering_hooks(model, self, log)


def _layer_vectors(steerings, n_layers: int, device, dtype):
    """Per decoder layer, the vector added in the first pass and the one
    added in later passes (None where nothing is added), on ``device`` in
    ``dtype``: shape (hidden,) for one :class:`Steering`, (rows, hidden) for
    per-row steerings."""
    import torch

    rows = [steerings] if isinstance(steerings, Steering) else list(steerings)
    for s in rows:
        if s is None:
            continue
        if s.direction.shape[0] != n_layers:
            raise ValueError(f"steering direction has {s.direction.shape[0]} layers, the model {n_layers}")
        bad = [layer for layer in (s.layers or ()) if not 0 <= layer < n_layers]
        if bad:
            raise ValueError(f"steering.layers {bad} outside the model's 0..{n_layers - 1}")

    def vector(s, layer, later):
        if s is None or (s.layers is not None and layer not in s.layers) or (later and s.schedule == "first_generated"):
            return None
        return s.alpha * torch.as_tensor(s.direction[layer])

    first, later = {}, {}
    for layer in range(n_layers):
        for out, is_later in ((first, False), (later, True)):
            vectors = [vector(s, layer, is_later) for s in rows]
            if all(v is None for v in vectors):
                continue
            if isinstance(steerings, Steering):
                stacked = vectors[0]
            else:  # unsteered rows get exact zeros: h + 0 == h
                zero = torch.zeros_like(next(v for v in vectors if v is not None))
                stacked = torch.stack([zero if v is None else v for v in vectors])
            out[layer] = stacked.to(device, dtype)
    return first, later


@contextlib.contextmanager
def steering_hooks(model, steerings, log: InjectionLog | None = None):
    """Injection hooks on ``model`` for the duration of the ``with`` block.

    ``steerings``: one :class:`Steering` for every row, or one ``Steering |
    None`` per batch row (rows of one batch steered differently, None
    unsteered). The first forward pass under the hooks is the one that
    produces the first generated token: a prefill from an empty cache, or the
    last prompt token on top of a cache already holding the prompt's earlier
    positions (:meth:`conflictlab.lm.generation.HFBackend.generate_variants`).
    """
    from conflictlab.lm.placement import input_device

    decoder_layers = model.get_decoder().layers
    first, later = _layer_vectors(steerings, len(decoder_layers), input_device(model), model.dtype)
    log = log if log is not None else InjectionLog()
    state = {"first": True, "entered": log.forwards}

    def before_forward(module, args, kwargs):
        cache = kwargs.get("past_key_values")
        state["first"] = cache is None or cache.get_seq_length() == 0 or log.forwards == state["entered"]
        mask = kwargs.get("attention_mask")
        if state["first"] and mask is not None and mask.dim() == 2 and not bool(mask[:, -1].all()):
            raise ValueError("steering needs left-padded prompts: the last position of some row is padding")
        log.forwards += 1

    def after_layer(layer):
        def hook(module, inputs, output):
            vector = (first if state["first"] else later).get(layer)
            if vector is None:
                return None
            hidden = output[0] if isinstance(output, tuple) else output
            if vector.dim() == 2 and vector.shape[0] != hidden.shape[0]:
                raise ValueError(f"per-row steering for {vector.shape[0]} rows on a batch of {hidden.shape[0]}")
            # A split model's layers sit on several devices: a no-op on one.
            hidden[:, -1, :] += vector.to(hidden.device)
            log.additions.append((log.forwards - 1, layer, hidden.shape[0], hidden.shape[1] - 1, hidden.shape[1]))
            return None

        return hook

    handles = [model.register_forward_pre_hook(before_forward, with_kwargs=True)]
    try:
        handles += [
            decoder_layers[layer].register_forward_hook(after_layer(layer)) for layer in sorted(set(first) | set(later))
        ]
        yield log
    finally:
        for handle in handles:
            handle.remove()

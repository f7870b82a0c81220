"""Activation steering (paper §5): calibration split, directions, injection.

Split. Per conflict type and per subset, a seeded shuffle puts
``calibration_count(n, fraction)`` samples into calibration and the rest into
test (``round(fraction * n)``, at least one of each when the subset has two or
more samples; a one-sample subset goes to test).

Directions, per layer l (every decoder layer; residual stream = the layer's
output at the prompt's final token, read by :func:`conflictlab.activations.last_token_states`):

* ``mean_difference`` (the paper's Eq. 6): for calibration sample n with K
  pieces, a_{n,i} from the K single-evidence prompts and c_n from the combined
  prompt; mu_n = mean_i a_{n,i}; mu_bar and c_bar average over samples;
  u = (mu_bar - c_bar) / max(||mu_bar - c_bar||, 1e-8). Adding it moves the
  combined representation toward the neutral centre of the single pieces.
* ``cas`` (Context-Aware Steering baseline, "amplifies the model's overall
  reliance on context"): q_n from the question-only prompt (the combined
  template without its evidence block); u = (c_bar - q_bar) / max(||c_bar -
  q_bar||, 1e-8). Adding it moves a representation from "no context" toward
  "with context".

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
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.io import atomic_path

SCHEDULES = ("first_generated", "all_tokens")


# --------------------------------------------------------------------------
# Calibration / test split.


def calibration_count(n: int, fraction: float) -> int:
    """Calibration samples out of a subset of ``n`` (round half up)."""
    if n < 2:
        return 0
    return min(n - 1, max(1, math.floor(fraction * n + 0.5)))


def steering_split(samples: pa.Table, *, calibration_fraction: float, seed: int) -> tuple[pa.Table, pa.Table]:
    """Seeded calibration/test split of one type's samples, stratified by subset.

    Returns ``(calibration, test)``, both with ``samples``' schema and rows in
    their original order.
    """
    if not 0.0 < calibration_fraction < 1.0:
        raise ValueError(f"steering.calibration_fraction must lie in (0, 1), got {calibration_fraction}")
    rng = np.random.default_rng(seed)
    subsets = samples.column("subset").to_pylist()
    calibration: list[int] = []
    for subset in dict.fromkeys(subsets):
        rows = [i for i, s in enumerate(subsets) if s == subset]
        picked = rng.permutation(len(rows))[: calibration_count(len(rows), calibration_fraction)]
        calibration += [rows[i] for i in picked]
    chosen = set(calibration)
    test = [i for i in range(samples.num_rows) if i not in chosen]
    return samples.take(sorted(chosen)), samples.take(test)


# --------------------------------------------------------------------------
# Directions.


def unit_direction(target: np.ndarray, source: np.ndarray, eps: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """(target - source) / max(||target - source||, eps), row by row.

    ``target`` and ``source`` have shape (n_layers, hidden); returns the unit
    directions (n_layers, hidden) and the norms before scaling (n_layers,).
    """
    diff = np.asarray(target, dtype=np.float64) - np.asarray(source, dtype=np.float64)
    norms = np.linalg.norm(diff, axis=-1)
    return (diff / np.maximum(norms, eps)[:, None]).astype(np.float32), norms


def steering_directions(
    combined: np.ndarray, singles: Sequence[np.ndarray], question_only: np.ndarray, *, eps: float = 1e-8
) -> dict[str, np.ndarray]:
    """Both steering directions from calibration activations.

    ``combined`` and ``question_only``: (N, n_layers, hidden), one row per
    calibration sample; ``singles``: N arrays of shape (K_n, n_layers, hidden).
    Returns ``mean_difference`` and ``cas`` (n_layers, hidden) and their
    pre-normalisation norms ``*_norm`` (n_layers,).
    """
    if len(singles) != len(combined) or len(question_only) != len(combined) or len(combined) == 0:
        raise ValueError(f"need the same N >= 1 samples in every input, got {len(combined)}, {len(singles)}, {len(question_only)}")
    mu_bar = np.mean([np.mean(a, axis=0) for a in singles], axis=0)
    c_bar = np.mean(combined, axis=0)
    q_bar = np.mean(question_only, axis=0)
    mean_difference, md_norm = unit_direction(mu_bar, c_bar, eps)
    cas, cas_norm = unit_direction(c_bar, q_bar, eps)
    return {"mean_difference": mean_difference, "cas": cas, "mean_difference_norm": md_norm, "cas_norm": cas_norm}


def direction_prompts(tokenizer, samples: list[dict], templates: dict[str, str]) -> list[dict]:
    """Per sample: the combined prompt, one prompt per piece (as in the
    projection analysis) and the question-only prompt (``question_only``)."""
    from conflictlab.mechanistic import projection_prompts
    from conflictlab.prompts import build_messages, encode_messages

    rows = []
    for sample, prompts in zip(samples, _by_sample(projection_prompts(tokenizer, samples, templates), samples)):
        question_only = build_messages(templates[sample["task_family"]], sample["question"], [])
        rows += prompts + [{**prompts[0], "variant": "question_only", "ids": encode_messages(tokenizer, question_only)[1]}]
    return rows


def _by_sample(rows: list[dict], samples: list[dict]) -> list[list[dict]]:
    grouped: dict[str, list[dict]] = {s["sample_id"]: [] for s in samples}
    for row in rows:
        grouped[row["sample_id"]].append(row)
    return [grouped[s["sample_id"]] for s in samples]


def directions_from_states(prompts: list[dict], states: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`steering_directions` from :func:`direction_prompts` rows and
    their states (len(prompts), n_layers, hidden)."""
    by_id: dict[str, dict[str, list[int]]] = {}
    for row, prompt in enumerate(prompts):
        kind = "single" if prompt["variant"].startswith("single_") else prompt["variant"]
        by_id.setdefault(prompt["sample_id"], {}).setdefault(kind, []).append(row)
    ids = list(by_id)
    return steering_directions(
        states[[by_id[i]["combined"][0] for i in ids]],
        [states[by_id[i]["single"]] for i in ids],
        states[[by_id[i]["question_only"][0] for i in ids]],
    )


def save_directions(path, directions: dict[str, np.ndarray], calibration_ids: Sequence[str]) -> None:
    """One ``.npz`` per (model, type): both directions, their norms and the
    calibration sample ids they came from (written atomically)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, calibration_ids=np.array(list(calibration_ids), dtype=str), **directions)


def load_directions(path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


# --------------------------------------------------------------------------
# Injection.


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


# --------------------------------------------------------------------------
# Results: Table 4 and Figure 31 from the steered reruns' metric summaries.

METHOD_LABELS = {"base": "Base", "all_tokens": "All-Tokens", "first_generated": "First-Generated", "cas": "CAS"}
HIGHER_IS_BETTER = {"accuracy": True, "balance": False}

STEERING_RESULT_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("alpha", pa.float64(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),  # accuracy | balance
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("n", pa.int64(), nullable=False),  # samples behind the value (Balance: defined shares only)
    ]
)


def steering_results(
    variants: dict[str, tuple[str, float]], accuracy_summary: pa.Table | None, balance_summary: pa.Table | None
) -> pa.Table:
    """One row per (steered rerun, metric, type).

    ``variants`` maps a variant name to (method, alpha); the summaries are
    :func:`conflictlab.accuracy.summarize_accuracy` and
    :func:`conflictlab.balance.summarize_balance` tables whose ``model`` is
    ``name@variant``.
    """
    rows = []

    def add(full_name, metric, conflict_type, value, low, high, n):
        model, variant = full_name.split("@", 1)
        method, alpha = variants[variant]
        rows.append({"model": model, "variant": variant, "method": method, "alpha": float(alpha), "metric": metric,
                     "conflict_type": conflict_type, "value": value, "ci_low": low, "ci_high": high, "n": n})

    for r in [] if accuracy_summary is None else accuracy_summary.to_pylist():
        if r["level"] == "type":
            add(r["model"], "accuracy", r["conflict_type"], r["accuracy"], r["ci_low"], r["ci_high"], r["n"])
    for r in [] if balance_summary is None else balance_summary.to_pylist():
        if r["group"] == "all":
            add(r["model"], "balance", r["conflict_type"], r["balance"], r["ci_low"], r["ci_high"], r["n_scored"] - r["n_undefined"])
    return pa.Table.from_pylist(rows, schema=STEERING_RESULT_SCHEMA)


def rank_marks(values: Sequence[float], *, higher_is_better: bool, decimals: int = 1) -> list[str]:
    """``"best"``, ``"second"`` or ``""`` per value, compared as displayed
    (percent with ``decimals``), so displayed ties share a mark; NaN gets none."""
    shown = [None if v is None or math.isnan(v) else round(100 * v, decimals) for v in values]
    distinct = sorted({v for v in shown if v is not None}, reverse=higher_is_better)
    marks = {value: mark for value, mark in zip(distinct, ("best", "second"))}
    return [marks.get(v, "") if v is not None else "" for v in shown]


def table4(results: pa.Table, *, table_variants: Sequence[str], columns: Sequence[tuple[str, str]]) -> tuple[list[dict], list[str]]:
    """Table 4 cells and the CI notes.

    ``columns``: (metric, conflict_type) pairs. Returns one dict per (model,
    method) row with, per column key ``"<metric>:<type>"``, a dict of
    ``value``, ``ci_low``, ``ci_high`` and ``mark`` (best/second within the
    model block); and a note per column and model where the best value's 95%
    CI overlaps the second's (not separated at this sample size).
    """
    data = {(r["model"], r["variant"], r["metric"], r["conflict_type"]): r for r in results.to_pylist()}
    methods = {(r["model"], r["variant"]): r["method"] for r in data.values()}
    models = list(dict.fromkeys(results.column("model").to_pylist()))
    rows, notes = [], []
    for model in models:
        missing = [v for v in table_variants if (model, v) not in methods]
        if missing:
            raise ValueError(f"no steering results for {model}@{missing[0]}")
        block = [{"model": model, "method": METHOD_LABELS[methods[model, v]], "variant": v} for v in table_variants]
        for metric, conflict_type in columns:
            cells = [data.get((model, v, metric, conflict_type)) for v in table_variants]
            values = [math.nan if c is None or c["value"] is None else c["value"] for c in cells]
            marks = rank_marks(values, higher_is_better=HIGHER_IS_BETTER[metric])
            for row, cell, mark in zip(block, cells, marks):
                row[f"{metric}:{conflict_type}"] = None if cell is None else {**cell, "mark": mark}
            best = [c for c, m in zip(cells, marks) if m == "best"]
            second = [c for c, m in zip(cells, marks) if m == "second"]
            if best and second and any(_overlap(b, s) for b in best for s in second):
                notes.append(f"{model}, {metric} {conflict_type}: the best value's 95% CI overlaps the second's")
        rows += block
    return rows, notes


def _overlap(a: dict, b: dict) -> bool:
    return not (a["ci_low"] > b["ci_high"] or b["ci_low"] > a["ci_high"])

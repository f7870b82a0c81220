"""ConflictBank's answer read-out: the next-token distribution over " A".." D".

The authors read the log-probabilities of those four tokens at the first
generated position from vLLM's top-1,000 list (a label outside it set to
−100) and softmax them. Here the same four next-token logits come from one
batched forward (:func:`conflictlab.lm.choices.choice_logits`); a softmax
over them is that distribution exactly, without the top-1,000 cut (which
only matters when a letter's probability is below the 1,000th token's).

A hosted chat model (:func:`read_out_hosted`) gets the prompt as its user
turn and is read the authors' way from what its endpoint returns: the four
letters' log-probabilities among the first reply token's top 20 (a letter
outside them -100, as the authors set one outside vLLM's top 1,000); where the
endpoint gives no log-probabilities, the letter the reply starts with (a
one-hot distribution). ``read_out`` records which per row; a row with
neither (a refusal, no letter) has ``predicted_letter`` ``none`` and a
uniform distribution, and counts as no answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import LETTERS
from conflictlab.conflictbank.prompts import SETTINGS_BY_NAME, Setting, render_prompt
from conflictlab.lm.choices import choice_logits, choice_logits_under
from conflictlab.lm.loading import LoadedModel
from conflictlab.lm.methods import GREEDY, as_method

PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("record_id", pa.int64(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("probabilities", pa.list_(pa.float64(), 4), nullable=False),
        pa.field("predicted_letter", pa.string(), nullable=False),
        pa.field("correct_letter", pa.string(), nullable=False),
        pa.field("replaced_letter", pa.string(), nullable=False),
        pa.field("uncertain_letter", pa.string(), nullable=False),
        pa.field(
            "read_out", pa.string(), nullable=False
        ),  # logits (local) | logprobs | generation | none (conflictlab.lm.chat)
    ]
)

LOCAL_READ_OUT, NO_LETTER = "logits", "none"


def letter_token_ids(tokenizer) -> list[int]:
    """The ids of " A", " B", " C", " D" as the authors take them: the last id
    of encoding each with a leading space, without special tokens."""
    ids = [tokenizer(f" {letter}", add_special_tokens=False)["input_ids"][-1] for letter in LETTERS]
    if len(set(ids)) != 4:
        raise ValueError(f"{tokenizer.name_or_path}: the letters A-D do not map to four distinct tokens ({ids})")
    return ids


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of (n, k) logits, float64."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def read_out(
    lm: LoadedModel, records: pa.Table, settings: Sequence[Setting], *, model_name: str, batch_size: int = 8
) -> pa.Table:
    """One prediction row per (record, setting), records in order within each setting."""
    return read_out_with_method(lm, records, settings, GREEDY, model_name=model_name, batch_size=batch_size)


def read_out_with_method(
    lm: LoadedModel, records: pa.Table, settings: Sequence[Setting], method, *, model_name: str, batch_size: int = 8
) -> pa.Table:
    """:func:`read_out` under one conflict-resolution method (:func:`read_out_with_methods`)."""
    return read_out_with_methods(lm, records, settings, [method], model_names=[model_name], batch_size=batch_size)[0]


def read_out_with_methods(
    lm: LoadedModel,
    records: pa.Table,
    settings: Sequence[Setting],
    methods: Sequence,
    *,
    model_names: Sequence[str],
    batch_size: int = 8,
) -> list[pa.Table]:
    """:func:`read_out` under each conflict-resolution method
    (:class:`conflictlab.lm.methods.Method` or its spelling), one table per
    method, its rows' ``model`` from ``model_names``.

    CAD and AdaCAD contrast each prompt's letter logits with those of the
    same record's ``default`` prompt, the authors' prompt without evidence
    (its instruction is the no-evidence one, so that prompt is exactly what
    the benchmark asks a model that has no context); in ``default`` itself
    the contrast changes nothing. Greedy decoding and the contrastive
    methods share one pass over the prompts and one over the context-free
    ones (:func:`conflictlab.lm.choices.choice_logits_under`). A prompting
    method rewrites the prompt (:func:`conflictlab.conflictbank.prompts.render_prompt`'s ``style``).
    """
    methods = [as_method(m) for m in methods]
    pairs = _pairs(records, settings)

    def encode(text: str) -> list[int]:
        # Raw prompts with the tokenizer's own special tokens, as vLLM encodes them.
        return lm.tokenizer(text)["input_ids"]

    letters = letter_token_ids(lm.tokenizer)
    logits = {}
    plain = [m for m in methods if m.prompt_style is None]
    if plain:
        prompts = [encode(render_prompt(row, setting)) for setting, row in pairs]
        context_free = (
            [encode(render_prompt(row, SETTINGS_BY_NAME["default"])) for _, row in pairs]
            if any(m.contrastive for m in plain)
            else prompts
        )
        logits.update(zip(plain, choice_logits_under(lm, prompts, context_free, letters, plain, batch_size=batch_size)))
    for method in methods:
        if method.prompt_style is not None:
            prompts = [encode(render_prompt(row, setting, method.prompt_style)) for setting, row in pairs]
            logits[method] = choice_logits(lm, prompts, letters, batch_size=batch_size)
    return [
        _predictions(pairs, softmax(logits[m]), [LOCAL_READ_OUT] * len(pairs), name)
        for m, name in zip(methods, model_names)
    ]


def _pairs(records: pa.Table, settings: Sequence[Setting]) -> list[tuple[Setting, dict]]:
    """Every (setting, record), settings outer: the order of the prediction rows."""
    rows = records.to_pylist()
    return [(setting, row) for setting in settings for row in rows]


def conflictbank_conversations(records: pa.Table, settings: Sequence[Setting]) -> list[list[dict]]:
    """What a hosted chat model is sent, settings outer: each prompt as the user turn."""
    return _user_turns(_pairs(records, settings))


def _user_turns(pairs: list[tuple[Setting, dict]]) -> list[list[dict]]:
    return [[{"role": "user", "content": render_prompt(row, setting)}] for setting, row in pairs]


def read_out_hosted(
    backend, records: pa.Table, settings: Sequence[Setting], *, model_name: str, seed: int = 0
) -> pa.Table:
    """:func:`read_out` of a hosted chat model (a :class:`conflictlab.lm.chat.ChatBackend`)."""
    from conflictlab.lm.chat import READ_OUT_NONE

    pairs = _pairs(records, settings)
    conversations = _user_turns(pairs)
    read = backend.read_choices(
        conversations, LETTERS, rows=[f"{setting.name}/{row['record_id']}" for setting, row in pairs], seed=seed
    )
    probabilities = softmax(np.array([r.logprobs for r in read], dtype=np.float64).reshape(len(read), len(LETTERS)))
    predictions = _predictions(pairs, probabilities, [r.read_out for r in read], model_name)
    letters = [
        NO_LETTER if r.read_out == READ_OUT_NONE else letter
        for r, letter in zip(read, predictions.column("predicted_letter").to_pylist())
    ]
    return predictions.set_column(
        predictions.schema.get_field_index("predicted_letter"),
        PREDICTION_SCHEMA.field("predicted_letter"),
        pa.array(letters),
    )


def _predictions(pairs: list, probabilities: np.ndarray, read_outs: list[str], model_name: str) -> pa.Table:
    return pa.table(
        {
            "record_id": [row["record_id"] for _, row in pairs],
            "setting": [setting.name for setting, _ in pairs],
            "model": [model_name] * len(pairs),
            "probabilities": probabilities.tolist(),
            "predicted_letter": [LETTERS[i] for i in probabilities.argmax(axis=1)],
            "correct_letter": [row["correct_letter"] for _, row in pairs],
            "replaced_letter": [row["replaced_letter"] for _, row in pairs],
            "uncertain_letter": [row["uncertain_letter"] for _, row in pairs],
            "read_out": read_outs,
        },
        schema=PREDICTION_SCHEMA,
    )

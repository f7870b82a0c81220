"""ConflictBank's answer read-out: the next-token distribution over " A".." D".

The authors read the log-probabilities of those four tokens at the first
generated position from vLLM's top-1,000 list (a label outside it set to
−100) and softmax them. Here the same four next-token logits come from one
batched forward (:func:`conflictlab.lm.choices.choice_logits`); a softmax
over them is that distribution exactly, without the top-1,000 cut (which
only matters when a letter's probability is below the 1,000th token's).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import LETTERS
from conflictlab.conflictbank.prompts import Setting, render_prompt
from conflictlab.lm.choices import choice_logits
from conflictlab.lm.loading import LoadedModel

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
    ]
)


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
    rows = records.to_pylist()
    pairs = [(setting, row) for setting in settings for row in rows]
    # Raw prompts with the tokenizer's own special tokens, as vLLM encodes them.
    prompts = [lm.tokenizer(render_prompt(row, setting))["input_ids"] for setting, row in pairs]
    probabilities = softmax(choice_logits(lm, prompts, letter_token_ids(lm.tokenizer), batch_size=batch_size))
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
        },
        schema=PREDICTION_SCHEMA,
    )

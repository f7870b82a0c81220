"""The arbitration read-out: the larger of the next-token logits of "A" and "B".

Through the model layer's :func:`conflictlab.lm.choices.choice_logits` (one
left-padded forward per batch, the head at the last position only). A hosted
chat model is read from its endpoint (:func:`evaluate_instances_hosted`): the
log-probabilities of "A" and "B" among the first reply token's top
alternatives, or the letter its reply starts with where the endpoint gives no
log-probabilities (:meth:`conflictlab.lm.chat.ChatBackend.read_choices`); the
column ``read_out`` says which, per row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.arbitration.prompts import context_free_prompt, encode_arbitration_prompt, method_prompt
from conflictlab.lm.choices import choice_logits, choice_logits_under, single_token_ids
from conflictlab.lm.loading import LoadedModel
from conflictlab.lm.methods import GREEDY, as_method


def answer_token_ids(tokenizer, *, chat: bool) -> tuple[int, int]:
    """Token ids of "A" and "B" as the model's next token.

    After a chat template's generation prompt the answer starts a turn
    ("A"); after the plain "Answer:" it follows a space (" A"). Each must be
    exactly one token for this tokenizer, else the read-out is refused.
    """
    a, b = single_token_ids(tokenizer, ["A", "B"] if chat else [" A", " B"])
    return a, b


PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("logit_a", pa.float64(), nullable=False),
        pa.field("logit_b", pa.float64(), nullable=False),
        pa.field("predicted_letter", pa.string(), nullable=False),  # A | B | tie (no letter read: counted wrong)
        pa.field("correct", pa.bool_(), nullable=False),
        pa.field(
            "read_out", pa.string(), nullable=False
        ),  # logits (local) | logprobs | generation | none (conflictlab.lm.chat)
    ]
)

LOCAL_READ_OUT = "logits"


def evaluate_instances(
    lm: LoadedModel, instances: pa.Table, *, model_name: str, batch_size: int = 8, method=GREEDY
) -> pa.Table:
    """A/B read-out for every instance (ties go to neither: counted wrong)
    under one conflict-resolution method (greedy: the plain read-out;
    :func:`evaluate_with_methods`)."""
    return evaluate_with_methods(lm, instances, [method], model_names=[model_name], batch_size=batch_size)[0]


def evaluate_with_methods(
    lm: LoadedModel, instances: pa.Table, methods: Sequence, *, model_names: Sequence[str], batch_size: int = 8
) -> list[pa.Table]:
    """:func:`evaluate_instances` under each conflict-resolution method
    (:class:`conflictlab.lm.methods.Method` or its spelling), one table per
    method, its rows' ``model`` from ``model_names``. CAD and AdaCAD contrast
    each prompt with :func:`conflictlab.arbitration.prompts.context_free_prompt`,
    sharing one pass over the prompts and one over the context-free ones
    with greedy decoding (:func:`conflictlab.lm.choices.choice_logits_under`);
    a prompting method reads :func:`conflictlab.arbitration.prompts.method_prompt`."""
    methods = [as_method(m) for m in methods]
    answers = answer_token_ids(lm.tokenizer, chat=lm.has_chat_template)
    rows = instances.select(["prompt", "context", "question"]).to_pylist()
    logits = {}
    plain = [m for m in methods if m.prompt_style is None]
    if plain:
        prompts = [encode_arbitration_prompt(lm.tokenizer, row["prompt"]) for row in rows]
        context_free = (
            [encode_arbitration_prompt(lm.tokenizer, context_free_prompt(row)) for row in rows]
            if any(m.contrastive for m in plain)
            else prompts
        )
        logits.update(zip(plain, choice_logits_under(lm, prompts, context_free, answers, plain, batch_size=batch_size)))
    for method in methods:
        if method.prompt_style is not None:
            prompts = [encode_arbitration_prompt(lm.tokenizer, method_prompt(row, method.prompt_style)) for row in rows]
            logits[method] = choice_logits(lm, prompts, answers, batch_size=batch_size)
    return [
        _predictions(instances, logits[m], [LOCAL_READ_OUT] * instances.num_rows, name)
        for m, name in zip(methods, model_names)
    ]


def arbitration_conversations(instances: pa.Table) -> list[list[dict]]:
    """What a hosted chat model is sent: each prompt as the user turn, as a local chat model gets it."""
    return [[{"role": "user", "content": prompt}] for prompt in instances.column("prompt").to_pylist()]


def evaluate_instances_hosted(backend, instances: pa.Table, *, model_name: str, seed: int = 0) -> pa.Table:
    """The A/B read-out of a hosted chat model (a :class:`conflictlab.lm.chat.ChatBackend`)."""
    conversations = arbitration_conversations(instances)
    read = backend.read_choices(conversations, ("A", "B"), rows=instances.column("instance_id").to_pylist(), seed=seed)
    logits = np.array([r.logprobs for r in read], dtype=np.float64).reshape(len(read), 2)
    return _predictions(instances, logits, [r.read_out for r in read], model_name)


def _predictions(instances: pa.Table, logits: np.ndarray, read_outs: list[str], model_name: str) -> pa.Table:
    letters = pa.array(
        np.where(logits[:, 0] > logits[:, 1], "A", np.where(logits[:, 1] > logits[:, 0], "B", "tie")), pa.string()
    )
    return pa.table(
        {
            "instance_id": instances.column("instance_id"),
            "model": [model_name] * instances.num_rows,
            "logit_a": logits[:, 0],
            "logit_b": logits[:, 1],
            "predicted_letter": letters,
            "correct": pc.fill_null(pc.equal(letters, instances.column("answer_letter")), False),
            "read_out": read_outs,
        },
        schema=PREDICTION_SCHEMA,
    )

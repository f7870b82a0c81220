"""One model's CONFLICTS answers: Task 1 (conflict type) and Task 2 (a cited
response under each strategy), from one model load.

Task 1 is read two ways. In process (``hf``) it is the most likely category
name after the prompt and ``Type:`` (:func:`task1_scores`, the names scored in full since they share first tokens;
exact, nothing to parse). Generating backends (``vllm``, ``openai``) continue
``Type:`` greedily and the label is parsed strictly; an unparseable label is
kept as null and counted. The Pipeline strategy then answers with the type
*predicted* here, Oracle with the gold type; a Pipeline query whose Task 1
label was unparseable is not generated (status ``no_predicted_type``).

The Taxonomy-aware reply is prefilled with ``Type:`` (in every backend: the
prefix is part of the prompt's token ids) and split by
:func:`conflictlab.conflicts.prompts.parse_taxonomy_aware`; a reply outside
the Type/Explanation/Response form has status ``unparseable`` and no
response to judge.

Models that reason before they answer (GPT-OSS's harmony format, recognised
by :meth:`conflictlab.lm.channels.HarmonyTokens.of`) are split as in
ContextConflict, by :func:`conflictlab.lm.channels.final_message`: only the
final channel is parsed and judged, the analysis is kept in ``reasoning``,
and a completion cut before its final channel has status
``no_final_channel``. Nothing is prefilled for them when they generate
(``Type:`` would stand where their analysis channel starts); their generated
Task 1 label gets the Task 2 token budget, since it follows the analysis; the
in-process read-out scores the names inside the final channel
(``<|channel|>final<|message|>Type:``), with no analysis before them.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflicts.dataset import ORDER
from conflictlab.conflicts.prompts import (
    STRATEGIES,
    TASK1_PREFIX,
    TASK2_TEMPLATES,
    TAXONOMY,
    parse_label,
    parse_taxonomy_aware,
    task1_messages,
    task2_messages,
)
from conflictlab.lm.channels import FINAL_HEADER, NO_FINAL_CHANNEL, HarmonyTokens, final_message
from conflictlab.lm.generation import Backend, Completion, DecodingParams
from conflictlab.lm.guided import chat_token_ids

log = logging.getLogger(__name__)

TYPE_PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # gold short name
        pa.field("predicted", pa.string()),  # null: unparseable or too long
        pa.field("readout", pa.string(), nullable=False),  # option_loglikelihood | generated
        pa.field("scores", pa.list_(pa.float64())),  # log p(name) per category in dataset.ORDER (option read-out)
        pa.field("reply", pa.string()),  # generated read-out: the text after "Type:" (reasoning models: the final channel)
        pa.field("reasoning", pa.string()),  # reasoning models: everything before the final channel
        pa.field("status", pa.string(), nullable=False),  # ok | unparseable | too_long | no_final_channel
    ]
)

RESPONSE_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("template", pa.string(), nullable=False),
        pa.field("given_type", pa.string()),  # the type the prompt names: predicted (pipeline), gold (oracle)
        pa.field("predicted_type", pa.string()),  # taxonomy-aware: the type the reply names
        pa.field("n_prompt_tokens", pa.int32(), nullable=False),
        pa.field("reply", pa.string()),  # everything generated (taxonomy-aware: after the prefilled "Type:"; reasoning models: the final channel)
        pa.field("reasoning", pa.string()),  # reasoning models: everything before the final channel
        pa.field("response", pa.string()),  # the response to judge; null unless status ok
        pa.field("finish_reason", pa.string()),
        pa.field("status", pa.string(), nullable=False),  # ok | unparseable | empty | too_long | no_predicted_type | no_final_channel
        pa.field("decoding", pa.string(), nullable=False),
    ]
)

def task1_scores(lm, question: str, results: Sequence[dict], *, harmony: HarmonyTokens | None = None) -> np.ndarray:
    """log p(category name | Task 1 prompt, "Type:") per category in
    :data:`ORDER`, shape (5,), float64 (reasoning models: "Type:" opens their
    final channel)."""
    from conflictlab.lm.choices import option_loglikelihoods

    chat = lm.tokenizer.apply_chat_template(task1_messages(question, results), tokenize=False, add_generation_prompt=True)
    encode = lambda text: lm.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompt = encode(chat + reply_prefix("task1", harmony=harmony, scored=True))
    return option_loglikelihoods(lm, prompt, [encode(" " + TAXONOMY[name].label) for name in ORDER])


def predicted_category(scores: np.ndarray) -> str:
    return ORDER[int(np.argmax(scores))]


TASK1_MAX_NEW_TOKENS = 16  # the longest category name is 8 tokens for SmolLM2's and Gemma's tokenizers


def reply_prefix(task: str, *, harmony: HarmonyTokens | None = None, scored: bool = False) -> str:
    """What the reply is prefilled with: ``Type:`` for Task 1 (``task1``) and
    the Taxonomy-aware form, nothing for the other strategies. A reasoning
    model's generated reply gets nothing (its analysis comes first); a scored
    one (``scored``) gets the prefix inside its final channel."""
    prefix = TASK1_PREFIX if task in ("task1", "taxonomy_aware") else ""
    if harmony is None or not prefix:
        return prefix
    return FINAL_HEADER + prefix if scored else ""


def answer_text(completion: Completion, harmony: HarmonyTokens | None, decode) -> tuple[str | None, str | None]:
    """(the text to parse, the reasoning before it) of one completion: the
    whole text, or a reasoning model's final channel (None when it never
    reached it)."""
    if harmony is None:
        return completion.text, None
    final, _, reasoning = final_message(completion.token_ids, harmony, decode)
    return final, reasoning


def prompt_ids(tokenizer, messages: list[dict], prefix: str = "") -> list[int]:
    """The chat prompt's token ids, followed by the reply's prefilled ``prefix``."""
    ids = chat_token_ids(tokenizer, messages)
    return ids + (tokenizer(prefix, add_special_tokens=False)["input_ids"] if prefix else [])


def types_by_option_scores(lm, queries: Sequence[dict], *, model: str) -> pa.Table:
    """Task 1 in process: per query the category whose name is most likely."""
    rows, harmony = [], HarmonyTokens.of(lm.tokenizer)
    for query in queries:
        scores = task1_scores(lm, query["question"], query["search_results"], harmony=harmony)
        rows.append(_type_row(query, model, predicted_category(scores), "option_loglikelihood", scores=scores))
    return pa.Table.from_pylist(rows, schema=TYPE_PREDICTION_SCHEMA)


def types_by_generation(
    backend: Backend,
    tokenizer,
    queries: Sequence[dict],
    *,
    model: str,
    limit: int,
    seed: int,
    harmony: HarmonyTokens | None = None,
    reasoning_tokens: int = TASK1_MAX_NEW_TOKENS,
) -> pa.Table:
    """Task 1 through a generating backend: the label after ``Type:``, parsed
    strictly. A reasoning model (``harmony``) writes its analysis first, with
    ``reasoning_tokens`` new tokens; its final channel is parsed."""
    budget = TASK1_MAX_NEW_TOKENS if harmony is None else max(TASK1_MAX_NEW_TOKENS, reasoning_tokens)
    prefix = reply_prefix("task1", harmony=harmony)
    prompts = [prompt_ids(tokenizer, task1_messages(q["question"], q["search_results"]), prefix) for q in queries]
    fits = [len(p) + budget <= limit for p in prompts]
    completions = iter(backend.generate([p for p, ok in zip(prompts, fits) if ok], DecodingParams(budget, seed)))
    rows = []
    for query, ok in zip(queries, fits):
        if not ok:
            rows.append(_type_row(query, model, None, "generated", status="too_long"))
            continue
        reply, reasoning = answer_text(next(completions), harmony, _decoder(tokenizer))
        label = parse_label(reply) if reply is not None else None
        status = NO_FINAL_CHANNEL if reply is None else "ok" if label else "unparseable"
        rows.append(_type_row(query, model, label, "generated", reply=reply, reasoning=reasoning, status=status))
    return pa.Table.from_pylist(rows, schema=TYPE_PREDICTION_SCHEMA)


def _decoder(tokenizer):
    return lambda ids: tokenizer.decode(ids, skip_special_tokens=True)


def _type_row(
    query: dict, model: str, predicted: str | None, readout: str, *,
    scores: np.ndarray | None = None, reply: str | None = None, reasoning: str | None = None, status: str = "ok",
) -> dict:
    return {
        "query_id": query["query_id"],
        "model": model,
        "conflict_type": query["conflict_type"],
        "predicted": predicted,
        "readout": readout,
        "scores": None if scores is None else [float(s) for s in scores],
        "reply": reply,
        "reasoning": reasoning,
        "status": status,
    }


def given_type(strategy: str, query: dict, predicted: dict[int, str | None]) -> str | None:
    """The type a strategy's prompt names: Task 1's prediction for Pipeline,
    the gold type for Oracle, none for the others."""
    if strategy == "pipeline":
        return predicted[query["query_id"]]
    if strategy == "oracle":
        return query["conflict_type"]
    return None


def respond(
    backend: Backend,
    tokenizer,
    queries: Sequence[dict],
    predicted: dict[int, str | None],
    *,
    model: str,
    strategies: Sequence[str] = STRATEGIES,
    limit: int,
    max_new_tokens: int,
    seed: int = 0,
    harmony: HarmonyTokens | None = None,
) -> pa.Table:
    """Task 2: one response per (query, strategy), strategies outer, all
    prompts sent to ``backend`` in one call (it sorts and batches them).
    ``predicted``: query_id -> Task 1 prediction (None when unparseable);
    ``harmony``: a reasoning model's markers (its final channel is the reply)."""
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise ValueError(f"unknown CONFLICTS strategies {unknown}; known: {', '.join(STRATEGIES)}")
    params = DecodingParams(max_new_tokens, seed)
    rows, prompts = [], []
    for strategy in strategies:
        for query in queries:
            named = given_type(strategy, query, predicted)
            row = {
                "query_id": query["query_id"], "model": model, "strategy": strategy, "template": TASK2_TEMPLATES[strategy],
                "given_type": named, "predicted_type": None, "n_prompt_tokens": 0, "reply": None, "reasoning": None, "response": None,
                "finish_reason": None, "status": "ok", "decoding": params.to_json(),
            }
            rows.append(row)
            if strategy == "pipeline" and named is None:
                row["status"] = "no_predicted_type"
                continue
            messages = task2_messages(strategy, query["question"], query["search_results"], conflict_type=named)
            ids = prompt_ids(tokenizer, messages, reply_prefix(strategy, harmony=harmony))
            row["n_prompt_tokens"] = len(ids)
            if len(ids) + max_new_tokens > limit:
                row["status"] = "too_long"
                continue
            prompts.append((row, ids))
    completions = backend.generate([ids for _, ids in prompts], params) if prompts else []
    for (row, _), completion in zip(prompts, completions, strict=True):
        reply, row["reasoning"] = answer_text(completion, harmony, _decoder(tokenizer))
        row["reply"], row["finish_reason"] = reply, completion.finish_reason
        if reply is None:
            row["status"] = NO_FINAL_CHANNEL
        elif row["strategy"] == "taxonomy_aware":
            row["predicted_type"], row["response"] = parse_taxonomy_aware(reply_prefix(row["strategy"], harmony=harmony) + reply)
            row["status"] = "ok" if row["response"] else "unparseable"
        else:
            row["response"] = reply.strip() or None
            row["status"] = "ok" if row["response"] else "empty"
    log.info("%d responses generated of %d (query, strategy) pairs", len(prompts), len(rows))
    return pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA)



def answer_queries(model_dir, settings: dict, queries: Sequence[dict], *, model: str, strategies: Sequence[str]) -> tuple[pa.Table, pa.Table]:
    """(type predictions, responses) of one model, loaded once.

    ``settings``: the generation backend's settings
    (:func:`conflictlab.lm.backends.generation_backend`) plus
    ``max_new_tokens`` (Task 2) and ``max_model_len`` (null: the model's
    own window). ``hf`` reads Task 1 from option scores; other backends
    generate the label.
    """
    from conflictlab.lm.registry import context_limit

    limit = context_limit(model_dir, settings.get("max_model_len"))
    if settings["backend"] == "hf":
        from conflictlab.lm.generation import HFBackend
        from conflictlab.lm.loading import load

        lm = load(model_dir, dtype=settings.get("dtype"))
        backend, tokenizer = HFBackend(lm, batch_size=settings["batch_size"]), lm.tokenizer
        types = types_by_option_scores(lm, queries, model=model)
    else:
        from transformers import AutoTokenizer

        from conflictlab.lm.backends import generation_backend

        backend, tokenizer = generation_backend(model_dir, settings, limit=limit), AutoTokenizer.from_pretrained(model_dir)
        types = types_by_generation(
            backend, tokenizer, queries, model=model, limit=limit, seed=settings["seed"],
            harmony=HarmonyTokens.of(tokenizer), reasoning_tokens=settings["max_new_tokens"],
        )
    predicted = dict(zip(types.column("query_id").to_pylist(), types.column("predicted").to_pylist()))
    responses = respond(
        backend, tokenizer, queries, predicted, model=model, strategies=strategies, limit=limit,
        max_new_tokens=settings["max_new_tokens"], seed=settings["seed"], harmony=HarmonyTokens.of(tokenizer),
    )
    return types, responses

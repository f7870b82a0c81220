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

A chat model behind an endpoint (a hosted model, or vLLM's server: backend
``served``) is sent the messages themselves. Nothing can be prefilled in a
chat API, so its Task 1 label and its Taxonomy-aware reply are parsed from the
whole reply (:func:`conflictlab.conflicts.prompts.parse_label` accepts an
optional ``Type:``); the endpoint counts the prompt's tokens; a refusal or a
content-filter stop has status ``refused`` / ``content_filter`` and no
response.

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
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflicts.dataset import ORDER
from conflictlab.conflicts.prompts import (
    STRATEGIES,
    TASK1_PREFIX,
    TASK2_TEMPLATES,
    TAXONOMY,
    context_free_messages,
    parse_label,
    parse_taxonomy_aware,
    task1_messages,
    task2_messages,
)
from conflictlab.lm.channels import FINAL_HEADER, NO_FINAL_CHANNEL, HarmonyTokens, final_message
from conflictlab.lm.chat_template import render_chat
from conflictlab.lm.generation import Backend, Completion, DecodingParams, generate_with_method
from conflictlab.lm.guided import chat_token_ids
from conflictlab.lm.methods import GREEDY, as_method
from conflictlab.lm.shards import NO_ANSWER_STATUS

log = logging.getLogger(__name__)

TYPE_PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # gold short name
        pa.field("predicted", pa.string()),  # null: unparseable or too long
        pa.field("readout", pa.string(), nullable=False),  # option_loglikelihood | generated
        pa.field("scores", pa.list_(pa.float64())),  # log p(name) per category in dataset.ORDER (option read-out)
        pa.field(
            "reply", pa.string()
        ),  # generated read-out: the text after "Type:" (reasoning models: the final channel)
        pa.field("reasoning", pa.string()),  # reasoning models: everything before the final channel
        pa.field(
            "status", pa.string(), nullable=False
        ),  # ok | unparseable | too_long | no_final_channel | refused | content_filter
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
        pa.field(
            "reply", pa.string()
        ),  # everything generated (taxonomy-aware: after the prefilled "Type:"; reasoning models: the final channel)
        pa.field("reasoning", pa.string()),  # reasoning models: everything before the final channel
        pa.field("response", pa.string()),  # the response to judge; null unless status ok
        pa.field("finish_reason", pa.string()),
        pa.field(
            "status", pa.string(), nullable=False
        ),  # ok | unparseable | empty | too_long | no_predicted_type | no_final_channel | refused | content_filter
        pa.field("decoding", pa.string(), nullable=False),
    ]
)


def task1_scores(
    lm, question: str, results: Sequence[dict], *, harmony: HarmonyTokens | None = None, fed=None
) -> np.ndarray:
    """log p(category name | Task 1 prompt, "Type:") per category in
    :data:`ORDER`, shape (5,), float64 (reasoning models: "Type:" opens their
    final channel). ``fed``: the previous query's cache
    (:func:`conflictlab.lm.choices.option_loglikelihoods`), whose instructions
    and taxonomy this prompt shares."""
    from conflictlab.lm.choices import option_loglikelihoods

    chat = render_chat(lm.tokenizer, task1_messages(question, results), tokenize=False)
    encode = lambda text: lm.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompt = encode(chat + reply_prefix("task1", harmony=harmony, scored=True))
    return option_loglikelihoods(lm, prompt, [encode(" " + TAXONOMY[name].label) for name in ORDER], fed=fed)


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
    from conflictlab.lm.shared_prefix import FedTokens

    rows, harmony = [], HarmonyTokens.of(lm.tokenizer)
    fed = FedTokens(None, across_requests=True)  # the prompts share their first ~450 tokens: forwarded once
    for query in queries:
        scores = task1_scores(lm, query["question"], query["search_results"], harmony=harmony, fed=fed)
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
    ``reasoning_tokens`` new tokens; its final channel is parsed. ``tokenizer``
    None: a chat backend, sent the messages (nothing prefilled)."""
    budget = TASK1_MAX_NEW_TOKENS if harmony is None else max(TASK1_MAX_NEW_TOKENS, reasoning_tokens)
    prefix = reply_prefix("task1", harmony=harmony)
    prompts = [_payload(tokenizer, task1_messages(q["question"], q["search_results"]), prefix) for q in queries]
    fits = [tokenizer is None or len(p) + budget <= limit for p in prompts]
    sent = [(q, p) for q, p, ok in zip(queries, prompts, fits) if ok]
    completions = iter(
        _generate(
            backend,
            tokenizer,
            [p for _, p in sent],
            DecodingParams(budget, seed),
            [f"task1/{q['query_id']}" for q, _ in sent],
        )
    )
    rows = []
    for query, ok in zip(queries, fits):
        if not ok:
            rows.append(_type_row(query, model, None, "generated", status="too_long"))
            continue
        completion = next(completions)
        if completion.finish_reason in NO_ANSWER_STATUS:
            rows.append(_type_row(query, model, None, "generated", status=NO_ANSWER_STATUS[completion.finish_reason]))
            continue
        reply, reasoning = answer_text(completion, harmony, _decoder(tokenizer))
        label = parse_label(reply) if reply is not None else None
        status = NO_FINAL_CHANNEL if reply is None else "ok" if label else "unparseable"
        rows.append(_type_row(query, model, label, "generated", reply=reply, reasoning=reasoning, status=status))
    return pa.Table.from_pylist(rows, schema=TYPE_PREDICTION_SCHEMA)


def _payload(tokenizer, messages: list[dict], prefix: str):
    """What a backend is sent: token ids with the prefilled ``prefix``, or for a chat backend (``tokenizer`` None) the
    messages."""
    return messages if tokenizer is None else prompt_ids(tokenizer, messages, prefix)


def _generate(backend: Backend, tokenizer, payloads: list, params: DecodingParams, rows: list[str]) -> list[Completion]:
    if not payloads:
        return []
    if tokenizer is None:  # a chat backend names each request's row in its errors
        return backend.generate(payloads, params, rows=rows)
    return backend.generate(payloads, params)


def _decoder(tokenizer):
    return None if tokenizer is None else lambda ids: tokenizer.decode(ids, skip_special_tokens=True)


def _type_row(
    query: dict,
    model: str,
    predicted: str | None,
    readout: str,
    *,
    scores: np.ndarray | None = None,
    reply: str | None = None,
    reasoning: str | None = None,
    status: str = "ok",
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


def task2_row(query_id: str, model: str, strategy: str, named: str | None, status: str, decoding: str) -> dict:
    """A :data:`RESPONSE_SCHEMA` row of one Task 2 prompt before any reply: no tokens, reply or response yet."""
    return {
        "query_id": query_id,
        "model": model,
        "strategy": strategy,
        "template": TASK2_TEMPLATES[strategy],
        "given_type": named,
        "predicted_type": None,
        "n_prompt_tokens": 0,
        "reply": None,
        "reasoning": None,
        "response": None,
        "finish_reason": None,
        "status": status,
        "decoding": decoding,
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
    method=GREEDY,
    repetition_penalty: float = 1.0,
) -> pa.Table:
    """Task 2: one response per (query, strategy), strategies outer, all
    prompts sent to ``backend`` in one call (it sorts and batches them).
    ``predicted``: query_id -> Task 1 prediction (None when unparseable);
    ``harmony``: a reasoning model's markers (its final channel is the reply);
    ``tokenizer`` None: a chat backend (messages sent, ``limit`` unused).
    ``method``: a conflict-resolution method (:class:`conflictlab.lm.methods.Method`
    or its spelling): a prompting method rewrites the prompts
    (:func:`conflictlab.conflicts.prompts.task2_messages`' ``style``); CAD and
    AdaCAD (Vanilla only, token-id backends) contrast each prompt with
    :func:`conflictlab.conflicts.prompts.context_free_messages`."""
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise ValueError(f"unknown CONFLICTS strategies {unknown}; known: {', '.join(STRATEGIES)}")
    method = as_method(method)
    if method.contrastive and (set(strategies) != {"vanilla"} or tokenizer is None):
        raise ValueError(
            f"method {method.format()}: CONFLICTS contrasts the Vanilla prompt only, with token ids (got "
            f"{list(strategies)})"
        )
    params = DecodingParams(max_new_tokens, seed, repetition_penalty)
    rows, prompts, context_free = [], [], []
    for strategy in strategies:
        for query in queries:
            named = given_type(strategy, query, predicted)
            row = task2_row(query["query_id"], model, strategy, named, "ok", params.to_json())
            rows.append(row)
            if strategy == "pipeline" and named is None:
                row["status"] = "no_predicted_type"
                continue
            messages = task2_messages(
                strategy, query["question"], query["search_results"], conflict_type=named, style=method.prompt_style
            )
            payload = _payload(tokenizer, messages, reply_prefix(strategy, harmony=harmony))
            if tokenizer is not None:
                row["n_prompt_tokens"] = len(payload)
                if len(payload) + max_new_tokens > limit:
                    row["status"] = "too_long"
                    continue
            prompts.append((row, payload))
            if method.contrastive:
                context_free.append(
                    _payload(
                        tokenizer, context_free_messages(query["question"]), reply_prefix(strategy, harmony=harmony)
                    )
                )
    rows_sent = [f"{row['strategy']}/{row['query_id']}" for row, _ in prompts]
    if method.contrastive:
        completions = generate_with_method(
            backend, [payload for _, payload in prompts], params, method, context_free=context_free
        )
    else:
        completions = _generate(backend, tokenizer, [payload for _, payload in prompts], params, rows_sent)
    for (row, _), completion in zip(prompts, completions, strict=True):
        row["finish_reason"] = completion.finish_reason
        if completion.n_prompt_tokens is not None:
            row["n_prompt_tokens"] = completion.n_prompt_tokens
        if completion.finish_reason in NO_ANSWER_STATUS:
            row["status"] = NO_ANSWER_STATUS[completion.finish_reason]
            continue
        reply, row["reasoning"] = answer_text(completion, harmony, _decoder(tokenizer))
        row["reply"] = reply
        # Only a token-id prompt carries the prefilled prefix; a chat reply writes it itself.
        prefix = reply_prefix(row["strategy"], harmony=harmony) if tokenizer is not None else ""
        if reply is None:
            row["status"] = NO_FINAL_CHANNEL
        elif row["strategy"] == "taxonomy_aware":
            row["predicted_type"], row["response"] = parse_taxonomy_aware(prefix + reply)
            row["status"] = "ok" if row["response"] else "unparseable"
        else:
            row["response"] = reply.strip() or None
            row["status"] = "ok" if row["response"] else "empty"
    log.info("%d responses generated of %d (query, strategy) pairs", len(prompts), len(rows))
    return pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA)


def answer_queries(
    model_dir,
    settings: dict,
    queries: Sequence[dict],
    *,
    model: str,
    strategies: Sequence[str],
    stack=None,
    server_log=None,
) -> tuple[pa.Table, pa.Table]:
    """(type predictions, responses) of one local model, loaded once.

    ``settings``: the generation backend's settings
    (:func:`conflictlab.lm.builders.generation_backend`) plus
    ``max_new_tokens`` (Task 2) and ``max_model_len`` (null: the model's
    own window). A backend with ``loglikelihood`` (hf) reads Task 1 from
    option scores; other backends generate the label (``served``: vLLM's server started in ``stack``, sent
    the messages).
    """
    from conflictlab.lm.backends import backend_spec
    from conflictlab.lm.builders import generation_backend
    from conflictlab.lm.registry import context_limit

    limit = context_limit(model_dir, settings.get("max_model_len"))
    spec = backend_spec(settings["backend"])
    backend = generation_backend(model_dir, settings, limit=limit, stack=stack, server_log=server_log)
    if spec.has("loglikelihood"):
        tokenizer = backend.lm.tokenizer
        types = types_by_option_scores(backend.lm, queries, model=model)
        harmony = HarmonyTokens.of(tokenizer)
    else:
        from conflictlab.lm.loading import load_tokenizer

        # A chat backend (served) is sent messages: no token ids, and the server renders any channels itself.
        tokenizer = None if spec.takes_messages else load_tokenizer(model_dir)
        harmony = HarmonyTokens.of(tokenizer) if tokenizer is not None else None
        types = types_by_generation(
            backend,
            tokenizer,
            queries,
            model=model,
            limit=limit,
            seed=settings["seed"],
            harmony=harmony,
            reasoning_tokens=settings["max_new_tokens"],
        )
    return types, _respond_all(
        backend,
        tokenizer,
        queries,
        types,
        model=model,
        strategies=strategies,
        limit=limit,
        settings=settings,
        harmony=harmony,
    )


def answer_with_methods(model_dir, settings: dict, queries: Sequence[dict], runs: dict[str, str]) -> pa.Table:
    """Vanilla responses of one local model, loaded once, under each
    conflict-resolution method, on a backend with ``logits`` (hf: CAD's two passes).

    ``runs``: the ``model`` of the rows (a method's run name) -> the method's
    spelling. ``settings``: ``dtype``, ``batch_size``, ``max_model_len``,
    ``max_new_tokens``, ``seed``.
    """
    from conflictlab.lm.backends import backend_with
    from conflictlab.lm.builders import generation_backend
    from conflictlab.lm.registry import context_limit

    limit = context_limit(model_dir, settings.get("max_model_len"))
    backend = generation_backend(model_dir, {**settings, "backend": backend_with("logits")}, limit=limit)
    lm = backend.lm
    harmony = HarmonyTokens.of(lm.tokenizer)
    return pa.concat_tables(
        [
            respond(
                backend,
                lm.tokenizer,
                queries,
                {},
                model=run,
                strategies=("vanilla",),
                limit=limit,
                max_new_tokens=settings["max_new_tokens"],
                seed=settings["seed"],
                harmony=harmony,
                method=method,
                repetition_penalty=settings.get("repetition_penalty", 1.0),
            )
            for run, method in runs.items()
        ]
    )


def conflicts_conversations(
    queries: Sequence[dict], strategies: Sequence[str]
) -> tuple[list[list[dict]], list[list[dict]]]:
    """(Task 1, Task 2) messages a chat model would be sent for ``queries``;
    Pipeline takes the gold type in place of the prediction it will get
    (for estimates: a prompt of the same form)."""
    task1 = [task1_messages(q["question"], q["search_results"]) for q in queries]
    task2 = [
        task2_messages(
            strategy,
            q["question"],
            q["search_results"],
            conflict_type=q["conflict_type"] if strategy in ("pipeline", "oracle") else None,
        )
        for strategy in strategies
        for q in queries
    ]
    return task1, task2


def answer_queries_hosted(
    backend, settings: dict, queries: Sequence[dict], *, model: str, strategies: Sequence[str]
) -> tuple[pa.Table, pa.Table]:
    """(type predictions, responses) of a hosted chat model
    (:class:`conflictlab.lm.chat.ChatBackend`): Task 1 generated and parsed,
    Task 2 as for a local model; ``settings``: ``max_new_tokens``, ``seed``."""
    types = types_by_generation(backend, None, queries, model=model, limit=0, seed=settings["seed"])
    return types, _respond_all(
        backend, None, queries, types, model=model, strategies=strategies, limit=0, settings=settings, harmony=None
    )


def _respond_all(
    backend, tokenizer, queries, types: pa.Table, *, model, strategies, limit, settings, harmony
) -> pa.Table:
    predicted = dict(zip(types.column("query_id").to_pylist(), types.column("predicted").to_pylist()))
    return respond(
        backend,
        tokenizer,
        queries,
        predicted,
        model=model,
        strategies=strategies,
        limit=limit,
        max_new_tokens=settings["max_new_tokens"],
        seed=settings["seed"],
        harmony=harmony,
        repetition_penalty=settings.get("repetition_penalty", 1.0),
    )

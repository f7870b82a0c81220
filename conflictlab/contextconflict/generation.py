"""ContextConflict generation: each sample rendered with the paper's prompt,
checked against the context window, generated in resumable shards.

The backends and the shard runner are the model layer's
(:mod:`conflictlab.lm.generation`, :mod:`conflictlab.lm.shards`); this module
only renders requests and names the job.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.prompts import (
    build_messages,
    context_free_messages,
    encode_messages,
    faithful_messages,
)
from conflictlab.contextconflict.steering import DIRECTION_OF_METHOD, load_directions
from conflictlab.contextconflict.variants import SteeredModel
from conflictlab.lm.backends import backend_spec, check_method
from conflictlab.lm.channels import HarmonyTokens, separate_final_channel
from conflictlab.lm.chat import ChatBackend
from conflictlab.lm.generation import Backend, HFBackend, MethodBackend, decoding_params
from conflictlab.lm.loading import load_tokenizer
from conflictlab.lm.methods import Method, MethodRun, as_method
from conflictlab.lm.registry import context_limit, weights_checksum
from conflictlab.lm.shards import (
    RESPONSE_SCHEMA,
    STATUS_OK,
    STATUS_TOO_LONG,
    GenerationJob,
    Request,
    run_sharded,
    run_sharded_variants,
)
from conflictlab.lm.steering import Steering

log = logging.getLogger(__name__)


def build_request(
    tokenizer,
    sample: dict,
    template: str,
    *,
    limit: int,
    max_new_tokens: int,
    on_too_long: str = "skip",
    messages_of: Callable[[str, str, list[str]], list[dict[str, str]]] = build_messages,
) -> Request:
    """Render one sample; never cut the question, never right-truncate silently.

    ``messages_of(template, question, evidence)`` renders the messages
    (:func:`~conflictlab.contextconflict.prompts.build_messages`, or a
    method's rewrite of them).

    A prompt whose length plus ``max_new_tokens`` exceeds ``limit`` gets
    ``status=too_long``; with ``on_too_long="truncate_longest"`` the longest
    evidence piece is shortened (by tokens, marked with ``[…]``) until the
    prompt fits, and the cut is recorded in ``message``.
    """
    evidence = list(sample["evidence"])
    budget = limit - max_new_tokens
    cuts: list[str] = []
    for _ in range(4 * len(evidence) + 4):
        messages = messages_of(template, sample["question"], evidence)
        text, ids = encode_messages(tokenizer, messages)
        over = len(ids) - budget
        if over <= 0:
            message = "; ".join(cuts) if cuts else None
            return Request(sample["sample_id"], template, text, ids, STATUS_OK, message, messages=messages)
        if on_too_long != "truncate_longest":
            break
        longest = max(range(len(evidence)), key=lambda i: len(evidence[i]))
        piece_ids = tokenizer(evidence[longest], add_special_tokens=False)["input_ids"]
        # Cut what is over (plus a margin: re-tokenising the cut text can
        # merge tokens), keeping at least 16 tokens of this piece; if that is
        # not enough the next pass cuts the then-longest piece.
        keep = max(16, len(piece_ids) - over - 8)
        if keep >= len(piece_ids):
            break
        evidence[longest] = tokenizer.decode(piece_ids[:keep]) + " […]"
        cuts.append(f"evidence {longest + 1} truncated from {len(piece_ids)} to {keep} tokens")
    return Request(
        sample["sample_id"],
        template,
        text,
        ids,
        STATUS_TOO_LONG,
        f"prompt has {len(ids)} tokens; with max_new_tokens={max_new_tokens} it exceeds the context of {limit}",
        messages=messages,
    )


def _shard_dtype(settings: dict) -> str | None:
    """The precision a job generates in, for its shard names: ``auto``
    resolved on this machine, so shards made in another precision are not reused."""
    dtype = settings.get("dtype")
    if dtype != "auto":
        return dtype
    from conflictlab.lm.loading import default_device, resolve_dtype

    return resolve_dtype(dtype, default_device())


def render_requests(
    tokenizer,
    samples: pa.Table,
    templates: dict[str, str],
    *,
    limit: int,
    max_new_tokens: int,
    on_too_long: str,
    chat: bool = False,
    messages_of: Callable[[str, str, list[str]], list[dict[str, str]]] = build_messages,
) -> list[Request]:
    """One request per sample, with the template of its task family; its
    messages are the payload with ``chat`` (a chat backend: vLLM's server on
    this model renders them), else its token ids. ``messages_of`` as in
    :func:`build_request`."""
    requests = [
        build_request(
            tokenizer,
            sample,
            templates[sample["task_family"]],
            limit=limit,
            max_new_tokens=max_new_tokens,
            on_too_long=on_too_long,
            messages_of=messages_of,
        )
        for sample in samples.to_pylist()
    ]
    if not chat:
        requests = [dataclasses.replace(r, messages=None) for r in requests]
    too_long = sum(r.status == STATUS_TOO_LONG for r in requests)
    log.info("%d requests, %d too long for a context of %d tokens", len(requests), too_long, limit)
    return requests


# Backend settings that can change the generated tokens (batched padding,
# tensor parallelism, engine arguments, the remote model): part of every shard's
# name, so a resumed job never reuses shards made under other settings.
ENGINE_KEYS = ("batch_size", "tensor_parallel_size", "vllm", "endpoint")


def engine_settings(settings: dict) -> dict:
    return {key: settings[key] for key in ENGINE_KEYS if key in settings}


def _render_subsets(
    tokenizer, subsets: Sequence[pa.Table], settings: dict, limit: int, messages_of=build_messages
) -> list[list[Request]]:
    return [
        render_requests(
            tokenizer,
            samples,
            settings["templates"],
            limit=limit,
            max_new_tokens=settings["max_new_tokens"],
            on_too_long=settings["on_too_long"],
            chat=backend_spec(settings["backend"]).takes_messages,
            messages_of=messages_of,
        )
        for samples in subsets
    ]


def hosted_requests(samples: pa.Table, templates: dict[str, str]) -> list[Request]:
    """One request per sample for a hosted chat model: the template's messages,
    sent as they are (the endpoint renders and counts them; a prompt past its
    context window is the endpoint's error, which names the sample)."""
    requests = []
    for sample in samples.to_pylist():
        template = templates[sample["task_family"]]
        messages = build_messages(template, sample["question"], list(sample["evidence"]))
        requests.append(
            Request(sample["sample_id"], template, json.dumps(messages, ensure_ascii=False), [], messages=messages)
        )
    return requests


def generate_subsets_hosted(
    subsets: Sequence[pa.Table],
    *,
    model: str,
    identity: str,
    settings: dict,
    shard_dir: str | os.PathLike,
    backend: ChatBackend,
) -> list[pa.Table]:
    """:func:`generate_subsets` for a hosted chat model: ``identity`` names the
    endpoint's model (it stands in for the weights' checksum)."""
    per_table = [hosted_requests(samples, settings["templates"]) for samples in subsets]
    job = GenerationJob(
        model=model,
        model_checksum=identity,
        backend=backend.name,
        params=decoding_params(settings),
        shard_size=settings["shard_size"],
    )
    return _cut(
        run_sharded(job, [r for requests in per_table for r in requests], lambda: backend, shard_dir), per_table
    )


def _cut(responses: pa.Table, per_table: list[list[Request]]) -> list[pa.Table]:
    """The pooled responses cut back into one table per subset."""
    starts = np.cumsum([0] + [len(requests) for requests in per_table])
    return [responses.slice(start, stop - start) for start, stop in zip(starts[:-1], starts[1:])]


def _job(
    model: str, model_dir, settings: dict, limit: int, steering_key: str | None, method: str | None = None
) -> GenerationJob:
    # The method joins the shard key only when set, so earlier jobs' shards keep their names.
    return GenerationJob(
        model=model,
        model_checksum=weights_checksum(model_dir),
        backend=settings["backend"],
        params=decoding_params(settings),
        shard_size=settings["shard_size"],
        extra_key={
            "dtype": _shard_dtype(settings),
            "limit": limit,
            "steering": steering_key,
            "engine": engine_settings(settings),
            **({"method": method} if method is not None else {}),
        },
    )


def _split_tables(tokenizer, responses: pa.Table, per_table: list[list[Request]]) -> list[pa.Table]:
    """The pooled responses cut back into one table per subset (reasoning
    models' final channel separated)."""
    harmony = HarmonyTokens.of(tokenizer)
    if harmony is not None:
        rows = separate_final_channel(
            responses.to_pylist(), harmony, lambda ids: tokenizer.decode(ids, skip_special_tokens=True)
        )
        responses = pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA)
    return _cut(responses, per_table)


def generate_subsets(
    subsets: Sequence[pa.Table],
    model_dir: str | os.PathLike,
    *,
    model: str,
    settings: dict,
    shard_dir: str | os.PathLike,
    make_backend: Callable[[int], Backend],
    steering_key: str | None = None,
) -> list[pa.Table]:
    """The responses of one model to several sample tables, one table each.

    Every table's requests go into one sharded job, so the backend batches
    them together (longest first, across tables): on a CPU a decoding step
    costs about the same for one row as for eight, and a row's tokens do not
    depend on the rows batched with it (
    ``tests/test_generation.py::test_hf_batched_left_padded_equals_one_by_one``).

    ``settings`` is the config's ``generation`` mapping (``backend``,
    ``templates``, ``max_new_tokens``, ``max_model_len``, ``on_too_long``,
    ``seed``, ``shard_size``, ``dtype``). ``make_backend(limit)`` builds the
    backend for a context of ``limit`` tokens; it is called only when a shard
    has to be generated. ``steering_key`` names the steering applied
    (:meth:`conflictlab.lm.steering.Steering.key`), part of every shard's name.
    """
    tokenizer = load_tokenizer(model_dir)
    limit = context_limit(model_dir, settings.get("max_model_len"))
    per_table = _render_subsets(tokenizer, subsets, settings, limit)
    job = _job(model, model_dir, settings, limit, steering_key)
    responses = run_sharded(
        job, [r for requests in per_table for r in requests], lambda: make_backend(limit), shard_dir
    )
    return _split_tables(tokenizer, responses, per_table)


def generate_steered_subsets(
    subsets: Sequence[pa.Table],
    model_dir: str | os.PathLike,
    *,
    model: str,
    variants: dict[str, Sequence[Steering | None]],
    settings: dict,
    shard_dirs: dict[str, str | os.PathLike],
    make_backend: Callable[[], HFBackend],
) -> dict[str, list[pa.Table]]:
    """Every steering variant's responses to several sample tables, in one
    sharded run: ``variants[name][t]`` steers table t's samples under variant
    ``name`` (None: unsteered). Every table's requests are batched together and
    each prompt is prefilled once for all variants
    (:meth:`conflictlab.lm.generation.HFBackend.generate_variants`). The
    responses of variant ``name`` are those of pseudo-model ``{model}@{name}``,
    with shards under ``shard_dirs[name]``. Returns ``{name: [table per subset]}``.
    """
    backend_spec(settings["backend"]).require("activations", model=model, purpose="activation steering")
    tokenizer = load_tokenizer(model_dir)
    limit = context_limit(model_dir, settings.get("max_model_len"))
    per_table = _render_subsets(tokenizer, subsets, settings, limit)
    requests = [r for requests in per_table for r in requests]
    table_of = [t for t, requests_of_table in enumerate(per_table) for _ in requests_of_table]
    names = list(variants)
    jobs = [
        _job(
            SteeredModel(model, name).format(),
            model_dir,
            settings,
            limit,
            json.dumps([None if s is None else s.key() for s in variants[name]]),
        )
        for name in names
    ]
    backend = []

    def generate(indices: list[int], missing: list[int]):
        if not backend:
            backend.append(make_backend())
        steerings = [[variants[names[v]][table_of[i]] for i in indices] for v in missing]
        return backend[0].generate_variants([requests[i].prompt_ids for i in indices], steerings, jobs[0].params)

    tables = run_sharded_variants(jobs, requests, generate, [shard_dirs[name] for name in names])
    return {name: _split_tables(tokenizer, responses, per_table) for name, responses in zip(names, tables)}


def method_messages(method: Method) -> Callable[[str, str, list[str]], list[dict[str, str]]]:
    """How ``method`` renders a sample's messages: the context-faithful
    rewrite for a prompting method, the template's own messages otherwise."""
    if method.prompt_style is None:
        return build_messages
    return lambda template, question, evidence: faithful_messages(template, question, evidence, method.prompt_style)


def generate_method_subsets(
    subsets: Sequence[pa.Table],
    model_dir: str | os.PathLike,
    *,
    model: str,
    method: Method | str,
    settings: dict,
    shard_dir: str | os.PathLike,
    make_backend: Callable[[int], Backend],
) -> list[pa.Table]:
    """:func:`generate_subsets` under a conflict-resolution method: the
    responses of pseudo-model ``{model}@{method}`` (:class:`MethodRun`).

    A prompting method renders the context-faithful messages
    (:func:`~conflictlab.contextconflict.prompts.faithful_messages`); CAD and
    AdaCAD contrast every prompt with its context-free version, the same
    template with no evidence (:func:`~conflictlab.contextconflict.prompts.context_free_messages`
    says why), through a :class:`~conflictlab.lm.generation.MethodBackend`
    around ``make_backend(limit)``, which must then be an HF backend
    (:func:`conflictlab.lm.backends.check_method`).
    """
    method = as_method(method)
    check_method(method, settings["backend"], model=model)
    tokenizer = load_tokenizer(model_dir)
    limit = context_limit(model_dir, settings.get("max_model_len"))
    per_table = _render_subsets(tokenizer, subsets, settings, limit, messages_of=method_messages(method))
    requests = [r for requests in per_table for r in requests]
    context_free = {}
    if method.contrastive:
        for samples, table_requests in zip(subsets, per_table):
            for question, r in zip(samples.column("question").to_pylist(), table_requests, strict=True):
                context_free[tuple(r.prompt_ids)] = encode_messages(
                    tokenizer, context_free_messages(r.template, question)
                )[1]
    job = _job(MethodRun(model, method).format(), model_dir, settings, limit, None, method.format())
    responses = run_sharded(job, requests, lambda: MethodBackend(make_backend(limit), method, context_free), shard_dir)
    return _split_tables(tokenizer, responses, per_table)


def generate_responses(samples: pa.Table, model_dir: str | os.PathLike, **job) -> pa.Table:
    """:func:`generate_subsets` of one sample table."""
    return generate_subsets([samples], model_dir, **job)[0]


def variant_steering(
    method: str, alpha: float, schedule: str | None, directions_path, *, layers=None
) -> Steering | None:
    """The hooks of one variant: its method's direction from ``directions_path``
    (a :func:`save_directions` file) at ``alpha`` under ``schedule``; None for base."""
    if method == "base":
        return None
    vectors = load_directions(directions_path)[DIRECTION_OF_METHOD[method]]
    return Steering(vectors, alpha, schedule, None if layers is None else tuple(layers))

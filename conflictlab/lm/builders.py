"""How each registered backend (:mod:`conflictlab.lm.backends`) is built: the
objects that generate or answer under a JSON schema, from a config entry.

Kept apart from the registry's declarations so that a module that only asks
what a backend can do (the config checks, ContextConflict's generation)
does not reach every engine: a workflow script's code hash and conda
environment follow the modules it can import (:mod:`conflictlab.provenance`),
and this module can import vLLM. Each builder imports its engine only when called.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from conflictlab.lm.backends import HOSTED, backend_spec


@dataclass(frozen=True)
class Builder:
    """``build(model_dir, settings, *, limit, stack, server_log, request_cache, writer)``:
    the generation object; ``precision(settings)``: the dtype it runs at on this
    machine (a hosted one: its endpoint), part of a judge's cache identity;
    ``guided(model_dir, settings, *, stack, server_log, request_cache, writer)``:
    the JSON-schema chat, exactly for a backend that declares ``guided_json``."""

    build: Callable
    precision: Callable[[Mapping], str]
    guided: Callable | None = None


def generation_backend(
    model_dir: str | os.PathLike | None,
    settings: Mapping,
    *,
    limit: int | None = None,
    stack: contextlib.ExitStack | None = None,
    server_log: str | os.PathLike | None = None,
    request_cache: str | os.PathLike | None = None,
    writer: str | None = None,
):
    """The generation object of backend ``settings["backend"]``, for a context of
    ``limit`` tokens (None: the model's own window).

    ``settings``: ``backend``; ``dtype`` (null: the model layer's default,
    bfloat16 for vllm; ``auto``: :func:`conflictlab.lm.loading.resolve_dtype`);
    ``batch_size`` (hf); ``seed``, ``tensor_parallel_size`` (vllm; null or
    absent: 1, the workflow sets it from the job's GPUs) and ``vllm`` (extra
    engine arguments, ``tensor_parallel_size`` among them for served) for
    vllm and served; ``endpoint`` (``base_url``, ``model``, ``api_key_env``,
    …) for openai and hosted. A backend that starts a server or a client
    enters it in ``stack`` (closed by the caller; a server's output in
    ``server_log``); hosted caches its requests in ``request_cache`` as ``writer``.
    """
    backend_spec(settings["backend"])  # an unknown name is refused with the known ones
    return BUILDERS[settings["backend"]].build(
        model_dir,
        settings,
        limit=limit,
        stack=stack,
        server_log=server_log,
        request_cache=request_cache,
        writer=writer,
    )


def hosted_backend(
    hosted: Mapping, *, stack: contextlib.ExitStack, request_cache: str | os.PathLike | None, writer: str
):
    """The chat backend of a hosted model (its ``models.*.hosted`` settings),
    its client held by ``stack``, its completed requests cached in ``request_cache`` as ``writer``."""
    return generation_backend(
        None, {"backend": HOSTED, "endpoint": hosted}, stack=stack, request_cache=request_cache, writer=writer
    )


def guided_chat(
    model_dir: str | os.PathLike | None,
    settings: Mapping,
    *,
    stack: contextlib.ExitStack,
    server_log: str | os.PathLike | None = None,
    request_cache: str | os.PathLike | None = None,
    writer: str = "judge",
):
    """The :class:`conflictlab.lm.guided.GuidedChat` of backend ``settings["backend"]``
    (UnsupportedCapability for one without ``guided_json``)."""
    spec = backend_spec(settings["backend"])
    spec.require("guided_json", model=str(settings.get("model")), purpose="guided JSON replies")
    return BUILDERS[spec.name].guided(
        model_dir, settings, stack=stack, server_log=server_log, request_cache=request_cache, writer=writer
    )


def _hf_dtype(settings: Mapping) -> str:
    from conflictlab.lm.loading import default_device, resolve_dtype

    return resolve_dtype(settings.get("dtype"), default_device())


def _vllm_dtype(settings: Mapping) -> str:
    from conflictlab.lm.loading import vllm_dtype

    return vllm_dtype(settings.get("dtype"))


def _endpoint_identity(settings: Mapping) -> str:
    """An endpoint's model and address (and any ``extra_body``, which can change
    one API model's replies: Gemini 2.5 Flash with thinking off and on)."""
    import json

    endpoint = settings["endpoint"]
    extra = f"|{json.dumps(endpoint['extra_body'], sort_keys=True)}" if endpoint.get("extra_body") else ""
    return f"{endpoint['base_url']}{extra}"


def _endpoint(settings: Mapping, backend: str):
    from conflictlab.lm.endpoint import Endpoint

    endpoint = settings.get("endpoint")
    if not endpoint:
        raise ValueError(f"backend {backend} needs endpoint settings (base_url, model); none given")
    return Endpoint.from_settings(endpoint)


def _need_stack(stack, backend: str, what: str):
    if stack is None:
        raise ValueError(f"backend {backend} needs an ExitStack to hold its {what}")
    return stack


def _build_hf(model_dir, settings, **_):
    from conflictlab.lm.generation import hf_backend

    return hf_backend(model_dir, settings)


def _build_vllm(model_dir, settings, *, limit, **_):
    from conflictlab.lm.vllm_engine import VLLMBackend

    return VLLMBackend(
        model_dir,
        dtype=_vllm_dtype(settings),
        max_model_len=limit,
        tensor_parallel_size=settings.get("tensor_parallel_size") or 1,
        seed=settings["seed"],
        **settings.get("vllm", {}),
    )


def _serve(model_dir, settings, *, stack, server_log, max_model_len):
    from conflictlab.lm.server import serve_configured

    return _need_stack(stack, "served", "vLLM server").enter_context(
        serve_configured(
            model_dir,
            log_path=server_log,
            max_model_len=max_model_len,
            engine_args=settings.get("vllm"),
            dtype=_vllm_dtype(settings),
        )
    )


def _build_served(model_dir, settings, *, limit, stack, server_log, **_):
    from conflictlab.lm.chat import ChatBackend
    from conflictlab.lm.endpoint import EndpointClient

    if stack is None or server_log is None:
        raise ValueError("generation backend 'served' needs an ExitStack and a server log path")

    endpoint = _serve(model_dir, settings, stack=stack, server_log=server_log, max_model_len=limit)
    return ChatBackend(stack.enter_context(EndpointClient(endpoint)))


def _build_openai(model_dir, settings, **_):
    from conflictlab.lm.generation import OpenAIBackend
    from conflictlab.lm.loading import folder_eos_ids, load_tokenizer

    endpoint = _endpoint(settings, "openai")
    tokenizer = load_tokenizer(model_dir)
    return OpenAIBackend(endpoint, eos_ids=folder_eos_ids(model_dir, tokenizer), tokenizer=tokenizer)


def _build_hosted(model_dir, settings, *, stack, request_cache, writer, **_):
    from conflictlab.lm.chat import ChatBackend
    from conflictlab.lm.endpoint import EndpointClient, RequestCache

    cache = RequestCache(request_cache, writer=writer) if request_cache else None
    client = EndpointClient(_endpoint(settings, "hosted"), cache=cache)
    return ChatBackend(_need_stack(stack, "hosted", "endpoint client").enter_context(client))


def _guided_vllm(model_dir, settings, **_):
    from conflictlab.lm.guided import VLLMGuidedChat

    engine = dict(settings.get("vllm") or {})
    return VLLMGuidedChat(model_dir, dtype=_vllm_dtype(settings), max_model_len=settings["max_model_len"], **engine)


def _guided_served(model_dir, settings, *, stack, server_log, **_):
    from conflictlab.lm.guided import EndpointGuidedChat

    return EndpointGuidedChat(
        _serve(model_dir, settings, stack=stack, server_log=server_log, max_model_len=settings["max_model_len"])
    )


def _guided_endpoint(model_dir, settings, *, request_cache, writer, **_):
    from conflictlab.lm.endpoint import RequestCache
    from conflictlab.lm.guided import EndpointGuidedChat

    cache = RequestCache(request_cache, writer=f"judge-{writer}") if request_cache else None
    return EndpointGuidedChat(_endpoint(settings, "openai"), cache=cache)


def precision(settings: Mapping) -> str:
    """The precision backend ``settings["backend"]`` runs at on this machine (a hosted one: its endpoint)."""
    backend_spec(settings["backend"])
    return BUILDERS[settings["backend"]].precision(settings)


BUILDERS: dict[str, Builder] = {
    "hf": Builder(_build_hf, _hf_dtype),
    "vllm": Builder(_build_vllm, _vllm_dtype, _guided_vllm),
    "served": Builder(_build_served, _vllm_dtype, _guided_served),
    "openai": Builder(_build_openai, _endpoint_identity, _guided_endpoint),
    HOSTED: Builder(_build_hosted, _endpoint_identity),
}

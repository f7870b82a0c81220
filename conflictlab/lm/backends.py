"""The backend registry: every way a model runs, what each can do, and how one is built.

A backend is named in config (``generation.backend``, ``judges.backend``) or
implied by a model entry (a ``hosted:`` model runs on ``hosted``). Each is one
:class:`BackendSpec` in :data:`REGISTRY`, declaring its capabilities
(:data:`CAPABILITIES`) and the settings it reads; nothing outside this module
compares backend names. Callers ask:

* :func:`backend_spec` for a name's spec (an unknown name is refused with the
  known ones), and ``spec.has(capability)`` / ``spec.require(...)``;
* :func:`generation_backend` for the object that generates (``generate``,
  and for the local backend ``loglikelihoods``, ``hidden_states``,
  ``generate_contrastive``, ``generate_variants``);
* :func:`guided_chat` for the object that answers under a JSON schema
  (``complete_json``);
* :func:`backend_with` for a backend that has given capabilities (steered
  and method generation ask for ``activations`` or ``logits``).

A config that asks a backend for a capability it lacks is refused before any
job (:func:`conflictlab.run_config.capability_problems`), naming the model,
the backend and the capability. Adding a backend: one spec here (its
builders import their modules lazily, so listing the registry loads no
engine), its enum value in ``schemas/config.schema.yaml``, and a row in
``tests/test_backends.py`` (docs/architecture.md, Backends).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# What a backend can be asked for, and the attribute of the built object that does it.
CAPABILITIES = {
    "generate": ("greedy completions of token-id prompts", "generate"),
    "chat": ("greedy replies to chat messages and option read-outs, rendered by the endpoint", "read_choices"),
    "loglikelihood": ("log-probabilities of given continuations (Shapley scoring, option scores)", "loglikelihoods"),
    "logits": ("next-token logits inside decoding (CAD, AdaCAD)", "generate_contrastive"),
    "activations": ("hidden states and steering hooks on the decoder layers", "hidden_states"),
    "weights": ("the weights in process (continued pre-training)", "lm"),
    "guided_json": ("replies constrained to a JSON schema (judges' verdicts)", "complete_json"),
}


# The backend of a model entry with ``hosted:`` (its endpoint), whichever backend a stage configures.
HOSTED = "hosted"


class UnsupportedCapability(ValueError):
    """A backend was asked for a capability it does not declare."""


@dataclass(frozen=True)
class BackendSpec:
    """One backend: its name, capabilities and the settings and resources its jobs need.

    ``generation_keys``: the generation settings it reads beside the common
    ones (a rule's params hold exactly these); ``judge_keys``: the judge
    settings that change its replies. ``vllm_engine``: runs a vLLM engine,
    on GPUs when it has them, spread over a job's GPUs by tensor parallelism;
    ``own_tensor_parallel``: that spread is its own ``tensor_parallel_size``
    setting (else an engine argument in ``vllm``); ``all_cores``: the engine
    binds its own threads, so its job takes every core; ``server``: a job
    starts vLLM's server, whose output is a log of its own; ``hosted_model``:
    the model is an endpoint named by its ``hosted:`` settings, not a
    prepared folder. ``build(model_dir, settings, *, limit, stack,
    server_log, request_cache, writer)`` returns the generation object;
    ``guided(model_dir, settings, *, stack, server_log, request_cache,
    writer)`` the JSON-schema chat (None: no ``guided_json``);
    ``precision(settings)`` the dtype it runs at on this machine.
    """

    name: str
    summary: str
    capabilities: frozenset[str]
    build: Callable
    precision: Callable[[Mapping], str]
    guided: Callable | None = None
    generation_keys: tuple[str, ...] = ()
    judge_keys: tuple[str, ...] = ()
    vllm_engine: bool = False
    own_tensor_parallel: bool = False
    all_cores: bool = False
    server: bool = False
    hosted_model: bool = False

    def __post_init__(self):
        unknown = self.capabilities - set(CAPABILITIES)
        if unknown:
            raise ValueError(
                f"backend {self.name}: unknown capabilities {sorted(unknown)}; known: {list(CAPABILITIES)}"
            )
        if ("guided_json" in self.capabilities) != (self.guided is not None):
            raise ValueError(f"backend {self.name}: guided_json is declared exactly when a guided builder is given")

    def has(self, capability: str) -> bool:
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}")
        return capability in self.capabilities

    def require(self, capability: str, *, model: str, purpose: str) -> None:
        """UnsupportedCapability naming ``model``, this backend and ``capability`` when it lacks it."""
        if not self.has(capability):
            raise UnsupportedCapability(unsupported(model, self, capability, purpose))

    @property
    def takes_messages(self) -> bool:
        """Whether its prompts are chat messages (the endpoint renders them), not token ids."""
        return not self.has("generate")


def unsupported(model: str, spec: BackendSpec, capability: str, purpose: str) -> str:
    """The sentence that refuses ``capability`` of ``spec`` for ``model``."""
    offering = [name for name, other in REGISTRY.items() if capability in other.capabilities]
    return (
        f"{purpose}: model {model} runs on backend {spec.name} ({', '.join(sorted(spec.capabilities))}), "
        f"which lacks capability {capability} ({CAPABILITIES[capability][0]}); "
        f"backends with it: {', '.join(offering) or 'none'}"
    )


def backend_spec(name: str) -> BackendSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}") from None


def backend_with(*capabilities: str) -> str:
    """The first registered backend (in :data:`REGISTRY` order) declaring every one of ``capabilities``."""
    for name, spec in REGISTRY.items():
        if all(spec.has(c) for c in capabilities):
            return name
    raise ValueError(f"no registered backend has {', '.join(capabilities)}")


def check_method(method, backend: str, *, model: str):
    """The :class:`conflictlab.lm.methods.Method` ``method`` parsed, or
    UnsupportedCapability when ``backend`` cannot run it (CAD and AdaCAD read
    a second pass's logits at every step: capability ``logits``)."""
    from conflictlab.lm.methods import as_method

    method = as_method(method)
    if method.contrastive:
        backend_spec(backend).require("logits", model=model, purpose=f"method {method.format()}")
    return method


def model_backend(name: str, entry: Mapping, stage_backend: str) -> BackendSpec:
    """The backend model ``name`` (its config entry ``entry``) runs on in a
    stage whose configured backend is ``stage_backend``: a hosted model's
    endpoint, whatever the stage configures."""
    return backend_spec(HOSTED if "hosted" in entry else stage_backend)


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
    spec = backend_spec(settings["backend"])
    return spec.build(
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
    return spec.guided(
        model_dir, settings, stack=stack, server_log=server_log, request_cache=request_cache, writer=writer
    )


# ---- builders (each imports its engine only when called) ----


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
    from conflictlab.lm.generation import HFBackend
    from conflictlab.lm.loading import load

    return HFBackend(load(model_dir, dtype=settings.get("dtype")), batch_size=settings.get("batch_size", 8))


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

    if server_log is None:
        raise ValueError("backend served needs a server log path")
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

    endpoint = _serve(model_dir, settings, stack=stack, server_log=server_log, max_model_len=limit)
    return ChatBackend(stack.enter_context(EndpointClient(endpoint)))


def _build_openai(model_dir, settings, **_):
    from transformers import AutoTokenizer

    from conflictlab.lm.generation import OpenAIBackend
    from conflictlab.lm.loading import folder_eos_ids

    endpoint = _endpoint(settings, "openai")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
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


REGISTRY: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec(
            "hf",
            "transformers in process (the CPU default): the weights, logits and activations at hand",
            frozenset({"generate", "loglikelihood", "logits", "activations", "weights"}),
            _build_hf,
            _hf_dtype,
            generation_keys=("batch_size",),
            judge_keys=("model", "dtype", "batch_size"),
        ),
        BackendSpec(
            "vllm",
            "an in-process vLLM engine (the throughput path on GPU)",
            frozenset({"generate", "guided_json"}),
            _build_vllm,
            _vllm_dtype,
            guided=_guided_vllm,
            generation_keys=("tensor_parallel_size", "vllm"),
            judge_keys=("model", "dtype", "max_model_len", "vllm"),
            vllm_engine=True,
            own_tensor_parallel=True,
            all_cores=True,
        ),
        BackendSpec(
            "served",
            "vLLM's OpenAI-compatible server, started for the job, sent chat messages",
            frozenset({"chat", "guided_json"}),
            _build_served,
            _vllm_dtype,
            guided=_guided_served,
            generation_keys=("vllm",),
            judge_keys=("model", "dtype", "max_model_len", "vllm"),
            vllm_engine=True,
            server=True,
        ),
        BackendSpec(
            "openai",
            "an OpenAI-compatible endpoint: /v1/completions with token ids for a local model's "
            "generation, /v1/chat/completions for a hosted judge",
            frozenset({"generate", "guided_json"}),
            _build_openai,
            _endpoint_identity,
            guided=_guided_endpoint,
            generation_keys=("endpoint",),
            judge_keys=("model",),
            hosted_model=True,
        ),
        BackendSpec(
            "hosted",
            "a hosted chat model (a models entry with hosted:): /v1/chat/completions, whatever a stage configures",
            frozenset({"chat"}),
            _build_hosted,
            _endpoint_identity,
            generation_keys=("endpoint",),
            hosted_model=True,
        ),
    )
}

"""The backend registry: every way a model runs and what each can do (how one is built: :mod:`conflictlab.lm.builders`).

A backend is named in config (``generation.backend``, ``judges.backend``) or
implied by a model entry (a ``hosted:`` model runs on ``hosted``). Each is one
:class:`BackendSpec` in :data:`REGISTRY`, declaring its capabilities
(:data:`CAPABILITIES`) and the settings it reads; nothing outside this module
compares backend names. Callers ask:

* :func:`backend_spec` for a name's spec (an unknown name is refused with the
  known ones), and ``spec.has(capability)`` / ``spec.require(...)``;
* :func:`conflictlab.lm.builders.generation_backend` for the object that
  generates (``generate``, and for the local backend ``loglikelihoods``,
  ``hidden_states``, ``generate_contrastive``, ``generate_variants``);
* :func:`conflictlab.lm.builders.guided_chat` for the object that answers
  under a JSON schema (``complete_json``);
* :func:`backend_with` for a backend that has given capabilities (steered
  and method generation ask for ``activations`` or ``logits``).

A config that asks a backend for a capability it lacks is refused before any
job (:func:`conflictlab.run_config.capability_problems`), naming the model,
the backend and the capability. Adding a backend: one spec here, one
builder in :mod:`conflictlab.lm.builders` (apart, so that asking this module
reaches no engine), its enum value in ``schemas/config.schema.yaml``, and
its test in ``tests/test_backends.py`` (docs/architecture.md, A backend).
"""

from __future__ import annotations

from collections.abc import Mapping
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
    prepared folder. How it is built: :data:`conflictlab.lm.builders.BUILDERS`.
    """

    name: str
    summary: str
    capabilities: frozenset[str]
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


def model_backend(entry: Mapping, stage_backend: str) -> BackendSpec:
    """The backend a model (its config entry ``entry``) runs on in a
    stage whose configured backend is ``stage_backend``: a hosted model's
    endpoint, whatever the stage configures."""
    return backend_spec(HOSTED if "hosted" in entry else stage_backend)


REGISTRY: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec(
            "hf",
            "transformers in process (the CPU default): the weights, logits and activations at hand",
            frozenset({"generate", "loglikelihood", "logits", "activations", "weights"}),
            generation_keys=("batch_size",),
            judge_keys=("model", "dtype", "batch_size"),
        ),
        BackendSpec(
            "vllm",
            "an in-process vLLM engine (the throughput path on GPU)",
            frozenset({"generate", "guided_json"}),
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
            generation_keys=("endpoint",),
            judge_keys=("model",),
            hosted_model=True,
        ),
        BackendSpec(
            HOSTED,
            "a hosted chat model (a models entry with hosted:): /v1/chat/completions, whatever a stage configures",
            frozenset({"chat"}),
            generation_keys=("endpoint",),
            hosted_model=True,
        ),
    )
}

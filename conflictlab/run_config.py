"""Checks of a run's config that need more than its schema, made before any job.

rules/common.smk calls :func:`prepare` on the merged config and ``os.environ``
while the workflow is parsed (:func:`skip_hosted_without_key`, then
:func:`check_hosted_models`), so a missing API key or a model whose backend
lacks a capability its stage needs (:func:`capability_problems`) stops the run
before the first job, naming the config key, the model, the backend and the
capability or the environment variable. The config-derived helpers the rule
files share (GPUs, threads, a judge's job settings) live here too. All of it
is here, not in Snakemake code, so unit tests reach it (tests/test_run_config.py).

A config is the merged mapping Snakemake holds (``config.yaml`` under the
``--configfile`` files); ``environ`` is a mapping of environment variables.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from conflictlab import benchmarks
from conflictlab.lm.backends import BackendSpec, backend_spec, backend_with, model_backend, unsupported
from conflictlab.lm.endpoint import Endpoint

# Every config list of model names, by dotted key: each registered benchmark's and the shared ones.
MODEL_LISTS = tuple(benchmarks.all_model_list_keys())

# The lists whose stage needs a capability of the model's backend: (what the stage does, the capability).
# Their local models run on INTERNALS_BACKEND; a hosted model on its endpoint, which has none of them.
STAGE_CAPABILITIES = {
    "scorers": ("Shapley scoring", "loglikelihood"),
    "mechanistic.models": ("probes, spectral energy and projections", "activations"),
    "steering.models": ("activation steering", "activations"),
    "methods.models": ("conflict-resolution methods (prompted through token ids)", "generate"),
    "conflictbank.embedded.models": ("continued pre-training", "weights"),
}
# methods.models with CAD or AdaCAD in methods.list: they read a second pass's logits at every step.
CONTRASTIVE_STAGE = ("conflict-resolution methods (CAD and AdaCAD read the logits)", "logits")

# The backend of every stage above for a local model: one with all their capabilities (and logits).
INTERNALS_BACKEND = backend_with(
    *{cap for _, cap in STAGE_CAPABILITIES.values()},
    CONTRASTIVE_STAGE[1],
    *{cap for benchmark in benchmarks.REGISTRY for _, _, cap in benchmark.needs},
)


# The model lists whose jobs run an encoder-decoder model (models.<name>.encoder_decoder: FLAN-T5), each with the
# config key that must be null for it (the part of those jobs that reads activations): their jobs read greedy
# and contrastive generation and continuation log-likelihoods only, which conflictlab.lm runs on such a model
# (the prompt in the encoder, the continuation in the decoder). Every other list reads hidden states, steering
# hooks, the Shapley scorers' decoder rows, option logits or a vLLM engine, which it does not.
ENCODER_DECODER_LISTS = {"memotrap.models": None, "nq_swap.models": "nq_swap.steering"}


def lookup(config: Mapping, dotted: str):
    """``config["a"]["b"]`` for ``"a.b"``."""
    value = config
    for part in dotted.split("."):
        value = value[part]
    return value


def model_lists(config: Mapping) -> dict[str, list[str]]:
    """Every model list of ``config`` by dotted key (:data:`MODEL_LISTS`); a list of a benchmark that
    config's ``benchmarks:`` does not select is empty (conflictlab.benchmarks.selected)."""
    used = set(benchmarks.model_list_keys(config))
    return {key: list(lookup(config, key)) if key in used else [] for key in MODEL_LISTS}


def judges(config: Mapping) -> dict[str, Mapping]:
    """Each judge a run uses, by the config key that sets it: ``judges``, and
    ``conflicts.judge`` (its keys over ``judges``'s) where set, so that one run
    judges CONFLICTS with the CONFLICTS paper's judge and ContextConflict with
    its own (config/paper.yaml)."""
    found = {"judges": config["judges"]}
    override = config["conflicts"].get("judge")
    if override:
        found["conflicts.judge"] = {**config["judges"], **override}
    return found


def conflicts_judge(config: Mapping) -> Mapping:
    """The judge settings of the CONFLICTS judge job: ``conflicts.judge`` over ``judges``."""
    return judges(config).get("conflicts.judge", config["judges"])


def named_models(config: Mapping) -> dict[str, list[str]]:
    """The models of every model list (:func:`model_lists`) and judge (``<judge key>.model``), by config key."""
    return {**model_lists(config), **{f"{key}.model": [judge["model"]] for key, judge in judges(config).items()}}


def used_models(config: Mapping) -> list[str]:
    """Every model a configured rule runs, sorted (each is prepared once): the model lists and the judges."""
    named = {m for models in model_lists(config).values() for m in models}
    if any(b.judged for b in benchmarks.selected(config)):
        named |= {judge["model"] for judge in judges(config).values()}
    return sorted(named)


def is_hosted(config: Mapping, name: str) -> bool:
    """Whether model ``name`` is a hosted chat model (``hosted:``), not a local folder."""
    return "hosted" in config["models"][name]


def skip_hosted_without_key(config: MutableMapping, environ: Mapping[str, str]) -> dict[str, str]:
    """Remove every hosted model marked ``skip_without_key`` whose key
    variable is unset or empty in ``environ`` from every model list of
    ``config`` (in place), so a paper config can name closed models that not
    every user has a key for. Returns ``{model: variable}`` of the models it
    removed from a list, in list order. A judge (one model, not a list) is
    never skipped: :func:`check_hosted_models` refuses it instead.

    ValueError: ``skip_without_key`` without ``hosted.api_key_env``, or
    every generator skipped."""
    missing = {}
    for name, entry in config["models"].items():
        if not entry.get("skip_without_key"):
            continue
        variable = entry.get("hosted", {}).get("api_key_env")
        if not variable:
            raise ValueError(
                f"config: models.{name}.skip_without_key needs models.{name}.hosted.api_key_env, "
                "the variable whose absence skips it"
            )
        if not environ.get(variable):
            missing[name] = variable
    skipped = {}
    for key in MODEL_LISTS:
        parent, _, last = key.rpartition(".")
        mapping = lookup(config, parent) if parent else config
        skipped.update({m: missing[m] for m in mapping[last] if m in missing})
        mapping[last] = [m for m in mapping[last] if m not in missing]
    if skipped and not config["generators"] and "generators" in benchmarks.model_list_keys(config):
        variables = ", ".join(sorted(set(skipped.values())))
        raise ValueError(
            f"config: every generator was skipped (skip_without_key; unset: {variables}): "
            "name a local one or set the key"
        )
    return skipped


def hosted_problems(config: Mapping, environ: Mapping[str, str]) -> list[str]:
    """Every problem of the config's hosted models, one sentence each, naming
    the config key and, for a key, the environment variable (never its value):

    - a model missing from ``models`` that a list or a judge names;
    - a model whose backend lacks a capability its stage needs
      (:func:`capability_problems`);
    - a judge whose backend does not fit its model (a backend marked
      ``hosted_model``, openai, takes a hosted model, the others a local one);
    - a used hosted model with invalid endpoint settings, or whose key
      variable is unset or empty in ``environ``.

    Empty when the config can run."""
    problems = []
    named = named_models(config)
    unknown = sorted({m for names in named.values() for m in names} - set(config["models"]))
    if unknown:
        problems.append(f"models named in {', '.join(named)} are missing from 'models': {', '.join(unknown)}")
    known = lambda name: name in config["models"]  # noqa: E731
    problems += capability_problems(config)
    for key, judge in judges(config).items():
        spec = backend_spec(judge["backend"])
        if known(judge["model"]) and spec.hosted_model != is_hosted(config, judge["model"]):
            problems.append(
                f"{key}.backend {judge['backend']} with {key}.model {judge['model']}: backend {spec.name} takes "
                + ("a hosted model (hosted:)" if spec.hosted_model else "a local model (source:)")
            )
    for name in used_models(config):
        if not known(name) or not is_hosted(config, name):
            continue
        try:
            endpoint = Endpoint.from_settings(config["models"][name]["hosted"])
        except ValueError as err:
            problems.append(f"models.{name}.hosted: {err.args[0]}")
            continue
        if endpoint.api_key_env and not environ.get(endpoint.api_key_env):
            where = ", ".join(key for key, names in named.items() if name in names)
            problems.append(
                f"models.{name}.hosted: environment variable {endpoint.api_key_env} (the API key) is not "
                f"set or empty; set it, or name another model in {where}"
            )
    return problems


def check_hosted_models(config: Mapping, environ: Mapping[str, str]) -> None:
    """ValueError listing every :func:`hosted_problems` problem, if any."""
    problems = hosted_problems(config, environ)
    if problems:
        raise ValueError("config: " + "\nconfig: ".join(problems))


def capability_problems(config: Mapping) -> list[str]:
    """One sentence per (list, model) whose backend lacks the capability the
    list's stage needs (:data:`STAGE_CAPABILITIES`; ``logits`` for the
    methods models when methods.list has CAD or AdaCAD), naming the config
    key, the model, its backend and the capability; per judge whose
    backend can neither decode under a schema nor read logits; and per list
    naming an encoder-decoder model it cannot run (:func:`encoder_decoder_problems`). A model
    missing from ``models`` is left to :func:`hosted_problems`."""
    from conflictlab.lm.methods import as_method

    stages = dict(STAGE_CAPABILITIES)
    if any(as_method(m).contrastive for m in config["methods"]["list"]):
        stages["methods.models"] = CONTRASTIVE_STAGE
    needs = [(key, stage, capability) for key, (stage, capability) in stages.items()]
    needs += [need for name in benchmarks.selected_names(config) for need in benchmarks.BY_NAME[name].needs]
    problems = []
    for key, stage, capability in needs:
        for name in lookup(config, key):
            entry = config["models"].get(name)
            if entry is None:
                continue
            spec = model_backend(entry, INTERNALS_BACKEND)
            if not spec.has(capability):
                where = f", a hosted model ({entry['hosted']['model']})" if "hosted" in entry else ""
                problems.append(
                    f"{key} names {name}{where}: {unsupported(name, spec, capability, stage)}; "
                    "name a local model (source:) there"
                )
    for key, judge in judges(config).items():
        spec = backend_spec(judge["backend"])
        if not (spec.has("guided_json") or spec.has("logits")):
            problems.append(f"{key}: {unsupported(judge['model'], spec, 'guided_json', 'a judge')}")
    return problems + encoder_decoder_problems(config)


def encoder_decoder_problems(config: Mapping) -> list[str]:
    """One sentence per list (or judge) that names an encoder-decoder model where its jobs need what the model
    layer does not run on one (:data:`ENCODER_DECODER_LISTS`)."""
    seq2seq = {name for name, entry in config["models"].items() if entry.get("encoder_decoder")}
    problems = []
    for key, names in named_models(config).items():
        for name in (n for n in names if n in seq2seq):
            why = f"{key} names {name}, an encoder-decoder model (models.{name}.encoder_decoder)"
            if key not in ENCODER_DECODER_LISTS:
                problems.append(
                    f"{why}: the model layer runs one for {' and '.join(ENCODER_DECODER_LISTS)} only (greedy and "
                    "contrastive generation, continuation log-likelihoods), not for the hidden states, steering "
                    f"hooks, Shapley scorers, option logits or vLLM engine {key} may need; take it out of {key}"
                )
            elif (off := ENCODER_DECODER_LISTS[key]) and lookup(config, off) is not None:
                problems.append(
                    f"{why}: {off} steers the decoder layers' activations, which it does not run; "
                    f"set {off} to null or take {name} out of {key}"
                )
    return problems


def prepare(config: MutableMapping, environ: Mapping[str, str]) -> str | None:
    """The checks rules/common.smk runs first: hosted models without their key
    leave the model lists (:func:`skip_hosted_without_key`), then every
    remaining problem is refused (:func:`check_hosted_models`). Returns the
    warning to log for the skipped models, or None."""
    skipped = skip_hosted_without_key(config, environ)
    check_hosted_models(config, environ)
    if not skipped:
        return None
    return "config: skipping hosted models whose API key variable is unset or empty (skip_without_key): " + ", ".join(
        f"{name} ({variable})" for name, variable in skipped.items()
    )


def subset(mapping: Mapping, *keys: str) -> dict:
    """Only ``keys`` of a config mapping: a rule's params hold exactly the
    settings it reads, so editing another key reruns nothing."""
    return {key: mapping[key] for key in keys if key in mapping}


def model_dir(name: str) -> str:
    """The prepared folder of local model ``name``."""
    return f"resources/models/{name}"


def hosted_spec(config: Mapping, name: str) -> Mapping | None:
    """A hosted model's endpoint settings (None for a local model): a job's params."""
    return config["models"][name].get("hosted")


def shuffle_types(config: Mapping, summarization_types: list[str]) -> list[str]:
    """The summarization types of the shuffle analysis (Tables 9-10): those in
    shapley.shuffle_types (null: all), and none without a scorer."""
    if not config["scorers"]:
        return []
    chosen = config["shapley"].get("shuffle_types")
    return [t for t in summarization_types if chosen is None or t in chosen]


def generation_spec(config: Mapping) -> BackendSpec:
    """The spec of ``generation.backend``."""
    return backend_spec(config["generation"]["backend"])


def torch_threads(cores: int) -> int:
    """Threads of a model job: half the cores. Two such jobs run side by side:
    their start-up (imports, model load) is single-threaded, and on the 2-core
    demo machine two 1-thread jobs finish the DAG sooner than one 2-thread job at a time."""
    return max(1, cores // 2)


def generation_threads(config: Mapping, cores: int) -> int:
    """A generation job's threads: every core for a backend whose engine binds
    its own threads (vLLM, one engine per job), else :func:`torch_threads`."""
    return cores if generation_spec(config).all_cores else torch_threads(cores)


def gpu_for_generation(config: Mapping) -> int:
    """The generation stage's GPU switch: 1 where its backend runs a vLLM engine."""
    return int(generation_spec(config).vllm_engine)


def model_gpus(config: Mapping, name: str, wanted: int) -> int:
    """GPUs a job running model ``name`` requests when its stage runs on GPUs
    (``wanted``, the stage's 0/1 switch): the model's ``gpus`` (default 1;
    configured, since it must be known before the model is prepared); none for
    a stage on the CPU or a hosted model, whose endpoint does the work."""
    if not wanted or is_hosted(config, name):
        return 0
    return config["models"][name].get("gpus", 1)


def generation_gpus(config: Mapping, name: str) -> int:
    """A generation job's GPUs (rules generate, conflicts_respond): a set
    generation.tensor_parallel_size (a backend with its own tensor-parallel
    setting, vllm) fixes them for every model."""
    spec = generation_spec(config)
    fixed = config["generation"].get("tensor_parallel_size") if spec.own_tensor_parallel else None
    gpus = model_gpus(config, name, gpu_for_generation(config))
    return gpus and (fixed or gpus)


def with_gpus(settings: Mapping, gpus: int, *, own_key: bool) -> dict:
    """``settings`` (a rule's generation or judge params) with a vLLM engine
    spread over ``gpus`` GPUs by tensor parallelism: as a key of its own
    (``own_key``, for a backend with its own tensor-parallel setting; 1
    without GPUs), else, for more than one GPU, as the engine argument in
    ``vllm``. A backend without a vLLM engine gets ``settings`` unchanged."""
    spec = backend_spec(settings["backend"])
    if spec.own_tensor_parallel and own_key:
        return {**settings, "tensor_parallel_size": max(gpus, 1)}
    if spec.vllm_engine and gpus > 1:
        return {**settings, "vllm": {**settings.get("vllm", {}), "tensor_parallel_size": gpus}}
    return dict(settings)


def judge_job(config: Mapping, judges: Mapping, cache: str, request_cache: str) -> tuple[dict, dict, int, dict]:
    """A judge's (settings, inputs, GPUs, log paths) for its jobs, from a
    judges mapping (config ``judges``, or :func:`conflicts_judge`): the
    settings that change its replies (its params; a hosted judge's endpoint),
    its model folder (a hosted judge: the request cache ``request_cache``)
    and the reply cache ``cache``, the GPUs of a job (none for a hosted
    judge) with its vLLM engine spread over them, and the job's log paths
    with ``{job}`` to fill: its log and, where the backend starts a server, the server's."""
    spec = backend_spec(judges["backend"])
    gpus = model_gpus(config, judges["model"], judges["gpu"])
    endpoint = {"endpoint": hosted_spec(config, judges["model"])} if spec.hosted_model else {}
    settings = with_gpus({**subset(judges, "backend", *spec.judge_keys), **endpoint}, gpus, own_key=False)
    model = {"request_cache": request_cache} if spec.hosted_model else {"judge_model": model_dir(judges["model"])}
    logs = {"main": "results/logs/judges/{job}.log"}
    if spec.server:
        logs["server"] = "results/logs/judges/{job}.server.log"
    return settings, {**model, "cache": cache}, gpus, logs

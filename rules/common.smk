# Config-derived names and helpers that every rule file needs. Each rule file
# owns its output paths and input functions, beside its rules; the target
# lists that `all` and the HTML report collect are in rules/report.smk.

import os
from pathlib import Path

from snakemake.logging import logger

from conflictlab.contextconflict.conflict_types import TASK_FAMILY
from conflictlab.contextconflict.steering import all_variants
from conflictlab.contextconflict.variants import SteeredModel, is_rerun
from conflictlab import run_config
from conflictlab.lm.methods import MethodRun
from conflictlab.provenance import code_hash as _code_hash
from conflictlab.wildcards import MODEL_NAME_PATTERN

REPO = Path(workflow.basedir)

# Hosted models without their key leave the model lists (skip_without_key), with one warning, before anything reads them.
_skipped = run_config.skip_hosted_without_key(config, os.environ)
if _skipped:
    logger.warning(
        "config: skipping hosted models whose API key variable is unset or empty (skip_without_key): "
        + ", ".join(f"{name} ({variable})" for name, variable in _skipped.items())
    )

REASONING_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "reasoning"]
SUMMARIZATION_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "summarization"]
# The summarization types of the shuffle analysis (Tables 9-10), where it runs (with a scorer).
SHUFFLE_TYPES = (
    [
        t
        for t in SUMMARIZATION_TYPES
        if config["shapley"].get("shuffle_types") is None or t in config["shapley"]["shuffle_types"]
    ]
    if config["scorers"]
    else []
)


def code_hash(script):
    """Digest of every conflictlab module workflow/scripts/<script> imports,
    directly or transitively (conflictlab.provenance), so that an edit to any
    of them reruns the rule and an edit elsewhere does not."""
    return _code_hash(REPO / "workflow" / "scripts" / script, REPO)


def subset(mapping, *keys):
    """Only ``keys`` of a config mapping: a rule's params hold exactly the
    settings it reads, so editing another key reruns nothing."""
    return {key: mapping[key] for key in keys if key in mapping}


# Model jobs take half the cores (Snakemake sets OMP_NUM_THREADS, which torch
# follows), so two run side by side: their start-up (imports, model load) is
# single-threaded, and on the 2-core demo machine two 1-thread jobs finish the
# DAG sooner than one 2-thread job at a time.
# (A function, so that commands without --cores, like --report, still parse.)
def torch_threads(wildcards):
    return max(1, workflow.cores // 2)


def generation_threads(wildcards):
    """vLLM runs one engine per job with its own thread binding: give it every core."""
    return workflow.cores if config["generation"]["backend"] == "vllm" else torch_threads(wildcards)


# The model jobs at the head of the DAG's longest chains (responses -> Shapley
# scoring -> Balance, Table 3, Table 4; CONFLICTS responses -> judge) and the
# seconds-long data jobs that feed them start first; the other model jobs, whose
# descendants are short report jobs, then fill the cores behind them instead of
# leaving one long job running alone at the end. Without it the six data jobs
# waited behind two ConflictBank jobs and generation started 2 minutes late.
CHAIN_HEAD_PRIORITY = 1


GPU_FOR_GENERATION = 1 if config["generation"]["backend"] in ("vllm", "served") else 0


# A job that runs a model's weights on GPUs asks for the model's `gpus` of
# them (default 1; a 70B-class model in bfloat16 needs several). SLURM gets the
# count as the job's --gpus (profiles/slurm); a transformers job spreads the
# model over the GPUs it needs (conflictlab.lm.loading), a vLLM engine over all
# the job's GPUs by tensor parallelism (vllm_gpus). The count must be known
# before the model is prepared, so it is configured, not measured from the
# weights; the jobs check it against the weights' size when they start.
def model_gpus(name, wanted):
    """GPUs a job running model ``name`` requests when its stage runs on GPUs
    (``wanted``, the stage's 0/1 switch): the model's ``gpus``; none for a
    stage on the CPU or a hosted model, whose endpoint does the work."""
    if not wanted or is_hosted(name):
        return 0
    return config["models"][name].get("gpus", 1)


def gpu_for_model(wildcards):
    """The GPU request of a job running ``{model}`` under the generation backend's switch."""
    return model_gpus(wildcards.model, GPU_FOR_GENERATION)


def generation_gpus(name):
    """A generation job's GPUs (rules generate, conflicts_respond): a set
    generation.tensor_parallel_size (vllm backend) fixes them for every model."""
    fixed = config["generation"].get("tensor_parallel_size") if config["generation"]["backend"] == "vllm" else None
    gpus = model_gpus(name, GPU_FOR_GENERATION)
    return gpus and (fixed or gpus)


def vllm_gpus(settings, gpus, *, own_key):
    """``settings`` (a rule's generation or judge params) with a vLLM engine
    spread over ``gpus`` GPUs by tensor parallelism: as a key of its own
    (``own_key``: generation's vllm backend; 1 without GPUs), else, for more
    than one GPU, as the engine argument in ``vllm`` (the vLLM judge and the
    served backends). Other backends are returned unchanged."""
    if settings["backend"] == "vllm" and own_key:
        return {**settings, "tensor_parallel_size": max(gpus, 1)}
    if settings["backend"] in ("vllm", "served") and gpus > 1:
        return {**settings, "vllm": {**settings.get("vllm", {}), "tensor_parallel_size": gpus}}
    return settings


def judge_job(judges, cache):
    """A judge's (settings, inputs, GPUs, logs) for its jobs, from a judges
    mapping (config ``judges``, or conflictlab.run_config.conflicts_judge):
    the settings that change its replies (its params), its model folder (a
    hosted judge: the request cache) and the reply cache ``cache``, the GPUs of a job
    (none for a hosted judge) with its vLLM engine spread over them, and
    ``logs(job)``: a job's log and, with backend served, its vLLM server's."""
    backend = judges["backend"]
    gpus = model_gpus(judges["model"], judges["gpu"])
    keys = {
        "hf": ("model", "dtype", "batch_size"),
        "vllm": ("model", "dtype", "max_model_len", "vllm"),
        "served": ("model", "dtype", "max_model_len", "vllm"),
        "openai": ("model",),
    }[backend]
    settings = vllm_gpus(
        {
            **subset(judges, "backend", *keys),
            **({"endpoint": hosted_spec(judges["model"])} if backend == "openai" else {}),
        },
        gpus,
        own_key=False,
    )
    inputs = {
        **({"request_cache": REQUEST_CACHE} if backend == "openai" else {"judge_model": model_dir(judges["model"])}),
        "cache": cache,
    }
    logs = lambda job: {
        "main": f"results/logs/judges/{job}.log",
        **({"server": f"results/logs/judges/{job}.server.log"} if backend == "served" else {}),
    }
    return settings, inputs, gpus, logs


def reported(path, caption, category):
    """``path`` flagged for the HTML report, with report/<caption>.rst as caption."""
    return report(path, caption=f"../report/{caption}.rst", category=category)


def flagged(outputs, captions, category):
    """``outputs`` with the keys in ``captions`` flagged for the report (each
    path of a list value)."""

    def flag(key, value):
        if key not in captions:
            return value
        if isinstance(value, list):
            return [reported(p, captions[key], category) for p in value]
        return reported(value, captions[key], category)

    return {key: flag(key, value) for key, value in outputs.items()}


def used_models():
    """Every model a configured rule runs (each is prepared once)."""
    return run_config.used_models(config)


def judge_label():
    """The judge's name in table captions."""
    return config["judges"]["model"]


def is_hosted(name):
    """Whether model ``name`` is a hosted chat model (``hosted:``), not a local folder."""
    return run_config.is_hosted(config, name)


# Unknown model names, hosted models where a stage needs weights, a judge
# backend that does not fit, bad endpoint settings, an unset key: refused here.
run_config.check_hosted_models(config, os.environ)


# The generators whose own weights a rule reads (Table 3's causal intervention
# scores responses under the generator itself; the paper, too, has it for its
# open generators only).
LOCAL_GENERATORS = [name for name in config["generators"] if not is_hosted(name)]


# The reply cache of every endpoint request (conflictlab.lm.endpoint.RequestCache),
# declared like the judge cache (rules/judges.smk): the output of rule
# request_cache, an input of every job that talks to a hosted model.
REQUEST_CACHE = "results/requests/cache"


def model_inputs(name):
    """What a job running model ``name`` reads: its prepared folder, or for a
    hosted model the request cache."""
    return {"request_cache": REQUEST_CACHE} if is_hosted(name) else {"model": model_dir(name)}


def hosted_spec(name):
    """A hosted model's endpoint settings (None for a local model): a job's params."""
    return config["models"][name].get("hosted")


def model_dir(name):
    return f"resources/models/{name}"


def default_scorer():
    """The first configured scorer: the one the figures, Table 3 and the shuffle
    tables use (None without scorers; those targets are then not requested)."""
    return config["scorers"][0] if config["scorers"] else None


# A responding model is a generator, a steered rerun "name@variant" of a
# steering model or a method's rerun "name@method" of a methods model
# (conflictlab.contextconflict.variants spells them).


def steering_variants():
    return all_variants(config["steering"]["alpha"], config["steering"]["alpha_sweep"])


def steered_names(model):
    """``model``'s steered reruns; ``model`` may be the wildcard "{model}" of a path template."""
    return [SteeredModel(model, variant).format() for variant in steering_variants()]


def method_names(model):
    """``model``'s method reruns (config ``methods.list``); ``model`` may be the wildcard "{model}"."""
    return [MethodRun(model, method).format() for method in config["methods"]["list"]]


def samples_path(model, conflict_type):
    """The samples a model's responses answer: a steered or a method's rerun
    answers the steering test split, everything else the whole subset."""
    if is_rerun(model):
        return f"results/steering/split/{conflict_type}.test.parquet"
    return f"results/data/{conflict_type}.parquet"

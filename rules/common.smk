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

# Hosted models without their key leave the model lists (skip_without_key), with one warning; then whatever
# cannot run (e.g. Shapley scoring on a chat-only endpoint: run_config.prepare) is refused here, before any job.
_skipped = run_config.prepare(config, os.environ)
if _skipped:
    logger.warning(_skipped)

REASONING_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "reasoning"]
SUMMARIZATION_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "summarization"]
# The summarization types of the shuffle analysis (Tables 9-10), where it runs (with a scorer).
SHUFFLE_TYPES = run_config.shuffle_types(config, SUMMARIZATION_TYPES)


def code_hash(script):
    """Digest of every conflictlab module workflow/scripts/<script> imports,
    directly or transitively (conflictlab.provenance), so that an edit to any
    of them reruns the rule and an edit elsewhere does not."""
    return _code_hash(REPO / "workflow" / "scripts" / script, REPO)


subset = run_config.subset


# Model jobs take half the cores (run_config.torch_threads); functions, so that commands without --cores parse.
torch_threads = lambda wildcards: run_config.torch_threads(workflow.cores)
generation_threads = lambda wildcards: run_config.generation_threads(config, workflow.cores)


# The model jobs at the head of the DAG's longest chains (responses -> Shapley
# scoring -> Balance, Table 3, Table 4; CONFLICTS responses -> judge) and the
# seconds-long data jobs that feed them start first; the other model jobs, whose
# descendants are short report jobs, then fill the cores behind them instead of
# leaving one long job running alone at the end. Without it the six data jobs
# waited behind two ConflictBank jobs and generation started 2 minutes late.
CHAIN_HEAD_PRIORITY = 1


# A backend that runs a vLLM engine puts generation on GPUs; a job running a model's weights on GPUs asks for the
# model's `gpus` of them (SLURM: --gpus, profiles/slurm); a vLLM engine spreads over them (run_config.model_gpus).
GPU_FOR_GENERATION = run_config.gpu_for_generation(config)
GENERATION_BACKEND = run_config.generation_spec(config)
model_gpus = lambda name, wanted: run_config.model_gpus(config, name, wanted)
gpu_for_model = lambda wildcards: model_gpus(wildcards.model, GPU_FOR_GENERATION)
generation_gpus = lambda name: run_config.generation_gpus(config, name)
vllm_gpus = run_config.with_gpus


def judge_job(judges, cache):
    """A judge's (settings, inputs, GPUs, logs) for its jobs (run_config.judge_job); ``logs(job)``: a job's logs."""
    settings, inputs, gpus, logs = run_config.judge_job(config, judges, cache, REQUEST_CACHE)
    return settings, inputs, gpus, lambda job: {key: path.format(job=job) for key, path in logs.items()}


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


# Every model a configured rule runs (each is prepared once); the judge's name in table captions; whether a
# model is a hosted chat model (hosted:), not a local folder.
used_models = lambda: run_config.used_models(config)
judge_label = lambda: config["judges"]["model"]
is_hosted = lambda name: run_config.is_hosted(config, name)


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


hosted_spec = lambda name: run_config.hosted_spec(config, name)
model_dir = run_config.model_dir


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

"""Checks of a run's config that need more than its schema, made before any job.

rules/common.smk calls :func:`skip_hosted_without_key` and
:func:`check_hosted_models` on the merged config and ``os.environ`` while the
workflow is parsed, so a missing API key or a hosted model where a stage needs
the model's weights stops the run before the first job, naming the config key
or the environment variable. They live here, not in Snakemake code, so unit
tests reach them (tests/test_run_config.py).

A config is the merged mapping Snakemake holds (``config.yaml`` under the
``--configfile`` files); ``environ`` is a mapping of environment variables.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from conflictlab import benchmarks
from conflictlab.lm.endpoint import Endpoint

# Every config list of model names, by dotted key: each registered benchmark's and the shared ones.
MODEL_LISTS = tuple(benchmarks.all_model_list_keys())

# The lists whose stage runs a model's weights or activations, which an endpoint does not expose.
INTERNALS_STAGES = {
    "scorers": "Shapley scoring",
    "mechanistic.models": "probes, spectral energy and projections",
    "steering.models": "activation steering",
    "methods.models": "conflict-resolution methods (hf backend: CAD and AdaCAD read the logits)",
    "conflictbank.embedded.models": "continued pre-training",
}


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
    - a hosted model in a list whose stage needs the model's internals
      (:data:`INTERNALS_STAGES`);
    - a judge whose backend does not fit its model (``openai`` takes a hosted
      model, the other backends a local one);
    - a used hosted model with invalid endpoint settings, or whose key
      variable is unset or empty in ``environ``.

    Empty when the config can run."""
    problems = []
    lists = model_lists(config)
    named = dict(lists)
    named.update({f"{key}.model": [judge["model"]] for key, judge in judges(config).items()})
    unknown = sorted({m for names in named.values() for m in names} - set(config["models"]))
    if unknown:
        problems.append(f"models named in {', '.join(named)} are missing from 'models': {', '.join(unknown)}")
    known = lambda name: name in config["models"]  # noqa: E731
    for key, stage in INTERNALS_STAGES.items():
        for name in lists[key]:
            if known(name) and is_hosted(config, name):
                problems.append(
                    f"{key} names {name}, a hosted model ({config['models'][name]['hosted']['model']}); "
                    f"{stage} needs the model's internals: name a local model (source:) there"
                )
    for key, judge in judges(config).items():
        if known(judge["model"]) and (judge["backend"] == "openai") != is_hosted(config, judge["model"]):
            problems.append(
                f"{key}.backend {judge['backend']} with {key}.model {judge['model']}: backend openai takes "
                "a hosted model (hosted:), the other backends a local one (source:)"
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

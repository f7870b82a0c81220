import hashlib
import json
import sys
from pathlib import Path

REPO = Path(workflow.basedir)
CONFLICT_TYPES = ("ambiguity", "granularity", "perspective", "inferential", "misinformation", "temporal")
REASONING_TYPES = [t for t in ("inferential", "misinformation", "temporal") if t in config["conflict_types"]]
SUMMARIZATION_TYPES = [t for t in ("ambiguity", "granularity", "perspective") if t in config["conflict_types"]]
ARBITRATION_REPORT = [
    "results/figures/arbitration_fig4.png",
    "results/figures/arbitration_fig4.pdf",
    "results/tables/arbitration_accuracy.md",
    "results/tables/arbitration_accuracy.csv",
    "results/tables/arbitration_sensitivity.md",
    "results/tables/arbitration_sensitivity.csv",
]
ARBITRATION_CAPTIONS = {
    "results/figures/arbitration_fig4.png": "arbitration_fig4",
    "results/tables/arbitration_accuracy.csv": "arbitration_accuracy",
    "results/tables/arbitration_sensitivity.csv": "arbitration_sensitivity",
}
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


GPU_FOR_GENERATION = 1 if config["generation"]["backend"] == "vllm" else 0


def reported(path, caption, category):
    """``path`` flagged for the HTML report, with report/<caption>.rst as caption."""
    return report(path, caption=f"../report/{caption}.rst", category=category)


def reported_pngs(paths, caption, category):
    """Every PNG of ``paths`` flagged for the report; other files as they are."""
    return [reported(p, caption, category) if p.endswith(".png") else p for p in paths]


def library_hash(*modules):
    """Digest of the conflictlab modules behind a job, so that code edits rerun it."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update((REPO / "conflictlab" / f"{module}.py").read_bytes())
    return digest.hexdigest()[:16]


def check_model_names():
    named = (
        config["generators"]
        + config["scorers"]
        + config["arbitration"]["models"]
        + config["mechanistic"]["models"]
        + config["steering"]["models"]
    )
    unknown = sorted(set(named) - set(config["models"]))
    if unknown:
        raise ValueError(
            "config: generators/scorers/arbitration.models/mechanistic.models/steering.models name models missing from 'models': "
            + ", ".join(unknown)
        )


check_model_names()


def used_models():
    return sorted(
        set(config["generators"])
        | set(config["scorers"])
        | set(config["arbitration"]["models"])
        | set(config["mechanistic"]["models"])
        | set(config["steering"]["models"])
    )


def model_config(wildcards):
    return config["models"][wildcards.model]


def model_dir(name):
    return f"resources/models/{name}"


def samples_path(model, conflict_type):
    """The samples a model's responses answer: a steered rerun (``name@variant``)
    answers the steering test split, everything else the whole subset."""
    if "@" in model:
        return f"results/steering/split/{conflict_type}.test.parquet"
    return f"results/data/{conflict_type}.parquet"


def subset_inputs(wildcards):
    """The JSON files a build_subset job reads (none when reading the hub)."""
    if config["data"]["source"] != "released":
        return []
    folder = Path(config["data"]["root"]) / f"{wildcards.conflict_type}_conflict"
    return sorted(str(p) for p in folder.rglob("*.json"))


def all_targets():
    return report_inputs() + ["results/report.html"]


def report_inputs():
    """Every result of the configured workflow (the HTML report waits for all of them)."""
    targets = expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"])
    targets += [model_dir(name) for name in used_models()]
    targets += expand(
        "results/responses/{model}/{conflict_type}.parquet",
        model=config["generators"],
        conflict_type=config["conflict_types"],
    )
    if REASONING_TYPES:
        targets += ["results/tables/accuracy.md", "results/tables/accuracy.csv"]
    if SUMMARIZATION_TYPES and config["scorers"]:
        targets += balance_targets()
    if config["arbitration"]["models"]:
        targets += ARBITRATION_REPORT
    for model in config["mechanistic"]["models"]:
        targets += mechanistic_outputs(model)
    if config["steering"]["models"]:
        targets += steering_outputs()
    return targets


def mechanistic_outputs(model):
    figures = [f"results/figures/fig{n}_{name}_{model}.{ext}" for n, name in ((2, "probes"), (3, "projection"), (4, "spectral")) for ext in ("png", "pdf")]
    tables = [f"results/tables/table8_{model}.{ext}" for ext in ("md", "csv")]
    data = [f"results/mechanistic/{model}/{name}.parquet" for name in ("probes", "spectral", "projection")]
    return data + tables + figures


def balance_targets():
    targets = expand("results/tables/{table}.{ext}", table=["balance", "table3", "table6"], ext=["md", "csv"])
    targets += expand(
        "results/figures/position_{kind}_{model}.{ext}",
        kind=["bars", "pies"],
        model=config["generators"],
        ext=["png", "pdf"],
    )
    targets += expand(
        "results/tables/table{n}_{model}.{ext}", n=[9, 10], model=config["generators"], ext=["md", "csv"]
    )
    return targets


def default_scorer():
    """The first configured scorer: the one the figures, Table 3 and the shuffle
    tables use (None without scorers; those targets are then not requested)."""
    return config["scorers"][0] if config["scorers"] else None


# Steering variants. A steered rerun is a pseudo-model "name@variant" so that the
# accuracy, Shapley and attribution rules score it unchanged: "base" (no
# steering, same decoding as the steered runs) or "<method>-a<alpha>".
STEERING_METHODS = ("all_tokens", "first_generated", "cas")
STEERING_VARIANT = r"base|(all_tokens|first_generated|cas)-a[0-9.]+"


def steering_variant(method, alpha):
    return f"{method}-a{alpha:g}"


def table4_variants():
    alpha = config["steering"]["alpha"]
    return ["base"] + [steering_variant(m, alpha) for m in STEERING_METHODS]


def sweep_variants():
    return [steering_variant(m, a) for m in ("all_tokens", "first_generated") for a in config["steering"]["alpha_sweep"]]


def steering_variants():
    return list(dict.fromkeys(table4_variants() + sweep_variants()))


def parse_variant(variant):
    """(method, alpha) of a variant name; ("base", 0.0) for the unsteered rerun."""
    if variant == "base":
        return "base", 0.0
    method, alpha = variant.rsplit("-a", 1)
    return method, float(alpha)


def variant_schedule(variant):
    """The injection schedule of a variant (None for base)."""
    method, _ = parse_variant(variant)
    if method == "base":
        return None
    return config["steering"]["cas_schedule"] if method == "cas" else method


def steering_generation_settings():
    """The generation settings of steered reruns: hf, with steering's length,
    batch size and precision."""
    steering = config["steering"]
    return {
        **config["generation"],
        "backend": "hf",
        "max_new_tokens": steering["max_new_tokens"],
        "batch_size": steering["batch_size"],
        "dtype": steering["dtype"],
    }


def steered_names(model):
    return [f"{model}@{variant}" for variant in steering_variants()]


def steering_metric_inputs(wildcards=None):
    """Per steered rerun: accuracy summaries (reasoning) and attributions under
    the default scorer (summarization)."""
    names = [name for model in config["steering"]["models"] for name in steered_names(model)]
    inputs = {}
    if REASONING_TYPES:
        inputs["accuracy"] = [f"results/metrics/{name}/accuracy_summary.parquet" for name in names]
    if SUMMARIZATION_TYPES and default_scorer():
        inputs["attributions"] = [f"results/metrics/{name}/attributions_{default_scorer()}.parquet" for name in names]
    return inputs


def steering_outputs():
    targets = expand("results/tables/table4.{ext}", ext=["md", "tex", "csv"])
    targets += expand(
        "results/figures/fig31_alpha_{model}.{ext}", model=config["steering"]["models"], ext=["png", "pdf"]
    )
    return targets

import hashlib
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
GPU_FOR_GENERATION = 1 if config["generation"]["backend"] == "vllm" else 0


def library_hash(*modules):
    """Digest of the conflictlab modules behind a job, so that code edits rerun it."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update((REPO / "conflictlab" / f"{module}.py").read_bytes())
    return digest.hexdigest()[:16]


def check_model_names():
    named = config["generators"] + config["scorers"] + config["arbitration"]["models"] + config["mechanistic"]["models"]
    unknown = sorted(set(named) - set(config["models"]))
    if unknown:
        raise ValueError(
            "config: generators/scorers/arbitration.models name models missing from 'models': "
            + ", ".join(unknown)
        )


check_model_names()


def used_models():
    return sorted(
        set(config["generators"])
        | set(config["scorers"])
        | set(config["arbitration"]["models"])
        | set(config["mechanistic"]["models"])
    )


def model_config(wildcards):
    return config["models"][wildcards.model]


def model_dir(name):
    return f"resources/models/{name}"


def subset_inputs(wildcards):
    """The JSON files a build_subset job reads (none when reading the hub)."""
    if config["data"]["source"] != "released":
        return []
    folder = Path(config["data"]["root"]) / f"{wildcards.conflict_type}_conflict"
    return sorted(str(p) for p in folder.rglob("*.json"))


def all_targets():
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

import hashlib
from pathlib import Path

REPO = Path(workflow.basedir)
CONFLICT_TYPES = ("ambiguity", "granularity", "perspective", "inferential", "misinformation", "temporal")
REASONING_TYPES = [t for t in ("inferential", "misinformation", "temporal") if t in config["conflict_types"]]
GPU_FOR_GENERATION = 1 if config["generation"]["backend"] == "vllm" else 0


def library_hash(*modules):
    """Digest of the conflictlab modules behind a job, so that code edits rerun it."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update((REPO / "conflictlab" / f"{module}.py").read_bytes())
    return digest.hexdigest()[:16]


def check_model_names():
    unknown = sorted(set(config["generators"] + config["scorers"]) - set(config["models"]))
    if unknown:
        raise ValueError(
            f"config: generators/scorers name models missing from 'models': {', '.join(unknown)}"
        )


check_model_names()


def used_models():
    return sorted(set(config["generators"]) | set(config["scorers"]))


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
    return targets

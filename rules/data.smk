# ContextConflict's samples: one validated table per conflict type, the
# shuffled-evidence copies, and Table 1.

import pyarrow.parquet as pq

from conflictlab.contextconflict.conflict_types import CONFLICT_TYPES
from conflictlab.contextconflict.dataset import released_files

# Which subsets to read per conflict type (source released; a type not named reads all).
DATA_SUBSETS = config["data"].get("subsets") or {}

# The sample files a build_subset job reads (none when reading the hub).
# Whatever else the folder holds, or cannot be read, the job itself reports.
subset_inputs = lambda wildcards: (
    []
    if config["data"]["source"] != "released"
    else [
        str(path)
        for files in released_files(
            config["data"]["root"], wildcards.conflict_type, subsets=DATA_SUBSETS.get(wildcards.conflict_type)
        ).files.values()
        for path in files
    ]
)

# Whether this type's last build recorded rejections.
had_rejections = lambda conflict_type: (
    (rejected := Path(f"results/data/{conflict_type}.rejected.parquet")).is_file()
    and pq.read_metadata(rejected).num_rows > 0
)

# The data settings build_subset reads for the configured source. ``on_error``
# is left out: on clean data both modes give the same bytes, so switching it
# must not rerun the DAG. It counts (as ``fail_on_rejections``) only when it
# would change the outcome: ``fail`` while this type's last build recorded
# rejections, which reruns the job so that it fails with the named error
# instead of keeping the rejections.
data_params = lambda wildcards: {
    **subset(
        config["data"],
        "source",
        *(("root",) if config["data"]["source"] == "released" else ("hf_dataset", "hf_revision")),
        "max_per_subset",
        "seed",
    ),
    **(
        {"subsets": DATA_SUBSETS[wildcards.conflict_type]}
        if DATA_SUBSETS.get(wildcards.conflict_type) is not None
        else {}
    ),
    "fail_on_rejections": config["data"]["on_error"] == "fail" and had_rejections(wildcards.conflict_type),
}

TABLE1_OUTPUTS = {
    "table1_md": "results/tables/table1.md",
    "table1_csv": "results/tables/table1.csv",
    "table5_md": "results/tables/table5.md",
    "table5_csv": "results/tables/table5.csv",
}


rule build_subset:
    """Every subset of one conflict type, validated, into one Parquet table."""
    input:
        subset_inputs,
    output:
        samples="results/data/{conflict_type}.parquet",
        rejected="results/data/{conflict_type}.rejected.parquet",
    log:
        "results/logs/build_subset/{conflict_type}.log",
    benchmark:
        "results/benchmarks/build_subset/{conflict_type}.tsv"
    wildcard_constraints:
        conflict_type="|".join(CONFLICT_TYPES),
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/datasets.yaml"
    resources:
        mem_mb=2000,
    params:
        data=data_params,
        code=code_hash("build_subset.py"),
    script:
        "../workflow/scripts/build_subset.py"


rule shuffle_evidence:
    """A summarization type with every sample's evidence in a seeded random order."""
    input:
        samples="results/data/{conflict_type}.parquet",
    output:
        samples="results/data/{conflict_type}-shuffled.parquet",
    log:
        "results/logs/shuffle_evidence/{conflict_type}.log",
    benchmark:
        "results/benchmarks/shuffle_evidence/{conflict_type}.tsv"
    wildcard_constraints:
        conflict_type="|".join(CONFLICT_TYPES),
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/datasets.yaml"
    params:
        seed=config["data"]["seed"],
        code=code_hash("shuffle_evidence.py"),
    script:
        "../workflow/scripts/shuffle_evidence.py"


rule table1:
    """Table 1: dataset statistics per conflict type, beside the full release's; Table 5: the base datasets."""
    input:
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    output:
        **flagged(TABLE1_OUTPUTS, {"table1_csv": "table1", "table5_csv": "table5"}, "Data"),
    log:
        "results/logs/table1.log",
    benchmark:
        "results/benchmarks/table1.tsv"
    conda:
        "../envs/datasets.yaml"
    params:
        code=code_hash("table1.py"),
    script:
        "../workflow/scripts/table1.py"

rule build_subset:
    """Every subset of one conflict type, validated, into one Parquet table."""
    input:
        subset_inputs,
    output:
        samples="results/data/{conflict_type}.parquet",
        rejected="results/data/{conflict_type}.rejected.parquet",
    wildcard_constraints:
        conflict_type="|".join(CONFLICT_TYPES),
    params:
        data=data_params,
        code=code_hash("build_subset.py"),
    log:
        "results/logs/build_subset/{conflict_type}.log",
    benchmark:
        "results/benchmarks/build_subset/{conflict_type}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    resources:
        mem_mb=2000,
    conda:
        "../envs/datasets.yaml"
    script:
        "../workflow/scripts/build_subset.py"


rule shuffle_evidence:
    """A summarization type with every sample's evidence in a seeded random order."""
    input:
        samples="results/data/{conflict_type}.parquet",
    output:
        samples="results/data/{conflict_type}-shuffled.parquet",
    wildcard_constraints:
        conflict_type="|".join(CONFLICT_TYPES),
    params:
        seed=config["data"]["seed"],
        code=code_hash("shuffle_evidence.py"),
    log:
        "results/logs/shuffle_evidence/{conflict_type}.log",
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/datasets.yaml"
    script:
        "../workflow/scripts/shuffle_evidence.py"


rule table1:
    """Table 1: dataset statistics per conflict type, beside the full release's."""
    input:
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    output:
        **flagged(table1_outputs(), {"table1_csv": "table1"}, "Data"),
    params:
        code=code_hash("table1.py"),
    log:
        "results/logs/table1.log",
    conda:
        "../envs/datasets.yaml"
    script:
        "../workflow/scripts/table1.py"

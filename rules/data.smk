rule build_subset:
    """Every subset of one conflict type, validated, into one Parquet table."""
    input:
        subset_inputs,
    output:
        samples="results/data/{conflict_type}.parquet",
        rejected="results/data/{conflict_type}.rejected.parquet",
    params:
        data=config["data"],
        code=library_hash("dataset", "io"),
    log:
        "results/logs/build_subset/{conflict_type}.log",
    benchmark:
        "results/benchmarks/build_subset/{conflict_type}.tsv"
    resources:
        mem_mb=2000,
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/build_subset.py"

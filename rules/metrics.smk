rule accuracy:
    """Per-sample correctness and its aggregates for one generator."""
    input:
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in REASONING_TYPES],
        responses=expand(
            "results/responses/{{model}}/{conflict_type}.parquet", conflict_type=REASONING_TYPES
        ),
    output:
        per_sample="results/metrics/{model}/accuracy.parquet",
        summary="results/metrics/{model}/accuracy_summary.parquet",
    params:
        settings=config["accuracy"],
        code=library_hash("accuracy", "stats", "io"),
    log:
        "results/logs/accuracy/{model}.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/accuracy.py"


rule accuracy_table:
    """The accuracy table over every generator."""
    input:
        expand("results/metrics/{model}/accuracy_summary.parquet", model=config["generators"]),
    output:
        md="results/tables/accuracy.md",
        csv=reported("results/tables/accuracy.csv", "accuracy", "Generation and accuracy"),
    log:
        "results/logs/accuracy_table.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/accuracy_table.py"

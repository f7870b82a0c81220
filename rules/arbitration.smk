rule arbitration_generate:
    """The synthetic arbitration instances: main settings and sensitivity sweeps."""
    output:
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
    params:
        settings=config["arbitration"],
        code=library_hash("arbitration", "io"),
    log:
        "results/logs/arbitration_generate.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/arbitration_generate.py"


rule arbitration_evaluate:
    """A/B next-token logits of one model on every instance."""
    input:
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
        model="resources/models/{model}",
    output:
        "results/arbitration/{model}/predictions.parquet",
    params:
        settings=config["arbitration"],
        code=library_hash("arbitration", "models", "packed_linear"),
    log:
        "results/logs/arbitration_evaluate/{model}.log",
    benchmark:
        "results/benchmarks/arbitration_evaluate/{model}.tsv"
    threads: torch_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/arbitration_evaluate.py"


rule arbitration_report:
    """Figure 4 A-H, the accuracy table and the sensitivity table."""
    input:
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
        predictions=expand("results/arbitration/{model}/predictions.parquet", model=config["arbitration"]["models"]),
    output:
        [
            reported(p, ARBITRATION_CAPTIONS[p], "Evidence arbitration") if p in ARBITRATION_CAPTIONS else p
            for p in ARBITRATION_REPORT
        ],
    params:
        code=library_hash("arbitration", "figures", "tables"),
    log:
        "results/logs/arbitration_report.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/arbitration_report.py"

# Evidence arbitration: synthetic text vs numbers vs tool forecasts (Figure 4 A-H).

ARBITRATION_INSTANCE_KEYS = (
    "n_per_setting",
    "seeds",
    "domain",
    "answer_choices",
    "trajectory",
    "tool_min_distance",
    "sensitivity",
)


ARBITRATION_OUTPUTS = {
    "fig4_png": "results/figures/arbitration_fig4.png",
    "fig4_pdf": "results/figures/arbitration_fig4.pdf",
    "accuracy_md": "results/tables/arbitration_accuracy.md",
    "accuracy_csv": "results/tables/arbitration_accuracy.csv",
    "orders_md": "results/tables/arbitration_orders.md",
    "orders_csv": "results/tables/arbitration_orders.csv",
    "sensitivity_md": "results/tables/arbitration_sensitivity.md",
    "sensitivity_csv": "results/tables/arbitration_sensitivity.csv",
    "figA1_png": "results/figures/arbitration_figA1.png",
    "figA1_pdf": "results/figures/arbitration_figA1.pdf",
}


rule arbitration_generate:
    """The synthetic arbitration instances: main settings and sensitivity sweeps."""
    output:
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
    log:
        "results/logs/arbitration_generate.log",
    benchmark:
        "results/benchmarks/arbitration_generate.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        settings=subset(config["arbitration"], *ARBITRATION_INSTANCE_KEYS),
        code=code_hash("arbitration_generate.py"),
    script:
        "../workflow/scripts/arbitration_generate.py"


rule arbitration_evaluate:
    """A/B next-token logits of one model on every instance."""
    input:
        unpack(lambda wildcards: model_inputs(wildcards.model)),
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
    output:
        predictions="results/arbitration/{model}/predictions.parquet",
        usage="results/usage/arbitration_evaluate/{model}.parquet",
    log:
        "results/logs/arbitration_evaluate/{model}.log",
    benchmark:
        "results/benchmarks/arbitration_evaluate/{model}.tsv"
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=gpu_for_model,
        mem_mb=16000,
    params:
        settings=subset(config["arbitration"], "batch_size", "dtype"),
        hosted=lambda wildcards: hosted_spec(wildcards.model),
        code=code_hash("arbitration_evaluate.py"),
    script:
        "../workflow/scripts/arbitration_evaluate.py"


rule arbitration_report:
    """Figure 4 A-H, the accuracy table, the order-paired table (one unit per instance), the sensitivity table and
    Figure A1 (example trajectories)."""
    input:
        main="results/arbitration/instances.parquet",
        sensitivity="results/arbitration/sensitivity_instances.parquet",
        predictions=expand("results/arbitration/{model}/predictions.parquet", model=config["arbitration"]["models"]),
    output:
        **flagged(
            ARBITRATION_OUTPUTS,
            {
                "fig4_png": "arbitration_fig4",
                "accuracy_csv": "arbitration_accuracy",
                "orders_csv": "arbitration_orders",
                "sensitivity_csv": "arbitration_sensitivity",
                "figA1_png": "arbitration_figA1",
            },
            "Evidence arbitration",
        ),
    log:
        "results/logs/arbitration_report.log",
    benchmark:
        "results/benchmarks/arbitration_report.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        horizon=config["arbitration"]["trajectory"]["horizon"],
        code=code_hash("arbitration_report.py"),
    script:
        "../workflow/scripts/arbitration_report.py"


register_results(
    "arbitration",
    outputs=flatten(ARBITRATION_OUTPUTS) if config["arbitration"]["models"] else [],
    tables=(
        {
            Path(ARBITRATION_OUTPUTS[k]).stem: ARBITRATION_OUTPUTS[k]
            for k in ("orders_csv", "accuracy_csv", "sensitivity_csv")
        }
        if config["arbitration"]["models"]
        else {}
    ),
    usage=[f"results/usage/arbitration_evaluate/{m}.parquet" for m in config["arbitration"]["models"]],
)

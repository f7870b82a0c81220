rule conflictbank_data:
    """ConflictBank QA records (local JSON Lines or the hub) -> one table."""
    input:
        conflictbank_inputs,
    output:
        records="results/conflictbank/data.parquet",
        rejected="results/conflictbank/data.rejected.parquet",
    params:
        data=conflictbank_data_params(),
        code=code_hash("conflictbank_data.py"),
    log:
        "results/logs/conflictbank_data.log",
    conda:
        "../envs/datasets.yaml"
    script:
        "../workflow/scripts/conflictbank_data.py"


rule conflictbank_evaluate:
    """One model's A-D probabilities on every record under every setting."""
    input:
        records="results/conflictbank/data.parquet",
        model="resources/models/{model}",
    output:
        predictions="results/conflictbank/{model}/predictions.parquet",
    params:
        name=lambda wildcards: wildcards.model,
        options={**subset(config["conflictbank"], "batch_size", "dtype"), "settings": conflictbank_settings()},
        code=code_hash("conflictbank_evaluate.py"),
    log:
        "results/logs/conflictbank_evaluate/{model}.log",
    benchmark:
        "results/benchmarks/conflictbank_evaluate/{model}.tsv"
    threads: torch_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/transformers.yaml"
    script:
        "../workflow/scripts/conflictbank_evaluate.py"


rule conflictbank_train:
    """Continued pre-training on default : conflicting evidence text at one ratio."""
    input:
        records="results/conflictbank/data.parquet",
        model="resources/models/{model}",
    output:
        folder=directory("results/conflictbank/trained/{model}/ratio-{ratio}"),
    params:
        options=subset(
            config["conflictbank"]["embedded"],
            "max_steps", "learning_rate", "batch_size", "gradient_accumulation", "max_length", "save_steps", "seed",
        ),
        checkpoints="results/conflictbank/checkpoints/{model}/ratio-{ratio}",
        code=code_hash("conflictbank_train.py"),
    log:
        "results/logs/conflictbank_train/{model}/ratio-{ratio}.log",
    benchmark:
        "results/benchmarks/conflictbank_train/{model}/ratio-{ratio}.tsv"
    threads: torch_threads
    resources:
        gpu=config["conflictbank"]["embedded"]["gpu"],
        mem_mb=16000,
    conda:
        "../envs/transformers.yaml"
    script:
        "../workflow/scripts/conflictbank_train.py"


rule conflictbank_embedded_evaluate:
    """A trained model's read-out in the embedded experiment's settings."""
    input:
        records="results/conflictbank/data.parquet",
        model="results/conflictbank/trained/{model}/ratio-{ratio}",
    output:
        predictions="results/conflictbank/embedded/{model}/ratio-{ratio}.parquet",
    params:
        name=lambda wildcards: wildcards.model,
        options=conflictbank_embedded_options(),
        code=code_hash("conflictbank_evaluate.py"),
    log:
        "results/logs/conflictbank_embedded_evaluate/{model}/ratio-{ratio}.log",
    threads: torch_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/transformers.yaml"
    script:
        "../workflow/scripts/conflictbank_evaluate.py"


rule conflictbank_report:
    """The MR/OAR table, the contrast figure and the embedded-knowledge panel."""
    input:
        predictions=expand("results/conflictbank/{model}/predictions.parquet", model=config["conflictbank"]["models"]),
        embedded=[path for _, _, path in embedded_runs()],
    output:
        **flagged(
            conflictbank_outputs(),
            {"table_csv": "conflictbank_table", "figure_png": "conflictbank_figure", "embedded_png": "conflictbank_embedded"},
            "ConflictBank",
        ),
    params:
        ratios=[ratio.replace("-", ":") for _, ratio, _ in embedded_runs()],
        embedded_models=config["conflictbank"]["embedded"]["models"],
        options={
            **subset(config["conflictbank"], "bootstrap_resamples", "seed"),
            "embedded_settings": config["conflictbank"]["embedded"]["settings"],
        },
        code=code_hash("conflictbank_report.py"),
    log:
        "results/logs/conflictbank_report.log",
    conda:
        "../envs/scipy.yaml"
    script:
        "../workflow/scripts/conflictbank_report.py"

# ConflictBank: MC read-out under its prompt settings (MR/OAR/CAR) and the
# embedded-knowledge experiment (continued pre-training at default:conflicting
# ratios, spelled ratio-2-3 in file names by conflictlab.conflictbank.ratio).

from conflictlab.conflictbank.prompts import SETTINGS as CONFLICTBANK_SETTINGS
from conflictlab.conflictbank.ratio import MixtureRatio

CONFLICTBANK = config["conflictbank"]

CONFLICTBANK_DATA_PARAMS = subset(
    CONFLICTBANK,
    "source",
    *(("path",) if CONFLICTBANK["source"] == "local" else ("hf_dataset", "hf_revision")),
    *("max_per_relation", "seed", "on_error"),
)

# The local file the records come from (none when reading the hub).
CONFLICTBANK_INPUTS = [CONFLICTBANK["path"]] if CONFLICTBANK["source"] == "local" else []

# The configured prompt settings (null: all, the authors' twelve and the reversed orders).
CONFLICTBANK_PROMPT_SETTINGS = CONFLICTBANK["settings"] or [setting.name for setting in CONFLICTBANK_SETTINGS]

# (model, ratio, predictions path) of every embedded-knowledge run.
EMBEDDED_RUNS = [
    (model, ratio, f"results/conflictbank/embedded/{model}/ratio-{ratio.format()}.parquet")
    for model in CONFLICTBANK["embedded"]["models"]
    for ratio in map(MixtureRatio.from_label, CONFLICTBANK["embedded"]["ratios"])
]

CONFLICTBANK_OUTPUTS = {
    "table_md": "results/tables/conflictbank_mr.md",
    "table_csv": "results/tables/conflictbank_mr.csv",
    "figure_png": "results/figures/conflictbank_mr.png",
    "figure_pdf": "results/figures/conflictbank_mr.pdf",
    "embedded_md": "results/tables/conflictbank_embedded.md",
    "embedded_csv": "results/tables/conflictbank_embedded.csv",
    "embedded_png": "results/figures/conflictbank_embedded.png",
    "embedded_pdf": "results/figures/conflictbank_embedded.pdf",
    **{
        f"{name}_{ext}": f"results/figures/conflictbank_{name}.{ext}"
        for name in ("scale", "fig6", "fig7", "fig8")
        for ext in ("png", "pdf")
    },
}

# The local models of conflictbank.models, whose folders give their sizes (the scale figure).
CONFLICTBANK_SIZED = [m for m in config["conflictbank"]["models"] if not is_hosted(m)]


rule conflictbank_data:
    """ConflictBank QA records (local JSON Lines or the hub) -> one table."""
    input:
        CONFLICTBANK_INPUTS,
    output:
        records="results/conflictbank/data.parquet",
        rejected="results/conflictbank/data.rejected.parquet",
    log:
        "results/logs/conflictbank_data.log",
    benchmark:
        "results/benchmarks/conflictbank_data.tsv"
    conda:
        "../envs/datasets.yaml"
    params:
        data=CONFLICTBANK_DATA_PARAMS,
        code=code_hash("conflictbank_data.py"),
    script:
        "../workflow/scripts/conflictbank_data.py"


rule conflictbank_evaluate:
    """One model's A-D probabilities on every record under every setting."""
    input:
        unpack(lambda wildcards: model_inputs(wildcards.model)),
        records="results/conflictbank/data.parquet",
    output:
        predictions="results/conflictbank/{model}/predictions.parquet",
        usage="results/usage/conflictbank_evaluate/{model}.parquet",
    log:
        "results/logs/conflictbank_evaluate/{model}.log",
    benchmark:
        "results/benchmarks/conflictbank_evaluate/{model}.tsv"
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=gpu_for_model,
        mem_mb=16000,
    params:
        name=lambda wildcards: wildcards.model,
        options={**subset(CONFLICTBANK, "batch_size", "dtype"), "settings": CONFLICTBANK_PROMPT_SETTINGS},
        hosted=lambda wildcards: hosted_spec(wildcards.model),
        code=code_hash("conflictbank_evaluate.py"),
    script:
        "../workflow/scripts/conflictbank_evaluate.py"


rule conflictbank_train:
    """Continued pre-training on default : conflicting evidence text at one ratio."""
    input:
        records="results/conflictbank/data.parquet",
        model="resources/models/{model}",
    output:
        folder=directory("results/conflictbank/trained/{model}/ratio-{ratio}"),
    log:
        "results/logs/conflictbank_train/{model}/ratio-{ratio}.log",
        # Trainer checkpoints every save_steps, from which a killed job resumes:
        # a log and not an output, since Snakemake deletes a failed job's
        # outputs; a non-empty log folder survives until the job succeeds,
        # which removes it (Snakemake then leaves an empty file in its place).
        # Only checkpoints marked complete are resumed; the job deletes the
        # others, so a kill mid-save cannot leave a job that always fails.
        checkpoints="results/conflictbank/checkpoints/{model}/ratio-{ratio}",
    benchmark:
        "results/benchmarks/conflictbank_train/{model}/ratio-{ratio}.tsv"
    conda:
        "../envs/transformers.yaml"
    # the training processes (distributed.processes > 1) share these threads
    threads: torch_threads
    resources:
        # each training process drives one GPU
        gpu=config["conflictbank"]["embedded"]["gpu"] * config["conflictbank"]["embedded"]["distributed"]["processes"],
        mem_mb=16000,
        # How the training runs, not what it computes (every step trains on the
        # same blocks at any count; weights differ by rounding): resources, as
        # gpu is, so that moving to other GPUs reruns nothing.
        training_processes=config["conflictbank"]["embedded"]["distributed"]["processes"],
        training_strategy=config["conflictbank"]["embedded"]["distributed"]["strategy"],
    params:
        options=subset(
            config["conflictbank"]["embedded"],
            "max_steps",
            "learning_rate",
            "batch_size",
            "gradient_accumulation",
            "max_length",
            "save_steps",
            "seed",
        ),
        code=code_hash("conflictbank_train.py"),
    script:
        "../workflow/scripts/conflictbank_train.py"


rule conflictbank_embedded_evaluate:
    """A trained model's read-out in the embedded experiment's settings."""
    input:
        records="results/conflictbank/data.parquet",
        model="results/conflictbank/trained/{model}/ratio-{ratio}",
    output:
        predictions="results/conflictbank/embedded/{model}/ratio-{ratio}.parquet",
    log:
        "results/logs/conflictbank_embedded_evaluate/{model}/ratio-{ratio}.log",
    benchmark:
        "results/benchmarks/conflictbank_embedded_evaluate/{model}/ratio-{ratio}.tsv"
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, GPU_FOR_GENERATION),
        mem_mb=16000,
    params:
        name=lambda wildcards: wildcards.model,
        options={**subset(CONFLICTBANK, "batch_size", "dtype"), "settings": CONFLICTBANK["embedded"]["settings"]},
        code=code_hash("conflictbank_evaluate.py"),
    script:
        "../workflow/scripts/conflictbank_evaluate.py"


rule conflictbank_report:
    """The MR/OAR table, the contrast figure, MR against model size, the
    embedded-knowledge panel and Figures 6-8."""
    input:
        predictions=expand("results/conflictbank/{model}/predictions.parquet", model=config["conflictbank"]["models"]),
        embedded=[path for _, _, path in EMBEDDED_RUNS],
        models=[model_dir(m) for m in CONFLICTBANK_SIZED],
    output:
        **flagged(
            CONFLICTBANK_OUTPUTS,
            {
                "table_csv": "conflictbank_table",
                "figure_png": "conflictbank_figure",
                "embedded_png": "conflictbank_embedded",
                "scale_png": "conflictbank_scale",
                "fig6_png": "conflictbank_fig6",
                "fig7_png": "conflictbank_fig7",
                "fig8_png": "conflictbank_fig8",
            },
            "ConflictBank",
        ),
    log:
        "results/logs/conflictbank_report.log",
    benchmark:
        "results/benchmarks/conflictbank_report.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        ratios=[ratio.label() for _, ratio, _ in EMBEDDED_RUNS],
        sized_models=CONFLICTBANK_SIZED,
        embedded_models=config["conflictbank"]["embedded"]["models"],
        options={
            **subset(config["conflictbank"], "bootstrap_resamples", "seed"),
            "embedded_settings": config["conflictbank"]["embedded"]["settings"],
        },
        code=code_hash("conflictbank_report.py"),
    script:
        "../workflow/scripts/conflictbank_report.py"


register_results(
    "conflictbank",
    outputs=flatten(CONFLICTBANK_OUTPUTS) if config["conflictbank"]["models"] else [],
    tables=(
        {Path(CONFLICTBANK_OUTPUTS[k]).stem: CONFLICTBANK_OUTPUTS[k] for k in ("table_csv", "embedded_csv")}
        if config["conflictbank"]["models"]
        else {}
    ),
    usage=[f"results/usage/conflictbank_evaluate/{m}.parquet" for m in config["conflictbank"]["models"]],
)

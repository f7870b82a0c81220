# MemoTrap (conflictlab.memotrap): the released CSV files -> accuracy by the classes'
# log-likelihood, per file, under greedy reading and each contrastive method (CAD,
# AdaCAD) of methods.list, with the instruction as the context.

from conflictlab.lm.methods import as_method
from conflictlab.memotrap.scoring import scoring_methods

MEMOTRAP = config["memotrap"]

# The methods MemoTrap reads besides greedy reading: memotrap.methods, else the contrastive ones of methods.list
# (a context-faithful prompt rewrites a question, which MemoTrap's prompts lack; docs/benchmarks/memotrap.md).
# Parsed here, so that a bad name or a prompting method stops the run before any job.
MEMOTRAP_METHODS = scoring_methods(
    MEMOTRAP["methods"]
    if MEMOTRAP["methods"] is not None
    else [m for m in config["methods"]["list"] if as_method(m).contrastive]
)

MEMOTRAP_OUTPUTS = {
    "accuracy_md": "results/tables/memotrap_accuracy.md",
    "accuracy_csv": "results/tables/memotrap_accuracy.csv",
}


rule memotrap_data:
    """The released MemoTrap CSV files -> one table, each prompt split into its instruction and the rest."""
    input:
        [f"{MEMOTRAP['root']}/{file}.csv" for file in MEMOTRAP["files"]],
    output:
        prompts="results/memotrap/data.parquet",
    log:
        "results/logs/memotrap_data.log",
    benchmark:
        "results/benchmarks/memotrap_data.tsv"
    conda:
        "../envs/datasets.yaml"
    params:
        files=MEMOTRAP["files"],
        code=code_hash("memotrap_data.py"),
    script:
        "../workflow/scripts/memotrap_data.py"


rule memotrap_score:
    """One model's summed log-likelihood of every class of every prompt, under greedy reading and each method."""
    input:
        prompts="results/memotrap/data.parquet",
        model="resources/models/{model}",
    output:
        scores="results/memotrap/{model}/scores.parquet",
    log:
        "results/logs/memotrap_score/{model}.log",
    benchmark:
        "results/benchmarks/memotrap_score/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, MEMOTRAP["gpu"]),
        mem_mb=16000,
    params:
        methods=MEMOTRAP_METHODS,
        settings=subset(MEMOTRAP, "batch_size", "dtype"),
        code=code_hash("memotrap_score.py"),
    script:
        "../workflow/scripts/memotrap_score.py"


rule memotrap_report:
    """The accuracy table: per model, method and file, with intervals, n and each method paired with greedy reading."""
    input:
        scores=expand("results/memotrap/{model}/scores.parquet", model=MEMOTRAP["models"]),
    output:
        **flagged(MEMOTRAP_OUTPUTS, {"accuracy_csv": "memotrap_accuracy"}, "MemoTrap"),
    log:
        "results/logs/memotrap_report.log",
    benchmark:
        "results/benchmarks/memotrap_report.tsv"
    conda:
        # it reads the scores with their schema, which lives beside the scorer (conflictlab.memotrap.scoring)
        "../envs/transformers.yaml"
    params:
        code=code_hash("memotrap_report.py"),
    script:
        "../workflow/scripts/memotrap_report.py"


register_results(
    "memotrap",
    outputs=flatten(MEMOTRAP_OUTPUTS) if MEMOTRAP["models"] else [],
    tables={"memotrap_accuracy": MEMOTRAP_OUTPUTS["accuracy_csv"]} if MEMOTRAP["models"] else {},
)

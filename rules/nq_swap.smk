# NQ-Swap (Longpre et al. 2021's entity substitution; the release pminervini/NQ-Swap):
# closed-book, original- and substituted-context answers, and every resolution
# method (CAD, AdaCAD, context-faithful prompts, steering) beside greedy decoding.

from conflictlab.nq_swap.checks import check_section

NQ_SWAP = config["nq_swap"]

# Methods spelled right, refused before any job (a hosted model in nq_swap.models: conflictlab.run_config).
check_section(NQ_SWAP)

NQ_SWAP_DATA_PARAMS = subset(
    NQ_SWAP,
    "source",
    *(("path",) if NQ_SWAP["source"] == "local" else ("hf_dataset", "hf_revision", "split")),
    *("max_items", "seed", "on_error"),
)

NQ_SWAP_OUTPUTS = {
    "md": "results/tables/nq_swap.md",
    "csv": "results/tables/nq_swap.csv",
    "png": "results/figures/nq_swap.png",
    "pdf": "results/figures/nq_swap.pdf",
}


rule nq_swap_data:
    """NQ-Swap records (the release's Parquet file, JSON Lines in its fields, or the hub) -> one table."""
    input:
        [NQ_SWAP["path"]] if NQ_SWAP["source"] == "local" else [],
    output:
        data="results/nq_swap/data.parquet",
        rejected="results/nq_swap/data.rejected.parquet",
    log:
        "results/logs/nq_swap_data.log",
    benchmark:
        "results/benchmarks/nq_swap_data.tsv"
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/datasets.yaml"
    params:
        data=NQ_SWAP_DATA_PARAMS,
        code=code_hash("nq_swap_data.py"),
    script:
        "../workflow/scripts/nq_swap_data.py"


rule nq_swap_respond:
    """One model's answers to every item: closed-book, original, substituted (greedy), each method, steering."""
    input:
        data="results/nq_swap/data.parquet",
        model="resources/models/{model}",
    output:
        responses="results/nq_swap/{model}/responses.parquet",
    log:
        "results/logs/nq_swap_respond/{model}.log",
    benchmark:
        "results/benchmarks/nq_swap_respond/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, NQ_SWAP["gpu"]),
        mem_mb=16000,
    params:
        methods=NQ_SWAP["methods"],
        original_methods=NQ_SWAP["original_methods"],
        steering={**NQ_SWAP["steering"], "seed": NQ_SWAP["seed"]} if NQ_SWAP["steering"] else None,
        settings=subset(NQ_SWAP, "max_new_tokens", "batch_size", "dtype", "max_model_len", "seed"),
        code=code_hash("nq_swap_respond.py"),
    script:
        "../workflow/scripts/nq_swap_respond.py"


rule nq_swap_report:
    """The NQ-Swap table (EM sub, EM org, MR per model and run, paired with greedy) and its figure."""
    input:
        data="results/nq_swap/data.parquet",
        responses=expand("results/nq_swap/{model}/responses.parquet", model=NQ_SWAP["models"]),
    output:
        **flagged(NQ_SWAP_OUTPUTS, {"csv": "nq_swap", "png": "nq_swap"}, "NQ-Swap"),
        scores="results/nq_swap/scores.parquet",
    log:
        "results/logs/nq_swap_report.log",
    benchmark:
        "results/benchmarks/nq_swap_report.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        methods=NQ_SWAP["methods"],
        steering=NQ_SWAP["steering"],
        min_n_mark=config["statistics"]["min_n_mark"],
        seed=NQ_SWAP["seed"],
        code=code_hash("nq_swap_report.py"),
    script:
        "../workflow/scripts/nq_swap_report.py"


register_results(
    "nq_swap",
    outputs=flatten(NQ_SWAP_OUTPUTS) if NQ_SWAP["models"] else [],
    tables={"nq_swap": NQ_SWAP_OUTPUTS["csv"]} if NQ_SWAP["models"] else {},
)

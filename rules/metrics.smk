# Accuracy on the reasoning types, per generator and over all of them.


# accuracy.free_text: judge - the judge's verdicts on the long free-text golds (rule answer_match).
answer_match_inputs = lambda wildcards: (
    {"matches": f"results/judges/answer_match/{wildcards.model}.parquet"}
    if config["accuracy"]["free_text"] == "judge"
    else {}
)

ACCURACY_OUTPUTS = {"md": "results/tables/accuracy.md", "csv": "results/tables/accuracy.csv"}


rule accuracy:
    """Per-sample correctness and its aggregates for one generator."""
    input:
        unpack(answer_match_inputs),
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in REASONING_TYPES],
        responses=expand("results/responses/{{model}}/{conflict_type}.parquet", conflict_type=REASONING_TYPES),
    output:
        per_sample="results/metrics/{model}/accuracy.parquet",
        summary="results/metrics/{model}/accuracy_summary.parquet",
    log:
        "results/logs/accuracy/{model}.log",
    benchmark:
        "results/benchmarks/accuracy/{model}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        code=code_hash("accuracy.py"),
    script:
        "../workflow/scripts/accuracy.py"


rule accuracy_table:
    """The accuracy table over every generator, with their judged Faithfulness."""
    input:
        summaries=expand("results/metrics/{model}/accuracy_summary.parquet", model=config["generators"]),
        faithfulness="results/judges/faithfulness.parquet",
    output:
        **flagged(ACCURACY_OUTPUTS, {"csv": "accuracy"}, "Generation and accuracy"),
    log:
        "results/logs/accuracy_table.log",
    benchmark:
        "results/benchmarks/accuracy_table.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        judge_label=judge_label(),
        free_text=config["accuracy"]["free_text"],
        bootstrap=config["judges"]["bootstrap_resamples"],
        seed=config["judges"]["seed"],
        code=code_hash("accuracy_table.py"),
    script:
        "../workflow/scripts/accuracy_table.py"

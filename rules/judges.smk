# LLM judges: RAGAS Faithfulness, the judge's evidence ratings (Tables 2 and 7),
# judged answer match, and the judge's agreement on the gold set. Every judge
# reply is cached under results/judges/cache (conflictlab.judges.cache).


rule judge_faithfulness:
    """RAGAS Faithfulness of the generators' and the steered reruns' responses (one judge load)."""
    input:
        unpack(judge_inputs),
        **response_inputs(faithfulness_models(), config["conflict_types"]),
    output:
        faithfulness="results/judges/faithfulness.parquet",
    params:
        **judge_params("faithfulness"),
        models=[m for m in faithfulness_models() for _ in config["conflict_types"]],
        max_per_type=config["judges"]["faithfulness_max_per_type"],
        max_statement_tokens=config["judges"]["max_statement_tokens"],
        code=code_hash("judge_faithfulness.py"),
    log:
        "results/logs/judges/faithfulness.log",
    benchmark:
        "results/benchmarks/judges/faithfulness.tsv"
    threads: torch_threads
    resources:
        gpu=config["judges"]["gpu"],
    conda:
        "../envs/judges.yaml"
    script:
        "../workflow/scripts/judge_faithfulness.py"


rule judge_ratings:
    """The judge's 1-5 contribution rating of every evidence piece (generators, summarization types)."""
    input:
        unpack(judge_inputs),
        **response_inputs(config["generators"], SUMMARIZATION_TYPES),
    output:
        ratings="results/judges/ratings.parquet",
    params:
        **judge_params("ratings"),
        models=[m for m in config["generators"] for _ in SUMMARIZATION_TYPES],
        code=code_hash("judge_ratings.py"),
    log:
        "results/logs/judges/ratings.log",
    benchmark:
        "results/benchmarks/judges/ratings.tsv"
    threads: torch_threads
    resources:
        gpu=config["judges"]["gpu"],
    conda:
        "../envs/judges.yaml"
    script:
        "../workflow/scripts/judge_ratings.py"


rule judge_gold:
    """The judge's labels on the team-written gold set."""
    input:
        unpack(judge_inputs),
        gold=config["judges"]["gold"],
    output:
        judged="results/judges/gold.parquet",
    params:
        **judge_params("gold"),
        code=code_hash("judge_gold.py"),
    log:
        "results/logs/judges/gold.log",
    benchmark:
        "results/benchmarks/judges/gold.tsv"
    threads: torch_threads
    resources:
        gpu=config["judges"]["gpu"],
    conda:
        "../envs/judges.yaml"
    script:
        "../workflow/scripts/judge_gold.py"


rule answer_match:
    """accuracy.free_text: judge - the judge decides one generator's long free-text golds."""
    input:
        unpack(judge_inputs),
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in REASONING_TYPES],
        responses=expand("results/responses/{{model}}/{conflict_type}.parquet", conflict_type=REASONING_TYPES),
    output:
        matches="results/judges/answer_match/{model}.parquet",
    params:
        **judge_params("answer_match"),
        code=code_hash("answer_match.py"),
    log:
        "results/logs/judges/answer_match/{model}.log",
    threads: torch_threads
    resources:
        gpu=config["judges"]["gpu"],
    conda:
        "../envs/judges.yaml"
    script:
        "../workflow/scripts/answer_match.py"


rule judge_tables:
    """Faithfulness per model and type, Table 2, Table 7 and the gold-set agreement."""
    input:
        unpack(judge_table_inputs),
    output:
        **flagged(
            judge_table_outputs(),
            {"faithfulness_csv": "faithfulness", "table2_csv": "table2", "table7_csv": "table7", "gold_csv": "judge_gold"},
            "LLM judges",
        ),
    params:
        judge=judge_label(),
        scorer=default_scorer(),
        bootstrap=config["judges"]["bootstrap_resamples"],
        seed=config["judges"]["seed"],
        code=code_hash("judge_tables.py"),
    log:
        "results/logs/judges/tables.log",
    conda:
        "../envs/scipy.yaml"
    script:
        "../workflow/scripts/judge_tables.py"

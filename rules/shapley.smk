# Shapley values of the evidence pieces (coalition values under a scorer),
# Balance, Table 3 (causal intervention), Table 6 and the shuffle analysis.


BALANCE_OUTPUTS = {
    "balance_md": "results/tables/balance.md",
    "balance_csv": "results/tables/balance.csv",
    "table6_md": "results/tables/table6.md",
    "table6_csv": "results/tables/table6.csv",
    "agreement_md": "results/tables/table6_agreement.md",
    "agreement_csv": "results/tables/table6_agreement.csv",
    "positions": "results/tables/position_shares.csv",
    **{
        f"{kind}_{ext}": [f"results/figures/position_{kind}_{m}.{ext}" for m in config["generators"]]
        for kind in ("bars", "pies")
        for ext in ("png", "pdf")
    },
    "pies_generators_png": "results/figures/position_pies_generators.png",
    "pies_generators_pdf": "results/figures/position_pies_generators.pdf",
}

TABLE3_OUTPUTS = {"table3_md": "results/tables/table3.md", "table3_csv": "results/tables/table3.csv"}

# One generator's shuffle tables (the paper's Tables 9 and 10 are the
# presented-position table for its two generators); model may be "{model}".
shuffle_outputs = lambda model: {
    "presented_md": f"results/tables/shuffled_positions_{model}.md",
    "presented_csv": f"results/tables/shuffled_positions_{model}.csv",
    "original_md": f"results/tables/shuffled_original_pieces_{model}.md",
    "original_csv": f"results/tables/shuffled_original_pieces_{model}.csv",
}


rule shapley_values:
    """v(S) of every evidence subset of every summarization response of one
    generator, under one scorer loaded once."""
    input:
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in SUMMARIZATION_TYPES],
        responses=expand("results/responses/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        scorer="resources/models/{scorer}",
    output:
        values=expand("results/shapley/{{scorer}}/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        skipped=expand(
            "results/shapley/{{scorer}}/{{model}}/{conflict_type}.skipped.parquet", conflict_type=SUMMARIZATION_TYPES
        ),
    log:
        "results/logs/shapley_values/{scorer}/{model}.log",
    benchmark:
        "results/benchmarks/shapley_values/{scorer}/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,  # steered reruns (name@variant): shapley_values_steered
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.scorer, config["shapley"]["gpu"]),
        mem_mb=16000,
    params:
        settings=subset(config["shapley"], "renumber", "exact_max_n", "n_permutations", "seed", "dtype", "token_budget"),
        code=code_hash("shapley_values.py"),
    script:
        "../workflow/scripts/shapley_values.py"


use rule shapley_values as shapley_values_shuffled with:
    # The shuffled-evidence responses of the shuffle analysis' types (shapley.shuffle_types).
    input:
        samples=expand("results/data/{conflict_type}-shuffled.parquet", conflict_type=SHUFFLE_TYPES),
        responses=expand("results/responses/{{model}}/{conflict_type}-shuffled.parquet", conflict_type=SHUFFLE_TYPES),
        scorer="resources/models/{scorer}",
    output:
        values=expand(
            "results/shapley/{{scorer}}/{{model}}/{conflict_type}-shuffled.parquet", conflict_type=SHUFFLE_TYPES
        ),
        skipped=expand(
            "results/shapley/{{scorer}}/{{model}}/{conflict_type}-shuffled.skipped.parquet",
            conflict_type=SHUFFLE_TYPES,
        ),
    log:
        "results/logs/shapley_values/{scorer}/{model}-shuffled.log",
    benchmark:
        "results/benchmarks/shapley_values/{scorer}/{model}-shuffled.tsv"


# A job that scores several reruns of one model (``reruns(model)``: their names; model may be
# the wildcard "{model}"): their samples and responses, and their values and skipped lists.
rerun_scoring_inputs = lambda reruns: {
    "samples": lambda wildcards: [samples_path(n, t) for n in reruns(wildcards.model) for t in SUMMARIZATION_TYPES],
    "responses": lambda wildcards: [
        f"results/responses/{n}/{t}.parquet" for n in reruns(wildcards.model) for t in SUMMARIZATION_TYPES
    ],
    "scorer": "resources/models/{scorer}",
}
rerun_scoring_outputs = lambda reruns: {
    "values": expand(
        "results/shapley/{{scorer}}/{rerun}/{conflict_type}.parquet",
        rerun=reruns("{model}"),
        conflict_type=SUMMARIZATION_TYPES,
    ),
    "skipped": expand(
        "results/shapley/{{scorer}}/{rerun}/{conflict_type}.skipped.parquet",
        rerun=reruns("{model}"),
        conflict_type=SUMMARIZATION_TYPES,
    ),
}


use rule shapley_values as shapley_values_steered with:
    # Every steering variant of one model under one scorer, loaded once
    # (the variants' responses all exist together: one steered_generate job).
    input:
        **rerun_scoring_inputs(steered_names),
    output:
        **rerun_scoring_outputs(steered_names),
    log:
        "results/logs/shapley_values/{scorer}/{model}@steered.log",
    benchmark:
        "results/benchmarks/shapley_values/{scorer}/{model}@steered.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,


rule attributions:
    """Shapley values, shares and Balance per sample, for one generator and scorer."""
    input:
        values=expand("results/shapley/{{scorer}}/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in SUMMARIZATION_TYPES],
    output:
        attributions="results/metrics/{model}/attributions_{scorer}.parquet",
    log:
        "results/logs/attributions/{model}/{scorer}.log",
    benchmark:
        "results/benchmarks/attributions/{model}/{scorer}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        code=code_hash("attributions.py"),
    script:
        "../workflow/scripts/attributions.py"


rule balance_report:
    """The Balance table, Table 6 (scorer robustness) and the position-share figures (per generator and all in one)."""
    input:
        attributions=expand(
            "results/metrics/{model}/attributions_{scorer}.parquet",
            model=config["generators"],
            scorer=config["scorers"],
        ),
    output:
        **flagged(
            BALANCE_OUTPUTS,
            {
                "balance_csv": "balance",
                "table6_csv": "table6",
                "agreement_csv": "table6_agreement",
                "bars_png": "position_shares",
                "pies_png": "position_shares",
                "pies_generators_png": "position_pies_generators",
            },
            "Balance",
        ),
    log:
        "results/logs/balance_report.log",
    benchmark:
        "results/benchmarks/balance_report.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        settings=subset(config["shapley"], "bootstrap_resamples", "seed"),
        default_scorer=default_scorer(),
        models=config["generators"],
        code=code_hash("balance_report.py"),
    script:
        "../workflow/scripts/balance_report.py"


rule causal_intervention:
    """Table 3 rows: the generator's own log-likelihood without its top/bottom piece."""
    input:
        attributions=lambda wildcards: f"results/metrics/{wildcards.model}/attributions_{default_scorer()}.parquet",
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        responses=expand("results/responses/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        model="resources/models/{model}",
    output:
        causal="results/metrics/{model}/causal.parquet",
    log:
        "results/logs/causal_intervention/{model}.log",
    benchmark:
        "results/benchmarks/causal_intervention/{model}.tsv"
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["shapley"]["gpu"]),
        mem_mb=16000,
    params:
        dtype=config["shapley"]["dtype"],
        code=code_hash("causal_intervention.py"),
    script:
        "../workflow/scripts/causal_intervention.py"


rule table3:
    """Table 3: mean Δ_high and Δ_low over every generator."""
    input:
        causal=expand("results/metrics/{model}/causal.parquet", model=LOCAL_GENERATORS),
    output:
        **flagged(TABLE3_OUTPUTS, {"table3_csv": "table3"}, "Balance"),
    log:
        "results/logs/table3.log",
    benchmark:
        "results/benchmarks/table3.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        settings=subset(config["shapley"], "bootstrap_resamples", "seed"),
        code=code_hash("table3.py"),
    script:
        "../workflow/scripts/table3.py"


rule shuffle_report:
    """Shapley shares of shuffled-evidence responses by presented position (the
    paper's Tables 9-10, one per generator) and by original piece (an addition)."""
    input:
        samples=expand("results/data/{conflict_type}-shuffled.parquet", conflict_type=SHUFFLE_TYPES),
        values=lambda wildcards: expand(
            "results/shapley/{scorer}/{model}/{conflict_type}-shuffled.parquet",
            scorer=default_scorer(),
            model=wildcards.model,
            conflict_type=SHUFFLE_TYPES,
        ),
    output:
        **flagged(
            shuffle_outputs("{model}"),
            {"presented_csv": "shuffled_positions", "original_csv": "shuffled_original_pieces"},
            "Balance",
        ),
    log:
        "results/logs/shuffle_report/{model}.log",
    benchmark:
        "results/benchmarks/shuffle_report/{model}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        settings=subset(config["shapley"], "seed", "bootstrap_resamples"),
        scorer=default_scorer(),
        code=code_hash("shuffle_report.py"),
    script:
        "../workflow/scripts/shuffle_report.py"

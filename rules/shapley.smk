rule shapley_values:
    """v(S) of every evidence subset of every response, under one scorer."""
    input:
        samples=lambda wildcards: samples_path(wildcards.model, wildcards.conflict_type),
        responses="results/responses/{model}/{conflict_type}.parquet",
        scorer="resources/models/{scorer}",
    output:
        values="results/shapley/{scorer}/{model}/{conflict_type}.parquet",
        skipped="results/shapley/{scorer}/{model}/{conflict_type}.skipped.parquet",
    params:
        settings=config["shapley"],
        code=library_hash("scoring", "shapley", "models", "packed_linear", "io"),
    log:
        "results/logs/shapley_values/{scorer}/{model}/{conflict_type}.log",
    benchmark:
        "results/benchmarks/shapley_values/{scorer}/{model}/{conflict_type}.tsv"
    threads: torch_threads
    resources:
        gpu=config["shapley"]["gpu"],
        mem_mb=16000,
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/shapley_values.py"


rule attributions:
    """Shapley values, shares and Balance per sample, for one generator and scorer."""
    input:
        values=expand(
            "results/shapley/{{scorer}}/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES
        ),
        samples=lambda wildcards: [samples_path(wildcards.model, t) for t in SUMMARIZATION_TYPES],
    output:
        "results/metrics/{model}/attributions_{scorer}.parquet",
    params:
        settings=config["shapley"],
        code=library_hash("balance", "shapley", "stats", "io"),
    log:
        "results/logs/attributions/{model}/{scorer}.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/attributions.py"


rule balance_report:
    """The Balance table, Table 6 (scorer robustness) and the position-share figures."""
    input:
        expand(
            "results/metrics/{model}/attributions_{scorer}.parquet",
            model=config["generators"],
            scorer=config["scorers"],
        ),
    output:
        balance=["results/tables/balance.md", reported("results/tables/balance.csv", "balance", "Balance")],
        table6=["results/tables/table6.md", reported("results/tables/table6.csv", "table6", "Balance")],
        positions="results/tables/position_shares.csv",
        figures=reported_pngs(
            expand(
                "results/figures/position_{kind}_{model}.{ext}",
                kind=["bars", "pies"],
                model=config["generators"],
                ext=["png", "pdf"],
            ),
            "position_shares",
            "Balance",
        ),
    params:
        settings=config["shapley"],
        default_scorer=default_scorer(),
        code=library_hash("balance", "figures", "tables", "stats"),
    log:
        "results/logs/balance_report.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/balance_report.py"


rule causal_intervention:
    """Table 3 rows: the generator's own log-likelihood without its top/bottom piece."""
    input:
        attributions=lambda wildcards: f"results/metrics/{wildcards.model}/attributions_{default_scorer()}.parquet",
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES),
        responses=expand(
            "results/responses/{{model}}/{conflict_type}.parquet", conflict_type=SUMMARIZATION_TYPES
        ),
        model="resources/models/{model}",
    output:
        "results/metrics/{model}/causal.parquet",
    params:
        settings=config["shapley"],
        code=library_hash("balance", "scoring", "prompts", "models", "packed_linear"),
    log:
        "results/logs/causal_intervention/{model}.log",
    threads: torch_threads
    resources:
        gpu=config["shapley"]["gpu"],
        mem_mb=16000,
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/causal_intervention.py"


rule table3:
    """Table 3: mean Δ_high and Δ_low over every generator."""
    input:
        expand("results/metrics/{model}/causal.parquet", model=config["generators"]),
    output:
        "results/tables/table3.md",
        reported("results/tables/table3.csv", "table3", "Balance"),
    params:
        settings=config["shapley"],
    log:
        "results/logs/table3.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/table3.py"


rule shuffle_report:
    """Tables 9-10: Shapley shares of shuffled-evidence responses by presented and original position."""
    input:
        samples=expand("results/data/{conflict_type}-shuffled.parquet", conflict_type=SUMMARIZATION_TYPES),
        values=lambda wildcards: expand(
            "results/shapley/{scorer}/{model}/{conflict_type}-shuffled.parquet",
            scorer=default_scorer(),
            model=wildcards.model,
            conflict_type=SUMMARIZATION_TYPES,
        ),
    output:
        table9=["results/tables/table9_{model}.md", reported("results/tables/table9_{model}.csv", "table9", "Balance")],
        table10=["results/tables/table10_{model}.md", reported("results/tables/table10_{model}.csv", "table10", "Balance")],
    params:
        settings=config["shapley"],
        code=library_hash("balance", "shapley", "tables"),
    log:
        "results/logs/shuffle_report/{model}.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/shuffle_report.py"

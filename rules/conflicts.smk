# CONFLICTS ("DRAGged into Conflicts"): conflict-type prediction (Task 1),
# cited responses under four strategies (Task 2), three judges, Tables 4-6.


# CONFLICTS answers through the `generation` backend, with its own reply length.
CONFLICTS_GENERATION_PARAMS = {
    **subset(
        config["generation"],
        *("backend", "max_model_len", "seed", "dtype", "repetition_penalty"),
        *BACKEND_KEYS[config["generation"]["backend"]],
    ),
    "max_new_tokens": config["conflicts"]["max_new_tokens"],
}

CONFLICTS_OUTPUTS = {
    "table2_md": "results/tables/conflicts_table2.md",
    "table2_csv": "results/tables/conflicts_table2.csv",
    "table7_md": "results/tables/conflicts_table7.md",
    "table7_csv": "results/tables/conflicts_table7.csv",
    "table4_md": "results/tables/conflicts_table4.md",
    "table4_csv": "results/tables/conflicts_table4.csv",
    "table5_md": "results/tables/conflicts_table5.md",
    "table5_csv": "results/tables/conflicts_table5.csv",
    "table6_md": "results/tables/conflicts_table6.md",
    "table6_csv": "results/tables/conflicts_table6.csv",
    "confusion_png": "results/figures/conflicts_confusion.png",
    "confusion_pdf": "results/figures/conflicts_confusion.pdf",
}


if config["conflicts"]["url"]:

    rule conflicts_download:
        """The release file, fetched once from conflicts.url and checked against its pinned SHA-256."""
        output:
            queries=config["conflicts"]["path"],
        log:
            "results/logs/conflicts_download.log",
        conda:
            "../envs/datasets.yaml"
        params:
            url=config["conflicts"]["url"],
            check_release=config["conflicts"]["check_release"],
        script:
            "../workflow/scripts/conflicts_download.py"


rule conflicts_data:
    """conflicts.jsonl (the release or the demo) -> one table, one row per query."""
    input:
        queries=config["conflicts"]["path"],
    output:
        queries="results/conflicts/data.parquet",
        rejected="results/conflicts/data.rejected.parquet",
    log:
        "results/logs/conflicts_data.log",
    benchmark:
        "results/benchmarks/conflicts_data.tsv"
    # the head of the CONFLICTS chain (responses, methods, judge): at default priority it
    # ran 13 minutes into the default run and the judge ended it alone (15 min 27 s)
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/datasets.yaml"
    params:
        options=subset(config["conflicts"], "on_error", "check_release", "max_per_category", "seed"),
        code=code_hash("conflicts_data.py"),
    script:
        "../workflow/scripts/conflicts_data.py"


rule conflicts_respond:
    """One model's Task 1 type predictions and Task 2 responses (every strategy), one model load."""
    input:
        unpack(lambda wildcards: model_inputs(wildcards.model)),
        queries="results/conflicts/data.parquet",
    output:
        types="results/conflicts/{model}/types.parquet",
        responses="results/conflicts/{model}/responses.parquet",
        usage="results/usage/conflicts_respond/{model}.parquet",
    log:
        "results/logs/conflicts_respond/{model}.log",
        **{key: path.format(rule="conflicts_respond") for key, path in SERVER_LOG.items()},
    benchmark:
        "results/benchmarks/conflicts_respond/{model}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/vllm.yaml"
    threads: generation_threads
    resources:
        gpu=lambda wildcards: generation_gpus(wildcards.model),
        mem_mb=16000,
    params:
        generation=lambda wildcards: vllm_gpus(
            CONFLICTS_GENERATION_PARAMS, generation_gpus(wildcards.model), own_key=True
        ),
        hosted=lambda wildcards: hosted_spec(wildcards.model),
        strategies=config["conflicts"]["strategies"],
        code=code_hash("conflicts_respond.py"),
    script:
        "../workflow/scripts/conflicts_respond.py"


# The CONFLICTS judge: conflicts.judge over judges (config/paper.yaml: the CONFLICTS paper's, beside ContextConflict's).
CONFLICTS_JUDGE_SETTINGS, CONFLICTS_JUDGE_INPUTS, CONFLICTS_JUDGE_GPUS, conflicts_judge_logs = judge_job(
    run_config.conflicts_judge(config), JUDGE_CACHE
)


rule conflicts_judge:
    """Expected behaviour, answer recall and FACTS grounding of every response (one judge load)."""
    input:
        **CONFLICTS_JUDGE_INPUTS,
        queries="results/conflicts/data.parquet",
        responses=expand("results/conflicts/{model}/responses.parquet", model=config["conflicts"]["models"]),
        # the conflict-resolution methods' responses (rules/methods.smk), judged in the same judge load
        methods=expand(
            "results/conflicts/{model}/methods_responses.parquet",
            model=config["methods"]["models"] if methods_run_on("conflicts") else [],
        ),
    output:
        judged="results/conflicts/judged.parquet",
        usage="results/usage/judges/conflicts.parquet",
    log:
        **conflicts_judge_logs("conflicts"),
    benchmark:
        "results/benchmarks/judges/conflicts.tsv"
    conda:
        "../envs/judges.yaml"
    threads: torch_threads
    resources:
        gpu=CONFLICTS_JUDGE_GPUS,
    params:
        judge_settings=CONFLICTS_JUDGE_SETTINGS,
        code=code_hash("conflicts_judge.py"),
    script:
        "../workflow/scripts/conflicts_judge.py"


rule conflicts_tables:
    """Tables 2 and 4-7 (with the paper's numbers) and the Task 1 confusion matrices."""
    input:
        queries="results/conflicts/data.parquet",
        types=expand("results/conflicts/{model}/types.parquet", model=config["conflicts"]["models"]),
        judged="results/conflicts/judged.parquet",
    output:
        **flagged(
            CONFLICTS_OUTPUTS,
            {
                "table2_csv": "conflicts_table2",
                "table7_csv": "conflicts_table7",
                "table4_csv": "conflicts_table4",
                "table5_csv": "conflicts_table5",
                "table6_csv": "conflicts_table6",
                "confusion_png": "conflicts_confusion",
            },
            "CONFLICTS",
        ),
    log:
        "results/logs/conflicts_tables.log",
    benchmark:
        "results/benchmarks/conflicts_tables.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        models=config["conflicts"]["models"],
        judge_label=run_config.conflicts_judge(config)["model"],
        options=subset(config["conflicts"], "bootstrap_resamples", "seed"),
        code=code_hash("conflicts_tables.py"),
    script:
        "../workflow/scripts/conflicts_tables.py"


register_results(
    "conflicts",
    outputs=flatten(CONFLICTS_OUTPUTS) if config["conflicts"]["models"] else [],
    tables=(
        {
            Path(CONFLICTS_OUTPUTS[f"{t}_csv"]).stem: CONFLICTS_OUTPUTS[f"{t}_csv"]
            for t in ("table2", "table7", "table4", "table5", "table6")
        }
        if config["conflicts"]["models"]
        else {}
    ),
    usage=[
        *[f"results/usage/conflicts_respond/{m}.parquet" for m in config["conflicts"]["models"]],
        *(["results/usage/judges/conflicts.parquet"] if config["conflicts"]["models"] else []),
    ],
)

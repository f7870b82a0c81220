# LLM judges: RAGAS Faithfulness, the judge's evidence ratings (Tables 2 and 7),
# judged answer match, and the judge's agreement on the gold set; the judge
# settings, inputs and reply cache that every judge job (conflicts_judge too) takes.
#
# The reply cache (conflictlab.judges.cache). Every judge job reads and writes
# results/judges/cache/, so that a forced or edited rerun asks the judge only
# what it has not answered before. The folder is the output of rule
# judge_cache and an input of every judge job:
# - it is declared: --summary, --list-changes and --delete-all-output see it;
# - it is never deleted when a job reruns: judge jobs only read it as an
#   input, and judge_cache's output is flagged update() (Snakemake keeps an
#   update output when its job reruns, e.g. under --forceall);
# - judge jobs write into it under a lock-free protocol: append only (each
#   save is a new file {writer}-{digest}.parquet, no file is ever rewritten)
#   and atomic (written under a hidden temporary name, then renamed), so
#   concurrent jobs lose nothing and never read a half-written file;
# - its contents never make a job rerun: Snakemake dates a directory output
#   by its .snakemake_timestamp, which the judge jobs' writes do not touch.
# Not chosen: a cache file per judge job as that job's output. Snakemake
# deletes an output before its job reruns (asking everything again); flagged
# update() it is kept, but restored to its pre-job copy when the job fails
# (losing the replies already paid for), and reads of other jobs' files would
# stay undeclared.

JUDGE_CACHE = "results/judges/cache"


# The judge's settings, inputs (model or request cache, and the reply cache), GPUs and logs (rules/common.smk).
JUDGE_SETTINGS, JUDGE_INPUTS, JUDGE_GPUS, judge_logs = judge_job(config["judges"], JUDGE_CACHE)

# (samples, responses) path lists, one pair per (model, type), models outer.
response_inputs = lambda models, conflict_types: {
    "samples": [samples_path(m, t) for m in models for t in conflict_types],
    "responses": [f"results/responses/{m}/{t}.parquet" for m in models for t in conflict_types],
}

# Every responding model the judges read: the generators and, for Table 4 and
# the methods' rows, every steered and method rerun (Faithfulness of each; with
# accuracy.free_text judge, its long free-text answers too).
JUDGED_MODELS = (
    config["generators"]
    + [name for model in config["steering"]["models"] for name in steered_names(model)]
    + [name for model in config["methods"]["models"] for name in method_names(model)]
)

# Tables 2 and 7 where summarization types are scored.
JUDGE_TABLES_WITH_RATINGS = bool(SUMMARIZATION_TYPES and default_scorer())

JUDGE_TABLE_INPUTS = {
    "faithfulness": "results/judges/faithfulness.parquet",
    "gold": "results/judges/gold.parquet",
    **(
        {
            "ratings": "results/judges/ratings.parquet",
            "attributions": [
                f"results/metrics/{m}/attributions_{default_scorer()}.parquet" for m in config["generators"]
            ],
        }
        if JUDGE_TABLES_WITH_RATINGS
        else {}
    ),
}

JUDGE_TABLE_OUTPUTS = {
    "faithfulness_md": "results/tables/faithfulness.md",
    "faithfulness_csv": "results/tables/faithfulness.csv",
    "gold_md": "results/tables/judge_gold.md",
    "gold_csv": "results/tables/judge_gold.csv",
    **(
        {
            "table2_md": "results/tables/table2.md",
            "table2_csv": "results/tables/table2.csv",
            "table7_md": "results/tables/table7.md",
            "table7_csv": "results/tables/table7.csv",
        }
        if JUDGE_TABLES_WITH_RATINGS
        else {}
    ),
}


rule judge_cache:
    """The judge reply cache folder, created once, kept across reruns (see above)."""
    output:
        folder=update(directory(JUDGE_CACHE)),
    log:
        "results/logs/judges/cache.log",
    localrule: True
    conda:
        "../envs/judges.yaml"
    params:
        code=code_hash("judge_cache.py"),
    script:
        "../workflow/scripts/judge_cache.py"


rule judge_faithfulness:
    """RAGAS Faithfulness of every judged model's responses: generators, steered and method reruns (one judge load)."""
    input:
        **JUDGE_INPUTS,
        **response_inputs(JUDGED_MODELS, config["conflict_types"]),
    output:
        faithfulness="results/judges/faithfulness.parquet",
        usage="results/usage/judges/faithfulness.parquet",
    log:
        **judge_logs("faithfulness"),
    benchmark:
        "results/benchmarks/judges/faithfulness.tsv"
    conda:
        "../envs/judges.yaml"
    threads: torch_threads
    resources:
        gpu=JUDGE_GPUS,
    params:
        judge_settings=JUDGE_SETTINGS,
        models=[m for m in JUDGED_MODELS for _ in config["conflict_types"]],
        max_per_type=config["judges"]["faithfulness_max_per_type"],
        max_statement_tokens=config["judges"]["max_statement_tokens"],
        code=code_hash("judge_faithfulness.py"),
    script:
        "../workflow/scripts/judge_faithfulness.py"


rule judge_ratings:
    """The judge's 1-5 contribution rating of every evidence piece (generators, summarization types)."""
    input:
        **JUDGE_INPUTS,
        **response_inputs(config["generators"], SUMMARIZATION_TYPES),
    output:
        ratings="results/judges/ratings.parquet",
        usage="results/usage/judges/ratings.parquet",
    log:
        **judge_logs("ratings"),
    benchmark:
        "results/benchmarks/judges/ratings.tsv"
    conda:
        "../envs/judges.yaml"
    threads: torch_threads
    resources:
        gpu=JUDGE_GPUS,
    params:
        judge_settings=JUDGE_SETTINGS,
        models=[m for m in config["generators"] for _ in SUMMARIZATION_TYPES],
        code=code_hash("judge_ratings.py"),
    script:
        "../workflow/scripts/judge_ratings.py"


rule judge_gold:
    """The judge's labels on the team-written gold set."""
    input:
        **JUDGE_INPUTS,
        gold=config["judges"]["gold"],
    output:
        judged="results/judges/gold.parquet",
        usage="results/usage/judges/gold.parquet",
    log:
        **judge_logs("gold"),
    benchmark:
        "results/benchmarks/judges/gold.tsv"
    conda:
        "../envs/judges.yaml"
    threads: torch_threads
    resources:
        gpu=JUDGE_GPUS,
    params:
        judge_settings=JUDGE_SETTINGS,
        code=code_hash("judge_gold.py"),
    script:
        "../workflow/scripts/judge_gold.py"


rule answer_match:
    """accuracy.free_text: judge - the judge decides every judged model's long free-text golds (one judge load;
    a model added later is asked alone, the reply cache answering the others)."""
    input:
        **JUDGE_INPUTS,
        **response_inputs(JUDGED_MODELS, REASONING_TYPES),
    output:
        matches=expand("results/judges/answer_match/{model}.parquet", model=JUDGED_MODELS),
        usage="results/usage/judges/answer_match.parquet",
    log:
        **judge_logs("answer_match"),
    benchmark:
        "results/benchmarks/judges/answer_match.tsv"
    conda:
        "../envs/judges.yaml"
    threads: torch_threads
    resources:
        gpu=JUDGE_GPUS,
    params:
        judge_settings=JUDGE_SETTINGS,
        models=[m for m in JUDGED_MODELS for _ in REASONING_TYPES],
        judged=JUDGED_MODELS,  # the order of the outputs
        code=code_hash("answer_match.py"),
    script:
        "../workflow/scripts/answer_match.py"


rule judge_tables:
    """Faithfulness per model and type, Table 2, Table 7 and the gold-set agreement."""
    input:
        **JUDGE_TABLE_INPUTS,
    output:
        **flagged(
            JUDGE_TABLE_OUTPUTS,
            {
                "faithfulness_csv": "faithfulness",
                "table2_csv": "table2",
                "table7_csv": "table7",
                "gold_csv": "judge_gold",
            },
            "LLM judges",
        ),
    log:
        "results/logs/judges/tables.log",
    benchmark:
        "results/benchmarks/judges/tables.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        judge_label=judge_label(),
        scorer=default_scorer(),
        bootstrap=config["judges"]["bootstrap_resamples"],
        seed=config["judges"]["seed"],
        code=code_hash("judge_tables.py"),
    script:
        "../workflow/scripts/judge_tables.py"

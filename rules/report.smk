# What the target `all` and the HTML report collect: every result of the
# configured workflow, from the output helpers of the rule files.

import json
import sys

# Every path of an outputs mapping (list values flattened).
flatten = lambda outputs: [
    path for value in outputs.values() for path in (value if isinstance(value, list) else [value])
]

REPORT_INPUTS = [
    *expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    *flatten(TABLE1_OUTPUTS),
    *[model_dir(name) for name in used_models() if not is_hosted(name)],
    *expand(
        "results/responses/{model}/{conflict_type}.parquet",
        model=config["generators"],
        conflict_type=config["conflict_types"],
    ),
    *(flatten(ACCURACY_OUTPUTS) if REASONING_TYPES else []),
    *(flatten(BALANCE_OUTPUTS) if SHUFFLE_TYPES else []),
    *(flatten(TABLE3_OUTPUTS) if SHUFFLE_TYPES and LOCAL_GENERATORS else []),
    *[path for model in config["generators"] if SHUFFLE_TYPES for path in flatten(shuffle_outputs(model))],
    *(flatten(ARBITRATION_OUTPUTS) if config["arbitration"]["models"] else []),
    *[path for model in config["mechanistic"]["models"] for path in flatten(mechanistic_outputs(model))],
    *(flatten(TABLE4_OUTPUTS) if config["steering"]["models"] else []),
    *(flatten(METHODS_TABLE_OUTPUTS) if config["methods"]["models"] else []),
    *(flatten(CONFLICTBANK_OUTPUTS) if config["conflictbank"]["models"] else []),
    *(flatten(CONFLICTS_OUTPUTS) if config["conflicts"]["models"] else []),
    *flatten(JUDGE_TABLE_OUTPUTS),
    *PROFILE_OUTPUTS,
    *REPRODUCTION_OUTPUTS.values(),
    *CONSTRUCTION_OUTPUTS,
]

# The endpoint usage file of every job of this config that may talk to an endpoint.
USAGE_INPUTS = [
    *[f"results/usage/generate/{m}.parquet" for m in config["generators"]],
    *[f"results/usage/conflicts_respond/{m}.parquet" for m in config["conflicts"]["models"]],
    *[f"results/usage/arbitration_evaluate/{m}.parquet" for m in config["arbitration"]["models"]],
    *[f"results/usage/conflictbank_evaluate/{m}.parquet" for m in config["conflictbank"]["models"]],
    "results/usage/judges/faithfulness.parquet",
    "results/usage/judges/gold.parquet",
    *(["results/usage/judges/ratings.parquet"] if JUDGE_TABLES_WITH_RATINGS else []),
    *(["results/usage/judges/conflicts.parquet"] if config["conflicts"]["models"] else []),
    *(
        [f"results/usage/judges/answer_match-{m}.parquet" for m in config["generators"]]
        if config["accuracy"]["free_text"] == "judge" and REASONING_TYPES
        else []
    ),
    *CONSTRUCTION_USAGE,
]

USAGE_OUTPUTS = {"md": "results/tables/usage.md", "csv": "results/tables/usage.csv"}

REPORT_INPUTS += list(USAGE_OUTPUTS.values())

ALL_TARGETS = REPORT_INPUTS + ["results/report.html"]


rule usage_table:
    """What every job asked of endpoints (requests, retries, tokens), with its cost."""
    input:
        usage=USAGE_INPUTS,
    output:
        **flagged(USAGE_OUTPUTS, {"csv": "usage"}, "Endpoint usage"),
    log:
        "results/logs/usage_table.log",
    benchmark:
        "results/benchmarks/usage_table.tsv"
    localrule: True
    conda:
        "../envs/judges.yaml"
    params:
        # Prices by endpoint model id (a usage row names the endpoint's model).
        prices={
            spec["hosted"]["model"]: spec["prices"]
            for spec in config["models"].values()
            if "hosted" in spec and "prices" in spec
        },
        code=code_hash("usage_table.py"),
    script:
        "../workflow/scripts/usage_table.py"


rule html_report:
    """Every flagged table and figure with its caption, as one HTML file.

    It runs ``snakemake --report`` on the finished results with this run's
    exact config (so one ``snakemake --cores all`` ends with the report);
    ``snakemake --report report.html`` makes the same file by hand.
    """
    input:
        REPORT_INPUTS,
    output:
        html="results/report.html",
    log:
        "results/logs/html_report.log",
    conda:
        # The command itself runs the outer Snakemake (params.python).
        "../envs/snakemake.yaml"
    params:
        python=sys.executable,
        snakefile=workflow.main_snakefile,
        config=json.dumps(config, sort_keys=True),
    shell:
        """
        tmp=$(mktemp -d results/.report.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        printf '%s' {params.config:q} >"$tmp/config.json"
        {params.python:q} -m snakemake --snakefile {params.snakefile:q} --nolock --configfile "$tmp/config.json" \
            --report "$tmp/report.html" >{log:q} 2>&1
        mv "$tmp/report.html" {output:q}
        """


# The hosted models of each endpoint job, for the dry estimate.
HOSTED_JOBS = {
    "generate": [m for m in config["generators"] if is_hosted(m)],
    "conflicts_respond": [m for m in config["conflicts"]["models"] if is_hosted(m)],
    "arbitration_evaluate": [m for m in config["arbitration"]["models"] if is_hosted(m)],
    "conflictbank_evaluate": [m for m in config["conflictbank"]["models"] if is_hosted(m)],
}


rule usage_estimate:
    """What this config would send to its hosted generators, before anything is
    sent (not in the default targets: `snakemake results/usage/estimate.md`)."""
    input:
        samples=[f"results/data/{s}.parquet" for s in GENERATION_SUBSETS] if HOSTED_JOBS["generate"] else [],
        conflicts=["results/conflicts/data.parquet"] if HOSTED_JOBS["conflicts_respond"] else [],
        arbitration=["results/arbitration/instances.parquet"] if HOSTED_JOBS["arbitration_evaluate"] else [],
        arbitration_sensitivity=(
            ["results/arbitration/sensitivity_instances.parquet"] if HOSTED_JOBS["arbitration_evaluate"] else []
        ),
        conflictbank=["results/conflictbank/data.parquet"] if HOSTED_JOBS["conflictbank_evaluate"] else [],
    output:
        md="results/usage/estimate.md",
        csv="results/usage/estimate.csv",
    log:
        "results/logs/usage_estimate.log",
    benchmark:
        "results/benchmarks/usage_estimate.tsv"
    localrule: True
    conda:
        "../envs/judges.yaml"
    params:
        jobs=HOSTED_JOBS,
        prices={name: spec["prices"] for name, spec in config["models"].items() if "prices" in spec},
        templates=config["generation"]["templates"],
        strategies=config["conflicts"]["strategies"],
        conflictbank_settings=CONFLICTBANK_PROMPT_SETTINGS,
        max_new_tokens={
            "generate": config["generation"]["max_new_tokens"],
            "conflicts": config["conflicts"]["max_new_tokens"],
        },
        code=code_hash("usage_estimate.py"),
    script:
        "../workflow/scripts/usage_estimate.py"

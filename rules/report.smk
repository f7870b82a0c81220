# What the target `all` and the HTML report collect: every result of the
# configured workflow, from the output helpers of the rule files.

import json
import sys

REPORT_INPUTS = [
    *[model_dir(name) for name in used_models() if not is_hosted(name)],
    # what every selected benchmark's rule files registered (rules/benchmarks.smk), in registry order
    *selected_outputs(),
    *(flatten(METHODS_TABLE_OUTPUTS) if any(METHOD_BENCHMARKS.values()) else []),
    *PROFILE_OUTPUTS,
    *REPRODUCTION_OUTPUTS.values(),
]

# The endpoint usage file of every job of this config that may talk to an endpoint.
USAGE_INPUTS = [path for name in SELECTED for path in BENCHMARK_USAGE[name]]

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
# (A benchmark the config does not select has empty model lists: conflictlab.run_config.model_lists.)
_LISTS = run_config.model_lists(config)
HOSTED_JOBS = {
    "generate": [m for m in _LISTS["generators"] if is_hosted(m)],
    "conflicts_respond": [m for m in _LISTS["conflicts.models"] if is_hosted(m)],
    "arbitration_evaluate": [m for m in _LISTS["arbitration.models"] if is_hosted(m)],
    "conflictbank_evaluate": [m for m in _LISTS["conflictbank.models"] if is_hosted(m)],
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

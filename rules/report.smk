# What the target `all` and the HTML report collect: every result of the
# configured workflow, from the output helpers of the rule files.

import json
import sys


# Every path of an outputs mapping (list values flattened).
flatten = lambda outputs: [path for value in outputs.values() for path in (value if isinstance(value, list) else [value])]

REPORT_INPUTS = [
    *expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    *flatten(TABLE1_OUTPUTS),
    *[model_dir(name) for name in used_models()],
    *expand("results/responses/{model}/{conflict_type}.parquet", model=config["generators"], conflict_type=config["conflict_types"]),
    *(flatten(ACCURACY_OUTPUTS) if REASONING_TYPES else []),
    *(flatten(BALANCE_OUTPUTS) + flatten(TABLE3_OUTPUTS) if SHUFFLE_TYPES else []),
    *[path for model in config["generators"] if SHUFFLE_TYPES for path in flatten(shuffle_outputs(model))],
    *(flatten(ARBITRATION_OUTPUTS) if config["arbitration"]["models"] else []),
    *[path for model in config["mechanistic"]["models"] for path in flatten(mechanistic_outputs(model))],
    *(flatten(TABLE4_OUTPUTS) if config["steering"]["models"] else []),
    *(flatten(CONFLICTBANK_OUTPUTS) if config["conflictbank"]["models"] else []),
    *(flatten(CONFLICTS_OUTPUTS) if config["conflicts"]["models"] else []),
    *flatten(JUDGE_TABLE_OUTPUTS),
]

ALL_TARGETS = REPORT_INPUTS + ["results/report.html"]


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
    params:
        python=sys.executable,
        snakefile=workflow.main_snakefile,
        config=json.dumps(config, sort_keys=True),
    log:
        "results/logs/html_report.log",
    conda:
        # The command itself runs the outer Snakemake (params.python).
        "../envs/snakemake.yaml"
    shell:
        """
        tmp=$(mktemp -d results/.report.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        printf '%s' {params.config:q} > "$tmp/config.json"
        {params.python:q} -m snakemake --snakefile {params.snakefile:q} --nolock --configfile "$tmp/config.json" \
            --report "$tmp/report.html" > {log:q} 2>&1
        mv "$tmp/report.html" {output:q}
        """

# The reproduction report: each paper's numbers (data files, conflictlab/papers/<paper>.yaml, one per
# registered benchmark's paper) beside this run's, read from the result tables the other rule files write.

from pathlib import Path

from conflictlab.report.paper_data import load_paper, paper_file
from conflictlab.report.paper_models import instruments, model_sources
from conflictlab.run_config import model_lists

# The model lists a paper's rows are looked up in (Ours.models), the judges and scorers its numbers
# depend on (Instrument.role), and how a paper may name each of these models (its hub repository or hosted id).
REPRODUCTION_MODEL_LISTS = model_lists(config)
REPRODUCTION_INSTRUMENTS = instruments(config)
REPRODUCTION_SOURCES = model_sources(config, (*REPRODUCTION_MODEL_LISTS.values(), *REPRODUCTION_INSTRUMENTS.values()))

# The tables of this run that a paper's rows read (Ours.table: the CSV's stem): every table the selected
# benchmarks registered (rules/benchmarks.smk), and the profile's (the methods table).
REPRODUCTION_TABLES = {**selected_tables(), **PROFILE_INPUTS}

# The papers' data files: the rules' inputs (an edit reruns them); reading them here checks them against their
# schema when the workflow is parsed, before any job.
REPRODUCTION_PAPERS = [str(paper_file(bench.paper)) for bench in benchmarks.REGISTRY if bench.paper]
for path in REPRODUCTION_PAPERS:
    load_paper(path)

REPRODUCTION_OUTPUTS = {
    "md": "results/reproduction.md",
    "html": "results/reproduction.html",
    "csv": "results/reproduction.csv",
    "claims_csv": "results/reproduction_claims.csv",
}


# The sampling cap that bounds each table's n (conflictlab.report.reproduction.plan): (config key, cap; None =
# every item), by the caps of the benchmark that registered it (its descriptor's caps).
REPRODUCTION_CAPS = {
    stem: (key, run_config.lookup(config, key))
    for stem in REPRODUCTION_TABLES
    for key in [benchmarks.cap_key(BENCHMARK_RESULTS.owner(stem, SELECTED), stem)]
    if key
}


rule reproduction:
    """Each paper's headline numbers beside this run's, with n and a verdict per row: Markdown and a self-contained HTML page."""
    input:
        **REPRODUCTION_TABLES,
        papers=REPRODUCTION_PAPERS,
    output:
        **flagged(REPRODUCTION_OUTPUTS, {"html": "reproduction"}, "Reproduction"),
    log:
        "results/logs/reproduction.log",
    benchmark:
        "results/benchmarks/reproduction.tsv"
    localrule: True
    conda:
        "../envs/scipy.yaml"
    params:
        model_lists=REPRODUCTION_MODEL_LISTS,
        instruments=REPRODUCTION_INSTRUMENTS,
        sources=REPRODUCTION_SOURCES,
        margins=config["reproduction"]["margins"],
        code=code_hash("reproduction.py"),
    script:
        "../workflow/scripts/reproduction.py"


rule reproduction_plan:
    """Before any model runs: for every paper row and claim, whether this config can compare it (and why not), the paper's n, ours as configured, and the power to reach equivalent. Reads the config alone."""
    input:
        papers=REPRODUCTION_PAPERS,
    output:
        csv="results/reproduction_plan.csv",
    log:
        "results/logs/reproduction_plan.log",
    benchmark:
        "results/benchmarks/reproduction_plan.tsv"
    localrule: True
    conda:
        "../envs/scipy.yaml"
    params:
        model_lists=REPRODUCTION_MODEL_LISTS,
        instruments=REPRODUCTION_INSTRUMENTS,
        sources=REPRODUCTION_SOURCES,
        margins=config["reproduction"]["margins"],
        tables=list(REPRODUCTION_TABLES),
        caps=REPRODUCTION_CAPS,
        code=code_hash("reproduction_plan.py"),
    script:
        "../workflow/scripts/reproduction_plan.py"

# The reproduction report: each paper's headline numbers (typed in per
# benchmark, conflictlab.<benchmark>.paper_numbers) beside this run's, read
# from the result tables the other rule files write.

from pathlib import Path

from conflictlab.report.paper_models import instruments, model_sources
from conflictlab.run_config import model_lists

# The model lists a paper's rows are looked up in (Ours.models), the judges and scorers its numbers
# depend on (Instrument.role), and how a paper may name each of these models (its hub repository or hosted id).
REPRODUCTION_MODEL_LISTS = model_lists(config)
REPRODUCTION_INSTRUMENTS = instruments(config)
REPRODUCTION_SOURCES = model_sources(config, (*REPRODUCTION_MODEL_LISTS.values(), *REPRODUCTION_INSTRUMENTS.values()))

# The tables of this run that a paper's rows read (Ours.table: the CSV's stem), where this config makes them.
REPRODUCTION_TABLES = {
    **{Path(path).stem: path for path in PROFILE_INPUTS.values()},
    "table1": TABLE1_OUTPUTS["table1_csv"],
    **({"table3": TABLE3_OUTPUTS["table3_csv"]} if SHUFFLE_TYPES else {}),
    **({"table4": TABLE4_OUTPUTS["table4_csv"]} if config["steering"]["models"] else {}),
}

REPRODUCTION_OUTPUTS = {"md": "results/reproduction.md", "html": "results/reproduction.html"}


rule reproduction:
    """Each paper's headline numbers beside this run's, with n and a verdict per row: Markdown and a self-contained HTML page."""
    input:
        **REPRODUCTION_TABLES,
    output:
        **flagged(REPRODUCTION_OUTPUTS, {"html": "reproduction"}, "Reproduction"),
    params:
        model_lists=REPRODUCTION_MODEL_LISTS,
        instruments=REPRODUCTION_INSTRUMENTS,
        sources=REPRODUCTION_SOURCES,
        code=code_hash("reproduction.py"),
    log:
        "results/logs/reproduction.log",
    benchmark:
        "results/benchmarks/reproduction.tsv"
    localrule: True
    conda:
        "../envs/scipy.yaml"
    script:
        "../workflow/scripts/reproduction.py"

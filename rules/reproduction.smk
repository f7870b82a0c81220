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

PROFILE_TABLE_STEMS = {Path(path).stem for path in PROFILE_INPUTS.values()}
# The tables of this run that a paper's rows read (Ours.table: the CSV's stem), where this config makes them.
REPRODUCTION_TABLES = {
    **{Path(path).stem: path for path in PROFILE_INPUTS.values()},
    "table1": TABLE1_OUTPUTS["table1_csv"],
    **({"table3": TABLE3_OUTPUTS["table3_csv"]} if SHUFFLE_TYPES else {}),
    **({"table4": TABLE4_OUTPUTS["table4_csv"]} if config["steering"]["models"] else {}),
    # the claims' tables (conflictlab.<benchmark>.claims), by their CSV stems
    **(
        {f"conflicts_{t}": CONFLICTS_OUTPUTS[f"{t}_csv"] for t in ("table2", "table7")}
        if config["conflicts"]["models"]
        else {}
    ),
    **(
        {Path(ARBITRATION_OUTPUTS[k]).stem: ARBITRATION_OUTPUTS[k] for k in ("accuracy_csv", "sensitivity_csv")}
        if config["arbitration"]["models"]
        else {}
    ),
    **(
        {Path(BALANCE_OUTPUTS[k]).stem: BALANCE_OUTPUTS[k] for k in ("table6_csv", "agreement_csv", "positions")}
        if "balance" in PROFILE_TABLE_STEMS
        else {}
    ),
    **(
        {"conflictbank_embedded": CONFLICTBANK_OUTPUTS["embedded_csv"]}
        if "conflictbank_mr" in PROFILE_TABLE_STEMS
        else {}
    ),
    **{f"shuffled_positions_{m}": shuffle_outputs(m)["presented_csv"] for m in config["generators"] if SHUFFLE_TYPES},
    # the mechanistic tables are Parquet (results/mechanistic/<model>/), read by the same script
    **{
        f"mechanistic_{kind}_{m}": mechanistic_outputs(m)[kind]
        for m in config["mechanistic"]["models"]
        for kind in ("probes", "spectral", "projection", "subset_probes")
    },
}

REPRODUCTION_OUTPUTS = {
    "md": "results/reproduction.md",
    "html": "results/reproduction.html",
    "csv": "results/reproduction.csv",
    "claims_csv": "results/reproduction_claims.csv",
}
# The sampling caps that bound a table's n (conflictlab.report.reproduction.plan): (config key, cap; None = every item).
_CAPS = {
    "data.max_per_subset": config["data"]["max_per_subset"],
    "conflicts.max_per_category": config["conflicts"]["max_per_category"],
    "conflictbank.max_per_relation": config["conflictbank"]["max_per_relation"],
    "judges.faithfulness_max_per_type": config["judges"]["faithfulness_max_per_type"],
}

# Which cap bounds a table (by the table stem's prefix; arbitration's sets are synthetic, sized by their own keys).
_CAP_KEYS = {
    "faithfulness": "judges.faithfulness_max_per_type",
    "conflicts_": "conflicts.max_per_category",
    "conflictbank": "conflictbank.max_per_relation",
    "arbitration": None,
}
REPRODUCTION_CAPS = {
    stem: (key, _CAPS[key])
    for stem in REPRODUCTION_TABLES
    for key in [next((k for prefix, k in _CAP_KEYS.items() if stem.startswith(prefix)), "data.max_per_subset")]
    if key
}


rule reproduction:
    """Each paper's headline numbers beside this run's, with n and a verdict per row: Markdown and a self-contained HTML page."""
    input:
        **REPRODUCTION_TABLES,
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

# One page per model: its conflict profile across the four benchmarks, read
# from the aggregate tables the other rule files write.

from conflictlab.report.paper_models import model_sources

# The benchmarks' model lists (the page's columns); every model named in one gets a page.
PROFILE_MODEL_LISTS = {
    "contextconflict": config["generators"],
    "arbitration": config["arbitration"]["models"],
    "conflicts": config["conflicts"]["models"],
    "conflictbank": config["conflictbank"]["models"],
}
PROFILE_MODELS = list(dict.fromkeys(m for models in PROFILE_MODEL_LISTS.values() for m in models))
# How a paper may name a model: its source (a hub repository), or a hosted model's id.
PROFILE_SOURCES = model_sources(config, PROFILE_MODEL_LISTS.values())

# The tables of the benchmarks this run has (a benchmark without models has none).
PROFILE_INPUTS = {
    **({"accuracy": ACCURACY_OUTPUTS["csv"]} if config["generators"] and REASONING_TYPES else {}),
    **(
        {"balance": BALANCE_OUTPUTS["balance_csv"]}
        if config["generators"] and config["scorers"] and SUMMARIZATION_TYPES
        else {}
    ),
    **({"faithfulness": JUDGE_TABLE_OUTPUTS["faithfulness_csv"]} if config["generators"] else {}),
    **({"arbitration": ARBITRATION_OUTPUTS["orders_csv"]} if config["arbitration"]["models"] else {}),
    **(
        {f"conflicts_{t}": CONFLICTS_OUTPUTS[f"{t}_csv"] for t in ("table4", "table5", "table6")}
        if config["conflicts"]["models"]
        else {}
    ),
    **({"conflictbank": CONFLICTBANK_OUTPUTS["table_csv"]} if config["conflictbank"]["models"] else {}),
    **({"methods": METHODS_TABLE_OUTPUTS["csv"]} if config["methods"]["models"] else {}),
}

PROFILE_OUTPUTS = [f"results/profiles/{model}.{ext}" for model in PROFILE_MODELS for ext in ("html", "png")]


rule profile:
    """One model's headline numbers of every benchmark beside every other model's, with the paper's where they exist: HTML page and figure."""
    input:
        **PROFILE_INPUTS,
        reproduction="results/reproduction.csv",  # its verdicts of the page's model (rules/reproduction.smk)
    output:
        html=reported("results/profiles/{model}.html", "profile", "Model profiles"),
        png=reported("results/profiles/{model}.png", "profile", "Model profiles"),
    log:
        "results/logs/profile/{model}.log",
    benchmark:
        "results/benchmarks/profile/{model}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        models=PROFILE_MODEL_LISTS,
        source=lambda wildcards: PROFILE_SOURCES.get(wildcards.model),
        code=code_hash("profile.py"),
    script:
        "../workflow/scripts/profile.py"

# One page per model: its conflict profile across the four benchmarks, read
# from the aggregate tables the other rule files write.

from conflictlab.report.paper_models import model_sources

# The selected benchmarks' model lists (the page's columns); every model named in one gets a page.
PROFILE_MODEL_LISTS = {name: run_config.lookup(config, benchmarks.BY_NAME[name].models_key) for name in SELECTED}
PROFILE_MODELS = list(dict.fromkeys(m for models in PROFILE_MODEL_LISTS.values() for m in models))
# How a paper may name a model: its source (a hub repository), or a hosted model's id.
PROFILE_SOURCES = model_sources(config, PROFILE_MODEL_LISTS.values())

# The tables the selected benchmarks' profile functions read (their descriptors' profile_tables), where this
# run makes them (rules/benchmarks.smk), and the methods table.
PROFILE_INPUTS = {
    **{
        stem: BENCHMARK_TABLES[name][stem]
        for name in SELECTED
        for stem in benchmarks.BY_NAME[name].profile_tables
        if stem in BENCHMARK_TABLES[name]
    },
    **({"methods": METHODS_TABLE_OUTPUTS["csv"]} if any(METHOD_BENCHMARKS.values()) else {}),
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

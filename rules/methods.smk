# Conflict-resolution methods beside activation steering (CAD, AdaCAD,
# context-faithful prompts; conflictlab.lm.methods): each reruns a methods
# model on the steering test split as the pseudo-model "name@method"
# (conflictlab.lm.methods.MethodRun), decoded as the steered
# reruns are, so the metric rules score it as they score those and its rows
# compare with Table 4's on the same samples.

import re

from conflictlab.lm.methods import Method, MethodRun

# Every configured method was parsed and checked against its models' backend before any job
# (a bad name, or CAD on a hosted model: conflictlab.run_config.capability_problems).


rule method_generate:
    """One method's responses to every type's steering test split (hf, the
    steered reruns' length, batch size and precision)."""
    input:
        samples=expand("results/steering/split/{conflict_type}.test.parquet", conflict_type=config["conflict_types"]),
        model="resources/models/{model}",
    output:
        expand("results/responses/{{model}}@{{method}}/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    log:
        "results/logs/method_generate/{model}@{method}.log",
        # Resumable shards beside the responses: logs, not outputs, as in rule generate.
        shards="results/responses/{model}@{method}/.shards/method",
    benchmark:
        "results/benchmarks/method_generate/{model}@{method}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
        method=Method.PATTERN,
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["methods"]["gpu"]),
        mem_mb=16000,
    params:
        generation=STEERING_GENERATION_PARAMS,
        code=code_hash("method_generate.py"),
    script:
        "../workflow/scripts/method_generate.py"


use rule shapley_values as shapley_values_method with:
    # One method rerun under one scorer; its samples are the steering test split (samples_path).
    wildcard_constraints:
        model=MethodRun.PATTERN,


# The models both steered and run under methods: their reruns all answer the
# steering test split, so one job per scorer scores the steered variants and
# the method reruns together, each evidence subset forwarded once for all of
# them (the demo on the AMD EPYC Zen 4: 29.7-29.9 CPU s against 27.6 for the
# steered job and 15.6 + 15.4 for the two method jobs; values within 5e-6).
STEERED_METHOD_MODELS = [m for m in config["methods"]["models"] if m in config["steering"]["models"]]
rerun_names = lambda model: [*steered_names(model), *method_names(model)]


use rule shapley_values as shapley_values_reruns with:
    input:
        **rerun_scoring_inputs(rerun_names),
    output:
        **rerun_scoring_outputs(rerun_names),
    log:
        "results/logs/shapley_values/{scorer}/{model}@reruns.log",
    benchmark:
        "results/benchmarks/shapley_values/{scorer}/{model}@reruns.tsv"
    wildcard_constraints:
        model="|".join(map(re.escape, STEERED_METHOD_MODELS)) or "(?!)",  # (?!) matches nothing


ruleorder: shapley_values_reruns > shapley_values_steered
ruleorder: shapley_values_reruns > shapley_values_method


# --- the methods on the other three benchmarks, and the methods table ---

# Greedy decoding runs first on every benchmark but ContextConflict (there the
# steering split's unsteered "base" rerun is the greedy row, when the model is
# steered): it is the row every method is read against, and ConflictBank's
# scored subset.
METHODS_WITH_GREEDY = list(dict.fromkeys(["greedy", *config["methods"]["list"]]))
# Each benchmark runs the methods where it runs at all (rules/benchmarks.smk).
METHOD_BENCHMARKS = {name: methods_run_on(name) for name in benchmarks.NAMES}


rule conflictbank_methods:
    """One model's A-D read-out under every method, in the single-evidence conflict settings."""
    input:
        records="results/conflictbank/data.parquet",
        model="resources/models/{model}",
    output:
        predictions="results/conflictbank/{model}/methods.parquet",
    log:
        "results/logs/conflictbank_methods/{model}.log",
    benchmark:
        "results/benchmarks/conflictbank_methods/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["methods"]["gpu"]),
        mem_mb=16000,
    params:
        methods=METHODS_WITH_GREEDY,
        options=subset(config["conflictbank"], "batch_size", "dtype"),
        code=code_hash("conflictbank_methods.py"),
    script:
        "../workflow/scripts/conflictbank_methods.py"


rule arbitration_methods:
    """One model's A/B read-out of the main instances under every method."""
    input:
        main="results/arbitration/instances.parquet",
        model="resources/models/{model}",
    output:
        predictions="results/arbitration/{model}/methods.parquet",
    log:
        "results/logs/arbitration_methods/{model}.log",
    benchmark:
        "results/benchmarks/arbitration_methods/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["methods"]["gpu"]),
        mem_mb=16000,
    params:
        methods=METHODS_WITH_GREEDY,
        settings=subset(config["arbitration"], "batch_size", "dtype"),
        code=code_hash("arbitration_methods.py"),
    script:
        "../workflow/scripts/arbitration_methods.py"


rule conflicts_methods_respond:
    """One model's Vanilla responses to every CONFLICTS query under every method (hf, decoded as the steered reruns)."""
    input:
        queries="results/conflicts/data.parquet",
        model="resources/models/{model}",
    output:
        responses="results/conflicts/{model}/methods_responses.parquet",
    log:
        "results/logs/conflicts_methods_respond/{model}.log",
    benchmark:
        "results/benchmarks/conflicts_methods_respond/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/vllm.yaml"  # the CONFLICTS response module also drives the vllm backends (rule conflicts_respond)
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["methods"]["gpu"]),
        mem_mb=16000,
    params:
        methods=METHODS_WITH_GREEDY,
        # every method, on every benchmark, decodes as the steered reruns do (steering's length, batch size, precision)
        generation=subset(
            STEERING_GENERATION_PARAMS,
            *("dtype", "batch_size", "max_model_len", "seed", "max_new_tokens", "repetition_penalty"),
        ),
        code=code_hash("conflicts_methods_respond.py"),
    script:
        "../workflow/scripts/conflicts_methods_respond.py"


# ContextConflict rows of each methods model: Table 4's steered reruns (their
# "base" is the greedy row) when the model is steered, and its method reruns.
METHODS_TABLE_CC_RUNS = (
    [
        *[
            SteeredModel(model, variant).format()
            for model in config["methods"]["models"]
            if model in config["steering"]["models"]
            for variant in table4_variants(config["steering"]["alpha"])
        ],
        *[name for model in config["methods"]["models"] for name in method_names(model)],
    ]
    if METHOD_BENCHMARKS["contextconflict"]
    else []
)

METHODS_TABLE_INPUTS = {
    **(
        {"accuracy": [f"results/metrics/{name}/accuracy.parquet" for name in METHODS_TABLE_CC_RUNS]}
        if REASONING_TYPES and METHODS_TABLE_CC_RUNS
        else {}
    ),
    **(
        {
            "attributions": [
                f"results/metrics/{name}/attributions_{default_scorer()}.parquet" for name in METHODS_TABLE_CC_RUNS
            ]
        }
        if SUMMARIZATION_TYPES and default_scorer() and METHODS_TABLE_CC_RUNS
        else {}
    ),
    **({"faithfulness": "results/judges/faithfulness.parquet"} if METHOD_BENCHMARKS["contextconflict"] else {}),
    **(
        {"conflictbank": expand("results/conflictbank/{model}/methods.parquet", model=config["methods"]["models"])}
        if METHOD_BENCHMARKS["conflictbank"]
        else {}
    ),
    **(
        {
            "arbitration_instances": "results/arbitration/instances.parquet",
            "arbitration": expand("results/arbitration/{model}/methods.parquet", model=config["methods"]["models"]),
        }
        if METHOD_BENCHMARKS["arbitration"]
        else {}
    ),
    **({"conflicts": "results/conflicts/judged.parquet"} if METHOD_BENCHMARKS["conflicts"] else {}),
}

METHODS_TABLE_OUTPUTS = {
    "md": "results/tables/methods.md",
    "csv": "results/tables/methods.csv",
    "png": "results/figures/methods.png",
    "pdf": "results/figures/methods.pdf",
}


rule methods_table:
    """Methods (steering, CAD, AdaCAD, context-faithful prompts) as rows, each benchmark's headline metrics as columns."""
    input:
        **METHODS_TABLE_INPUTS,
    output:
        **flagged(METHODS_TABLE_OUTPUTS, {"csv": "methods", "png": "methods"}, "Conflict-resolution methods"),
    log:
        "results/logs/methods_table.log",
    benchmark:
        "results/benchmarks/methods_table.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        models=config["methods"]["models"],
        cc_runs=METHODS_TABLE_CC_RUNS,
        methods=METHODS_WITH_GREEDY,
        scorer=default_scorer(),
        judge_label=judge_label(),
        bootstrap=config["shapley"]["bootstrap_resamples"],
        seed=config["shapley"]["seed"],
        min_n_mark=config["statistics"]["min_n_mark"],
        code=code_hash("methods_table.py"),
    script:
        "../workflow/scripts/methods_table.py"

# Conflict-resolution methods beside activation steering (CAD, AdaCAD,
# context-faithful prompts; conflictlab.lm.methods): each reruns a methods
# model on the steering test split as the pseudo-model "name@method"
# (conflictlab.contextconflict.variants.MethodRun), decoded as the steered
# reruns are, so the metric rules score it as they score those and its rows
# compare with Table 4's on the same samples.

from conflictlab.contextconflict.variants import MethodRun
from conflictlab.lm.methods import Method, check_method_backend


# Every configured method parsed and checked against the backend its reruns
# use before any job starts (a bad name or a method the backend cannot run fails here).
for _method in config["methods"]["list"]:
    check_method_backend(_method, STEERING_GENERATION_PARAMS["backend"])

METHOD_NAMES = [name for model in config["methods"]["models"] for name in method_names(model)]

# Per method rerun: accuracy summaries (reasoning types), attributions under
# the default scorer (summarization types); Faithfulness is in
# rules/judges.smk's judge_faithfulness. The methods table reads these.
METHOD_TARGETS = [
    *([f"results/metrics/{name}/accuracy_summary.parquet" for name in METHOD_NAMES] if REASONING_TYPES else []),
    *(
        [f"results/metrics/{name}/attributions_{default_scorer()}.parquet" for name in METHOD_NAMES]
        if SUMMARIZATION_TYPES and default_scorer()
        else []
    ),
]


rule method_generate:
    """One method's responses to every type's steering test split (hf, the
    steered reruns' length, batch size and precision)."""
    input:
        samples=expand("results/steering/split/{conflict_type}.test.parquet", conflict_type=config["conflict_types"]),
        model="resources/models/{model}",
    output:
        expand("results/responses/{{model}}@{{method}}/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
        method=Method.PATTERN,
    params:
        generation=STEERING_GENERATION_PARAMS,
        code=code_hash("method_generate.py"),
    log:
        "results/logs/method_generate/{model}@{method}.log",
        # Resumable shards beside the responses: logs, not outputs, as in rule generate.
        shards="results/responses/{model}@{method}/.shards/method",
    benchmark:
        "results/benchmarks/method_generate/{model}@{method}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["methods"]["gpu"]),
        mem_mb=16000,
    conda:
        "../envs/transformers.yaml"
    script:
        "../workflow/scripts/method_generate.py"


use rule shapley_values as shapley_values_method with:
    # One method rerun under one scorer; its samples are the steering test split (samples_path).
    wildcard_constraints:
        model=MethodRun.PATTERN,

# Activation steering (paper section 5): calibration/test split, directions,
# steered reruns ("name@variant" pseudo-models, scored by the metric rules like
# any generator), Table 4 and Figure 31.

from conflictlab.contextconflict.steering import table4_variants, variant_schedule
from conflictlab.contextconflict.variants import SteeringVariant

# [method, alpha] of every variant, by name.
VARIANTS = {v.format(): [v.method, v.alpha] for v in map(SteeringVariant.parse, steering_variants())}

# The generation settings of steered reruns: hf, with steering's length, batch size and precision.
STEERING_GENERATION_PARAMS = {
    **subset(
        config["generation"], "templates", "max_model_len", "on_too_long", "seed", "shard_size", "repetition_penalty"
    ),
    "backend": run_config.INTERNALS_BACKEND,
    **{key: config["steering"][key] for key in ("max_new_tokens", "batch_size", "dtype")},
}

STEERED_NAMES = [name for model in config["steering"]["models"] for name in steered_names(model)]

# Per steered rerun: accuracy summaries (reasoning), attributions under the
# default scorer (summarization), and the judged Faithfulness (all types).
TABLE4_INPUTS = {
    "faithfulness": "results/judges/faithfulness.parquet",
    **(
        {
            "accuracy": [f"results/metrics/{name}/accuracy_summary.parquet" for name in STEERED_NAMES],
            # per-sample outcomes, paired on the sample id against the base rerun
            "accuracy_items": [f"results/metrics/{name}/accuracy.parquet" for name in STEERED_NAMES],
        }
        if REASONING_TYPES
        else {}
    ),
    **(
        {"attributions": [f"results/metrics/{name}/attributions_{default_scorer()}.parquet" for name in STEERED_NAMES]}
        if SUMMARIZATION_TYPES and default_scorer()
        else {}
    ),
}

TABLE4_OUTPUTS = {
    "table4_md": "results/tables/table4.md",
    "table4_tex": "results/tables/table4.tex",
    "table4_csv": "results/tables/table4.csv",
    "fig31_png": [f"results/figures/fig31_alpha_{m}.png" for m in config["steering"]["models"]],
    "fig31_pdf": [f"results/figures/fig31_alpha_{m}.pdf" for m in config["steering"]["models"]],
}


rule steering_split:
    """Seeded calibration (directions) / test (steered reruns) split of one type, per subset."""
    input:
        samples="results/data/{conflict_type}.parquet",
    output:
        calibration="results/steering/split/{conflict_type}.calibration.parquet",
        test="results/steering/split/{conflict_type}.test.parquet",
    log:
        "results/logs/steering_split/{conflict_type}.log",
    benchmark:
        "results/benchmarks/steering_split/{conflict_type}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        calibration_fraction=config["steering"]["calibration_fraction"],
        seed=config["steering"]["seed"],
        code=code_hash("steering_split.py"),
    script:
        "../workflow/scripts/steering_split.py"


rule steering_directions:
    """Eq. 6 and CAS directions per type from the activations of one model's
    calibration samples (the activations rule forwards their prompts)."""
    input:
        calibration=expand(
            "results/steering/split/{conflict_type}.calibration.parquet", conflict_type=config["conflict_types"]
        ),
        states=activation_files("directions", "npy"),
        index=activation_files("directions", "index.parquet"),
    output:
        expand("results/steering/{{model}}/directions/{conflict_type}.npz", conflict_type=config["conflict_types"]),
    log:
        "results/logs/steering_directions/{model}.log",
    benchmark:
        "results/benchmarks/steering_directions/{model}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        code=code_hash("steering_directions.py"),
    script:
        "../workflow/scripts/steering_directions.py"


rule steered_generate:
    """Every steering variant's responses to every type's test split (base:
    unsteered), one model load, each prompt prefilled once for all variants."""
    input:
        samples=expand("results/steering/split/{conflict_type}.test.parquet", conflict_type=config["conflict_types"]),
        directions=expand(
            "results/steering/{{model}}/directions/{conflict_type}.npz", conflict_type=config["conflict_types"]
        ),
        model="resources/models/{model}",
    output:
        expand(
            "results/responses/{steered}/{conflict_type}.parquet",
            steered=steered_names("{model}"),
            conflict_type=config["conflict_types"],
        ),
    log:
        "results/logs/steered_generate/{model}.log",
        # Resumable shards, one folder per variant (in params.variants' order)
        # beside its responses: logs, not outputs, as in rule generate.
        shards=expand("results/responses/{steered}/.shards/steered", steered=steered_names("{model}")),
    benchmark:
        "results/benchmarks/steered_generate/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, config["steering"]["gpu"]),
        mem_mb=16000,
    params:
        # (method, alpha, schedule) per variant: editing steering.alpha or
        # alpha_sweep reruns this job (all variants share its prefill).
        variants={
            name: [*spec, variant_schedule(name, cas_schedule=config["steering"]["cas_schedule"])]
            for name, spec in VARIANTS.items()
        },
        layers=config["steering"]["layers"],
        generation=STEERING_GENERATION_PARAMS,
        code=code_hash("steered_generate.py"),
    script:
        "../workflow/scripts/steered_generate.py"


rule table4:
    """Table 4 (Base / All-Tokens / First-Generated / CAS per model) and Figure 31 (the alpha sweep)."""
    input:
        **TABLE4_INPUTS,
    output:
        **flagged(TABLE4_OUTPUTS, {"table4_csv": "table4", "fig31_png": "fig31"}, "Steering"),
    log:
        "results/logs/table4.log",
    benchmark:
        "results/benchmarks/table4.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        models=config["steering"]["models"],
        alpha=config["steering"]["alpha"],
        table4_variants=table4_variants(config["steering"]["alpha"]),
        variants=VARIANTS,
        scorer=default_scorer(),
        judge_label=judge_label(),
        bootstrap=config["shapley"]["bootstrap_resamples"],
        seed=config["shapley"]["seed"],
        min_n_mark=config["statistics"]["min_n_mark"],
        code=code_hash("table4.py"),
    script:
        "../workflow/scripts/table4.py"

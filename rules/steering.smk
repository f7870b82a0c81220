rule steering_split:
    """Seeded calibration (directions) / test (steered reruns) split of one type, per subset."""
    input:
        samples="results/data/{conflict_type}.parquet",
    output:
        calibration="results/steering/split/{conflict_type}.calibration.parquet",
        test="results/steering/split/{conflict_type}.test.parquet",
    params:
        calibration_fraction=config["steering"]["calibration_fraction"],
        seed=config["steering"]["seed"],
        code=code_hash("steering_split.py"),
    log:
        "results/logs/steering_split/{conflict_type}.log",
    conda:
        "../envs/scipy.yaml"
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
    params:
        code=code_hash("steering_directions.py"),
    log:
        "results/logs/steering_directions/{model}.log",
    conda:
        "../envs/scipy.yaml"
    script:
        "../workflow/scripts/steering_directions.py"


rule steered_generate:
    """Every steering variant's responses to every type's test split (base:
    unsteered), one model load, each prompt prefilled once for all variants."""
    input:
        samples=expand("results/steering/split/{conflict_type}.test.parquet", conflict_type=config["conflict_types"]),
        directions=expand("results/steering/{{model}}/directions/{conflict_type}.npz", conflict_type=config["conflict_types"]),
        model="resources/models/{model}",
    output:
        expand(
            "results/responses/{{model}}@{variant}/{conflict_type}.parquet",
            variant=steering_variants(),
            conflict_type=config["conflict_types"],
        ),
    wildcard_constraints:
        model="[A-Za-z0-9][A-Za-z0-9._-]*",
    params:
        # (method, alpha, schedule) per variant: editing steering.alpha or
        # alpha_sweep reruns this job (all variants share its prefill).
        variants={
            variant: [
                *parse_variant(variant),
                variant_schedule(variant, cas_schedule=config["steering"]["cas_schedule"]),
            ]
            for variant in steering_variants()
        },
        layers=config["steering"]["layers"],
        generation=steering_generation_params(),
        # per variant, beside its responses (outputs are variant-major)
        shard_dirs=lambda wildcards, output: {
            variant: str(Path(output[k * len(config["conflict_types"])]).parent / ".shards" / "steered")
            for k, variant in enumerate(steering_variants())
        },
        code=code_hash("steered_generate.py"),
    log:
        "results/logs/steered_generate/{model}.log",
    benchmark:
        "results/benchmarks/steered_generate/{model}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    threads: torch_threads
    resources:
        gpu=config["steering"]["gpu"],
        mem_mb=16000,
    conda:
        "../envs/transformers.yaml"
    script:
        "../workflow/scripts/steered_generate.py"


rule table4:
    """Table 4 (Base / All-Tokens / First-Generated / CAS per model) and Figure 31 (the alpha sweep)."""
    input:
        unpack(steering_metric_inputs),
    output:
        **flagged(table4_outputs(), {"table4_csv": "table4", "fig31_png": "fig31"}, "Steering"),
    params:
        models=config["steering"]["models"],
        alpha=config["steering"]["alpha"],
        table4_variants=table4_variants(config["steering"]["alpha"]),
        variants={variant: list(parse_variant(variant)) for variant in steering_variants()},
        scorer=default_scorer(),
        judge=judge_label(),
        bootstrap=config["shapley"]["bootstrap_resamples"],
        seed=config["shapley"]["seed"],
        min_n_mark=config["statistics"]["min_n_mark"],
        code=code_hash("table4.py"),
    log:
        "results/logs/table4.log",
    conda:
        "../envs/scipy.yaml"
    script:
        "../workflow/scripts/table4.py"

# Inside the model: activations, probes, spectral energy, projections (Figures 2-4, 20-21, Table 8).


# One model's activations (the wildcard {model}) of ``analysis`` for every type; steering.smk reads them too.
activation_files = lambda analysis, ext: expand(
    "results/activations/{{model}}/{analysis}/{conflict_type}.{ext}",
    analysis=analysis,
    conflict_type=config["conflict_types"],
    ext=ext,
)

# One model's tables and figures; model may be "{model}".
mechanistic_outputs = lambda model: {
    "probes": f"results/mechanistic/{model}/probes.parquet",
    "spectral": f"results/mechanistic/{model}/spectral.parquet",
    "projection": f"results/mechanistic/{model}/projection.parquet",
    "subset_probes": f"results/mechanistic/{model}/subset_probes.parquet",
    "table8_md": f"results/tables/table8_{model}.md",
    "table8_csv": f"results/tables/table8_{model}.csv",
    **{
        f"fig{n}_{ext}": f"results/figures/fig{n}_{name}_{model}.{ext}"
        for n, name in ((2, "probes"), (3, "projection"), (4, "spectral"), ("20_21", "subset_probes"))
        for ext in ("png", "pdf")
    },
}


rule activations:
    """Last-token residual stream after every layer for the pair, projection
    and steering-direction prompts of every type, the model loaded once and
    each distinct prompt forwarded once."""
    input:
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
        model="resources/models/{model}",
    output:
        pairs_states=activation_files("pairs", "npy"),
        pairs_index=activation_files("pairs", "index.parquet"),
        projection_states=activation_files("projection", "npy"),
        projection_index=activation_files("projection", "index.parquet"),
        directions_states=activation_files("directions", "npy"),
        directions_index=activation_files("directions", "index.parquet"),
    log:
        "results/logs/activations/{model}.log",
    benchmark:
        "results/benchmarks/activations/{model}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/transformers.yaml"
    threads: torch_threads
    resources:
        gpu=lambda wildcards: model_gpus(wildcards.model, GPU_FOR_GENERATION),
        mem_mb=16000,
    params:
        settings=subset(config["mechanistic"], "dtype", "batch_size", "drop_last", "matched_templates"),
        templates=config["generation"]["templates"],
        code=code_hash("activations.py"),
    script:
        "../workflow/scripts/activations.py"


rule mechanistic_report:
    """Figure 2 (probes), Table 8, Figure 4 (spectral energy), Figure 3 (projections),
    Figures 20-21 (probes per subset)."""
    input:
        samples=expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
        pairs_states=activation_files("pairs", "npy"),
        pairs_index=activation_files("pairs", "index.parquet"),
        projection_states=activation_files("projection", "npy"),
        projection_index=activation_files("projection", "index.parquet"),
    output:
        **flagged(
            mechanistic_outputs("{model}"),
            {
                "table8_csv": "table8",
                "fig2_png": "fig2",
                "fig3_png": "fig3",
                "fig4_png": "fig4",
                "fig20_21_png": "fig20_21",
            },
            "Inside the model",
        ),
    log:
        "results/logs/mechanistic_report/{model}.log",
    benchmark:
        "results/benchmarks/mechanistic_report/{model}.tsv"
    conda:
        "../envs/scipy.yaml"
    params:
        settings=subset(config["mechanistic"], "cv_folds", "energy_k", "svd", "bootstrap_resamples", "seed"),
        conflict_types=config["conflict_types"],
        code=code_hash("mechanistic_report.py"),
    script:
        "../workflow/scripts/mechanistic_report.py"

rule activations:
    """Last-token residual stream after every layer, one forward per batch of prompts."""
    input:
        samples="results/data/{conflict_type}.parquet",
        model="resources/models/{model}",
    output:
        states="results/activations/{model}/{analysis}/{conflict_type}.npy",
        index="results/activations/{model}/{analysis}/{conflict_type}.index.parquet",
    wildcard_constraints:
        analysis="pairs|projection",
    params:
        settings=config["mechanistic"],
        templates=config["generation"]["templates"],
        code=library_hash("activations", "mechanistic", "prompts", "models", "packed_linear", "io"),
    log:
        "results/logs/activations/{model}/{analysis}/{conflict_type}.log",
    benchmark:
        "results/benchmarks/activations/{model}/{analysis}/{conflict_type}.tsv"
    threads: torch_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/activations.py"


rule mechanistic_report:
    """Figure 2 (probes), Table 8, Figure 4 (spectral energy), Figure 3 (projections)."""
    input:
        pairs=expand(
            "results/activations/{{model}}/pairs/{conflict_type}.{ext}",
            conflict_type=config["conflict_types"],
            ext=["npy", "index.parquet"],
        ),
        projection=expand(
            "results/activations/{{model}}/projection/{conflict_type}.{ext}",
            conflict_type=config["conflict_types"],
            ext=["npy", "index.parquet"],
        ),
    output:
        probes="results/mechanistic/{model}/probes.parquet",
        spectral="results/mechanistic/{model}/spectral.parquet",
        projection="results/mechanistic/{model}/projection.parquet",
        table8=["results/tables/table8_{model}.md", reported("results/tables/table8_{model}.csv", "table8", "Inside the model")],
        fig2=[reported("results/figures/fig2_probes_{model}.png", "fig2", "Inside the model"), "results/figures/fig2_probes_{model}.pdf"],
        fig3=[reported("results/figures/fig3_projection_{model}.png", "fig3", "Inside the model"), "results/figures/fig3_projection_{model}.pdf"],
        fig4=[reported("results/figures/fig4_spectral_{model}.png", "fig4", "Inside the model"), "results/figures/fig4_spectral_{model}.pdf"],
    params:
        settings=config["mechanistic"],
        conflict_types=config["conflict_types"],
        code=library_hash("mechanistic", "figures", "tables"),
    log:
        "results/logs/mechanistic_report/{model}.log",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/mechanistic_report.py"

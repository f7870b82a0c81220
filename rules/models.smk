rule prepare_model:
    """A configured model materialised once as a standard Hugging Face folder."""
    output:
        directory("resources/models/{model}"),
    params:
        spec=model_config,
        code=library_hash("models", "io"),
    log:
        "results/logs/prepare_model/{model}.log",
    benchmark:
        "results/benchmarks/prepare_model/{model}.tsv"
    resources:
        mem_mb=8000,
    conda:
        "../envs/models.yaml"
    script:
        "../workflow/scripts/prepare_model.py"

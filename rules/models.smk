# The registry entry of the model a prepare_model job materialises.
model_config = lambda wildcards: config["models"][wildcards.model]


rule prepare_model:
    """A configured model materialised once as a standard Hugging Face folder."""
    output:
        folder=directory("resources/models/{model}"),
    params:
        spec=model_config,
        code=code_hash("prepare_model.py"),
    log:
        "results/logs/prepare_model/{model}.log",
    benchmark:
        "results/benchmarks/prepare_model/{model}.tsv"
    resources:
        mem_mb=8000,
    conda:
        "../envs/gguf.yaml"
    script:
        "../workflow/scripts/prepare_model.py"

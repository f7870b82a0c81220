# The registry entry of the model a prepare_model job materialises.
model_config = lambda wildcards: config["models"][wildcards.model]

# A random: model is a shrunken random copy of another model's prepared folder.
random_like = lambda wildcards: (
    {"like": f"resources/models/{source.partition(':')[2]}"}
    if (source := config["models"][wildcards.model].get("source", "")).startswith("random:")
    else {}
)


rule prepare_model:
    """A configured model materialised once as a standard Hugging Face folder."""
    input:
        unpack(random_like),
    output:
        folder=directory("resources/models/{model}"),
    log:
        "results/logs/prepare_model/{model}.log",
    benchmark:
        "results/benchmarks/prepare_model/{model}.tsv"
    conda:
        "../envs/gguf.yaml"
    resources:
        mem_mb=8000,
    params:
        spec=model_config,
        code=code_hash("prepare_model.py"),
    script:
        "../workflow/scripts/prepare_model.py"


rule request_cache:
    """The endpoint request cache folder (conflictlab.lm.endpoint.RequestCache),
    created once and kept across reruns: every job that talks to a hosted model
    reads and appends to it, so no completed request is sent twice (declared as
    the judge reply cache is: rules/judges.smk)."""
    output:
        folder=update(directory(REQUEST_CACHE)),
    log:
        "results/logs/request_cache.log",
    localrule: True
    conda:
        "../envs/judges.yaml"
    params:
        code=code_hash("request_cache.py"),
    script:
        "../workflow/scripts/request_cache.py"

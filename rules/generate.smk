rule generate:
    """Responses of one generator to every subset it answers (each conflict
    type, and the shuffled-evidence subsets): the model loaded once, the
    requests of all subsets batched together."""
    input:
        samples=expand("results/data/{subset}.parquet", subset=GENERATION_SUBSETS),
        model="resources/models/{model}",
    output:
        responses=expand("results/responses/{{model}}/{subset}.parquet", subset=GENERATION_SUBSETS),
    wildcard_constraints:
        model="[A-Za-z0-9][A-Za-z0-9._-]*",  # steered reruns (name@variant) come from steered_generate
    params:
        generation=generation_params(),
        shard_dir=lambda wildcards: f"results/responses/{wildcards.model}/.shards/generate",
        code=code_hash("generate.py"),
    log:
        "results/logs/generate/{model}.log",
    benchmark:
        "results/benchmarks/generate/{model}.tsv"
    priority: CHAIN_HEAD_PRIORITY
    threads: generation_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/vllm.yaml"
    script:
        "../workflow/scripts/generate.py"

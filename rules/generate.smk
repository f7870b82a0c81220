rule generate:
    """Responses of one generator to every sample of one conflict type."""
    input:
        samples="results/data/{conflict_type}.parquet",
        model="resources/models/{model}",
    output:
        responses="results/responses/{model}/{conflict_type}.parquet",
    wildcard_constraints:
        model="[A-Za-z0-9][A-Za-z0-9._-]*",  # steered reruns (name@variant) come from steered_generate
    params:
        generation=generation_params(),
        shard_dir=lambda wildcards: f"results/responses/{wildcards.model}/.shards/{wildcards.conflict_type}",
        code=code_hash("generate.py"),
    log:
        "results/logs/generate/{model}/{conflict_type}.log",
    benchmark:
        "results/benchmarks/generate/{model}/{conflict_type}.tsv"
    threads: generation_threads
    resources:
        gpu=GPU_FOR_GENERATION,
        mem_mb=16000,
    conda:
        "../envs/vllm.yaml"
    script:
        "../workflow/scripts/generate.py"

# Each generator's responses to every subset it answers.

# What a generator answers: every configured type and the shuffled-evidence copies.
GENERATION_SUBSETS = config["conflict_types"] + [f"{t}-shuffled" for t in SHUFFLE_TYPES]

# The log of the vLLM server a job starts, where the generation backend starts one (conflictlab.lm.backends).
SERVER_LOG = {"server": "results/logs/{rule}/{{model}}.server.log"} if GENERATION_BACKEND.server else {}


# The generation settings the chosen backend reads.
GENERATION_PARAMS = subset(
    config["generation"],
    *("backend", "templates", "max_new_tokens", "max_model_len", "on_too_long", "seed", "shard_size", "dtype"),
    "repetition_penalty",
    *GENERATION_BACKEND.generation_keys,
)


rule generate:
    """Responses of one generator to every subset it answers (each conflict
    type, and the shuffled-evidence subsets): the model loaded once, the
    requests of all subsets batched together."""
    input:
        unpack(lambda wildcards: model_inputs(wildcards.model)),
        samples=expand("results/data/{subset}.parquet", subset=GENERATION_SUBSETS),
    output:
        responses=expand("results/responses/{{model}}/{subset}.parquet", subset=GENERATION_SUBSETS),
        usage="results/usage/generate/{model}.parquet",
    log:
        "results/logs/generate/{model}.log",
        **{key: path.format(rule="generate") for key, path in SERVER_LOG.items()},
        # Resumable shards (conflictlab.lm.shards), a log and not an output:
        # Snakemake deletes a failed job's outputs, which would lose them; a
        # log survives a failure, and a non-empty folder is not deleted before
        # a rerun. The job removes them once its responses are written
        # (Snakemake then leaves an empty file in their place).
        shards="results/responses/{model}/.shards/generate",
    benchmark:
        "results/benchmarks/generate/{model}.tsv"
    wildcard_constraints:
        model=MODEL_NAME_PATTERN,  # steered reruns (name@variant) come from steered_generate
    priority: CHAIN_HEAD_PRIORITY
    conda:
        "../envs/vllm.yaml"
    threads: generation_threads
    resources:
        gpu=lambda wildcards: generation_gpus(wildcards.model),
        mem_mb=16000,
    params:
        generation=lambda wildcards: vllm_gpus(GENERATION_PARAMS, generation_gpus(wildcards.model), own_key=True),
        hosted=lambda wildcards: hosted_spec(wildcards.model),
        code=code_hash("generate.py"),
    script:
        "../workflow/scripts/generate.py"

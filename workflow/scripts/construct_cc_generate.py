"""Rule construct_cc_generate: the base datasets -> ContextConflict semi-synthetic samples in the
released layout, every rejection recorded, after the request count and cost are checked."""

from conflictlab.construction.contextconflict import (
    INSTANCE_SCHEMA,
    REJECTION_SCHEMA,
    construct,
    planned_prompts,
    write_release,
)
from conflictlab.construction.models import budgeted_generator, complete
from conflictlab.io import atomic_path, write_parquet
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

params, output = snakemake.params, snakemake.output
log = configure_logging(snakemake.log[0], "construct_cc_generate")
sources, n, seed = params.sources, params.max_per_source, params.seed
conversations = [[{"role": "user", "content": p}] for p in planned_prompts(sources, n=n, seed=seed)]
with budgeted_generator(
    "construct_cc_generate",
    conversations,
    params.generator,
    model_dir=snakemake.input.get("model"),
    cache_dir=snakemake.input.get("request_cache"),
) as (backend, tokenizer):

    def generate(jobs):
        completions = complete(
            backend,
            tokenizer,
            [[{"role": "user", "content": j.prompt}] for j in jobs],
            max_new_tokens=params.generator["max_new_tokens"],
            seed=seed,
            rows=[j.key for j in jobs],
        )
        return [(c.text, c.finish_reason) for c in completions]

    instances, rejections = construct(sources, generate, n=n, seed=seed)
write_parquet(instances, output.instances, INSTANCE_SCHEMA)
write_parquet(rejections, output.rejected, REJECTION_SCHEMA)
with atomic_path(output.release, directory=True) as folder:
    written = write_release(instances, folder)
write_parquet(process_usage("construct_cc_generate"), output.usage, USAGE_SCHEMA)
log.info(
    "%d generations, %d samples written under %s, %d rejections",
    instances.num_rows,
    len(written),
    output.release,
    rejections.num_rows,
)
for row in rejections.to_pylist():
    log.warning("rejected %s %s (%s): %s", row["source"], row["record"], row["stage"], row["reason"])

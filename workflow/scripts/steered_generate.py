"""Rule steered_generate: every steering variant's responses to every type's
test split, one model load, each prompt prefilled once for all variants."""

from conflictlab.contextconflict.generation import generate_steered_subsets, variant_steering
from conflictlab.contextconflict.variants import SteeredModel
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.generation import hf_backend
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging

params, inputs = snakemake.params, snakemake.input
model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"steered_generate.{model}")
settings = params.generation
shard_dirs = dict(zip(params.variants, snakemake.log.shards, strict=True))  # the rule lists them in this order
variants = {
    name: [variant_steering(method, alpha, schedule, path, layers=params.layers) for path in inputs.directions]
    for name, (method, alpha, schedule) in params.variants.items()
}
responses = generate_steered_subsets(
    [read_tables(path) for path in inputs.samples],
    inputs.model,
    model=model,
    variants=variants,
    settings=settings,
    shard_dirs=shard_dirs,
    make_backend=lambda: hf_backend(inputs.model, settings),
)
for name, tables in responses.items():
    method, alpha, schedule = params.variants[name]
    outputs = [path for path in snakemake.output if f"/{SteeredModel(model, name).format()}/" in path]
    for samples_path, table, out in zip(inputs.samples, tables, outputs):
        write_parquet(table, out, RESPONSE_SCHEMA)
        log.info(
            "%s: %d responses (%s, alpha %s, schedule %s) -> %s",
            samples_path,
            table.num_rows,
            method,
            alpha,
            schedule,
            out,
        )
    finish_shards(shard_dirs[name])

"""Rule method_generate: one conflict-resolution method's responses to every
type's steering test split, as the pseudo-model ``{model}@{method}``."""

from conflictlab.contextconflict.generation import generate_method_subsets
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.generation import hf_backend
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging

params, inputs = snakemake.params, snakemake.input
model, method = snakemake.wildcards.model, snakemake.wildcards.method
log = configure_logging(snakemake.log[0], f"method_generate.{model}@{method}")
settings = params.generation
responses = generate_method_subsets(
    [read_tables(path) for path in inputs.samples],
    inputs.model,
    model=model,
    method=method,
    settings=settings,
    shard_dir=snakemake.log.shards,
    make_backend=lambda limit: hf_backend(inputs.model, settings),
)
for samples_path, table, out in zip(inputs.samples, responses, snakemake.output, strict=True):
    write_parquet(table, out, RESPONSE_SCHEMA)
    log.info("%s: %d responses (%s) -> %s", samples_path, table.num_rows, method, out)
finish_shards(snakemake.log.shards)

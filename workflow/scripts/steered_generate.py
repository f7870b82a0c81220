"""Rule steered_generate: one steering variant's responses to every type's test split."""

from pathlib import Path

import pyarrow.parquet as pq

from conflictlab.contextconflict.generation import generate_responses, variant_steering
from conflictlab.io import write_parquet
from conflictlab.lm.generation import HFBackend
from conflictlab.lm.loading import load
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging

params = snakemake.params
name = f"{snakemake.wildcards.model}@{snakemake.wildcards.variant}"
log = configure_logging(snakemake.log[0], f"steered_generate.{name}")
settings = params.generation
loaded = []  # one model load for every type, and none when every shard is reused


def backend(steering):
    if not loaded:
        loaded.append(load(snakemake.input.model, dtype=settings["dtype"]))
    return HFBackend(loaded[0], batch_size=settings["batch_size"], steering=steering)


directions = snakemake.input.directions or [None] * len(snakemake.output)
for samples_path, directions_path, out in zip(snakemake.input.samples, directions, snakemake.output):
    steering = variant_steering(params.method, params.alpha, params.schedule, directions_path, layers=params.layers)
    shard_dir = Path(params.shard_dir) / Path(out).stem
    responses = generate_responses(
        pq.read_table(samples_path), snakemake.input.model, model=name, settings=settings, shard_dir=shard_dir,
        make_backend=lambda limit: backend(steering), steering_key=None if steering is None else steering.key(),
    )
    write_parquet(responses, out, RESPONSE_SCHEMA)
    finish_shards(shard_dir)
    log.info("%s: %d responses (%s, alpha %s, schedule %s) -> %s", samples_path, responses.num_rows, params.method, params.alpha, params.schedule, out)

"""Rule steered_generate: one steering variant's responses to every type's test split."""

from pathlib import Path

import pyarrow.parquet as pq

from conflictlab.generation import RESPONSE_SCHEMA, finish_shards, generate_responses
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging
from conflictlab.steering import Steering, load_directions

params = snakemake.params
name = f"{snakemake.wildcards.model}@{snakemake.wildcards.variant}"
log = configure_logging(snakemake.log[0], f"steered_generate.{name}")
directions = snakemake.input.directions or [None] * len(snakemake.output)
for samples_path, directions_path, out in zip(snakemake.input.samples, directions, snakemake.output):
    steering = None
    if params.method != "base":
        vectors = load_directions(directions_path)["cas" if params.method == "cas" else "mean_difference"]
        layers = None if params.layers is None else tuple(params.layers)
        steering = Steering(vectors, params.alpha, params.schedule, layers)
    shard_dir = Path(params.shard_dir) / Path(out).stem
    samples = pq.read_table(samples_path)
    responses = generate_responses(samples, snakemake.input.model, model=name, settings=params.generation, shard_dir=shard_dir, steering=steering)
    write_parquet(responses, out, RESPONSE_SCHEMA)
    finish_shards(shard_dir)
    log.info("%s: %d responses (%s, alpha %s, schedule %s) -> %s", samples_path, responses.num_rows, params.method, params.alpha, params.schedule, out)

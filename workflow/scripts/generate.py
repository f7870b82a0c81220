"""Rule generate: samples of one conflict type -> one generator's responses."""

import pyarrow.parquet as pq

from conflictlab.contextconflict.generation import generate_responses
from conflictlab.io import write_parquet
from conflictlab.lm.backends import generation_backend
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging


def main() -> None:
    model = snakemake.wildcards.model
    log = configure_logging(snakemake.log[0], f"generate.{model}.{snakemake.wildcards.conflict_type}")
    samples = pq.read_table(snakemake.input.samples)
    log.info("read %d samples from %s", samples.num_rows, snakemake.input.samples)
    settings = snakemake.params.generation
    responses = generate_responses(
        samples,
        snakemake.input.model,
        model=model,
        settings=settings,
        shard_dir=snakemake.params.shard_dir,
        make_backend=lambda limit: generation_backend(snakemake.input.model, settings, limit=limit),
    )
    write_parquet(responses, snakemake.output.responses, RESPONSE_SCHEMA)
    finish_shards(snakemake.params.shard_dir)
    statuses = responses.column("status").value_counts().to_pylist()
    log.info("wrote %d responses to %s; status counts %s", responses.num_rows, snakemake.output.responses, statuses)


# vLLM starts its engine in a spawned process, which re-imports this module.
if __name__ == "__main__":
    main()

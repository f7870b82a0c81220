"""Rule generate: every subset's samples -> one generator's responses, one model load."""

from conflictlab.contextconflict.generation import generate_subsets
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.backends import generation_backend
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging


def main() -> None:
    model = snakemake.wildcards.model
    log = configure_logging(snakemake.log[0], f"generate.{model}")
    settings, shard_dir = snakemake.params.generation, snakemake.log.shards
    subsets = [read_tables(path) for path in snakemake.input.samples]
    responses = generate_subsets(
        subsets, snakemake.input.model, model=model, settings=settings, shard_dir=shard_dir,
        make_backend=lambda limit: generation_backend(snakemake.input.model, settings, limit=limit),
    )
    for samples_path, table, out in zip(snakemake.input.samples, responses, snakemake.output.responses):
        write_parquet(table, out, RESPONSE_SCHEMA)
        statuses = table.column("status").value_counts().to_pylist()
        log.info("%s: %d responses -> %s; status counts %s", samples_path, table.num_rows, out, statuses)
    finish_shards(shard_dir)


# vLLM starts its engine in a spawned process, which re-imports this module.
if __name__ == "__main__":
    main()

"""Rule generate: every subset's samples -> one generator's responses, one model load
(or, for a hosted model, its endpoint), and the job's endpoint usage."""

import contextlib

from conflictlab.contextconflict.generation import generate_subsets, generate_subsets_hosted
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.builders import generation_backend, hosted_backend
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.lm.shards import RESPONSE_SCHEMA, finish_shards
from conflictlab.logs import configure_logging


def main() -> None:
    model = snakemake.wildcards.model
    log = configure_logging(snakemake.log[0], f"generate.{model}")
    settings, shard_dir, hosted = snakemake.params.generation, snakemake.log.shards, snakemake.params.hosted
    subsets = [read_tables(path) for path in snakemake.input.samples]
    with contextlib.ExitStack() as stack:
        if hosted:
            backend = hosted_backend(
                hosted, stack=stack, request_cache=snakemake.input.request_cache, writer=f"generate-{model}"
            )
            responses = generate_subsets_hosted(
                subsets,
                model=model,
                identity=f"hosted:{hosted['model']}@{hosted['base_url']}",
                settings=settings,
                shard_dir=shard_dir,
                backend=backend,
            )
        else:
            server_log = snakemake.log.get("server")
            responses = generate_subsets(
                subsets,
                snakemake.input.model,
                model=model,
                settings=settings,
                shard_dir=shard_dir,
                make_backend=lambda limit: generation_backend(
                    snakemake.input.model, settings, limit=limit, stack=stack, server_log=server_log
                ),
            )
    for samples_path, table, out in zip(snakemake.input.samples, responses, snakemake.output.responses):
        write_parquet(table, out, RESPONSE_SCHEMA)
        statuses = table.column("status").value_counts().to_pylist()
        log.info("%s: %d responses -> %s; status counts %s", samples_path, table.num_rows, out, statuses)
    write_parquet(process_usage(f"generate/{model}"), snakemake.output.usage, USAGE_SCHEMA)
    finish_shards(shard_dir)


# vLLM starts its engine in a spawned process, which re-imports this module.
if __name__ == "__main__":
    main()

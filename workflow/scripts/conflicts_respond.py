"""Rule conflicts_respond: one model's Task 1 type predictions and Task 2 responses,
and the job's endpoint usage."""

import contextlib

import pyarrow.compute as pc

from conflictlab.conflicts.responses import (
    RESPONSE_SCHEMA,
    TYPE_PREDICTION_SCHEMA,
    answer_queries,
    answer_queries_hosted,
)
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.builders import hosted_backend
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging


def main() -> None:
    model, hosted, settings = snakemake.wildcards.model, snakemake.params.hosted, snakemake.params.generation
    log = configure_logging(snakemake.log[0], f"conflicts_respond.{model}")
    queries = read_tables(snakemake.input.queries).to_pylist()
    strategies = snakemake.params.strategies
    with contextlib.ExitStack() as stack:
        if hosted:
            backend = hosted_backend(
                hosted, stack=stack, request_cache=snakemake.input.request_cache, writer=f"conflicts_respond-{model}"
            )
            types, responses = answer_queries_hosted(backend, settings, queries, model=model, strategies=strategies)
        else:
            types, responses = answer_queries(
                snakemake.input.model,
                settings,
                queries,
                model=model,
                strategies=strategies,
                stack=stack,
                server_log=snakemake.log.get("server"),
            )
    write_parquet(types, snakemake.output.types, TYPE_PREDICTION_SCHEMA)
    write_parquet(responses, snakemake.output.responses, RESPONSE_SCHEMA)
    write_parquet(process_usage(f"conflicts_respond/{model}"), snakemake.output.usage, USAGE_SCHEMA)
    correct = pc.sum(pc.equal(types.column("predicted"), types.column("conflict_type"))).as_py() or 0
    log.info(
        "Task 1: %d of %d types right; Task 2 statuses %s",
        correct,
        types.num_rows,
        responses.column("status").value_counts().to_pylist(),
    )


# vLLM starts its engine in a spawned process, which re-imports this module.
if __name__ == "__main__":
    main()

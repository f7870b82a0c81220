"""Rule conflicts_respond: one model's Task 1 type predictions and Task 2 responses."""

from conflictlab.conflicts.responses import RESPONSE_SCHEMA, TYPE_PREDICTION_SCHEMA, answer_queries
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging


def main() -> None:
    model = snakemake.wildcards.model
    log = configure_logging(snakemake.log[0], f"conflicts_respond.{model}")
    queries = read_tables(snakemake.input.queries).to_pylist()
    types, responses = answer_queries(
        snakemake.input.model, snakemake.params.generation, queries, model=model, strategies=snakemake.params.strategies
    )
    write_parquet(types, snakemake.output.types, TYPE_PREDICTION_SCHEMA)
    write_parquet(responses, snakemake.output.responses, RESPONSE_SCHEMA)
    correct = sum(p == g for p, g in zip(types.column("predicted").to_pylist(), types.column("conflict_type").to_pylist()))
    log.info("Task 1: %d of %d types right; Task 2 statuses %s", correct, types.num_rows, responses.column("status").value_counts().to_pylist())


# vLLM starts its engine in a spawned process, which re-imports this module.
if __name__ == "__main__":
    main()

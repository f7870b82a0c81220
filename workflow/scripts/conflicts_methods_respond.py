"""Rule conflicts_methods_respond: one model's Vanilla responses under every conflict-resolution method (greedy
first)."""

from conflictlab.conflicts.responses import RESPONSE_SCHEMA, answer_with_methods
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.methods import MethodRun
from conflictlab.logs import configure_logging

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"conflicts_methods_respond.{model}")
queries = read_tables(snakemake.input.queries).to_pylist()
runs = {MethodRun(model, method).format(): method for method in params.methods}
responses = answer_with_methods(snakemake.input.model, params.generation, queries, runs)
write_parquet(responses, snakemake.output.responses, RESPONSE_SCHEMA)
log.info(
    "%d responses under %s; statuses %s",
    responses.num_rows,
    ", ".join(params.methods),
    responses.column("status").value_counts().to_pylist(),
)

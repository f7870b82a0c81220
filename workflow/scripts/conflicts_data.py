"""Rule conflicts_data: conflicts.jsonl -> one Parquet table of queries (and the rejections)."""

from conflictlab.conflicts.dataset import QUERY_SCHEMA, REJECTION_SCHEMA, read_conflicts, sample_queries
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "conflicts_data")
options, path = snakemake.params.options, snakemake.input.queries
queries, rejected = read_conflicts(path, on_error=options["on_error"], check_release=options["check_release"])
kept = sample_queries(queries, options["max_per_category"], seed=options["seed"])
write_parquet(kept, snakemake.output.queries, QUERY_SCHEMA)
write_parquet(rejected, snakemake.output.rejected, REJECTION_SCHEMA)
counts = kept.column("conflict_type").value_counts().to_pylist()
log.info(
    "read %d queries from %s, kept %d (%s), rejected %d",
    queries.num_rows,
    path,
    kept.num_rows,
    counts,
    rejected.num_rows,
)
for row in rejected.to_pylist():
    log.warning("rejected line %d: %s: %s", row["query_id"], row["field"], row["reason"])

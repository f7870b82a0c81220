"""Rule conflictbank_data: ConflictBank QA records -> one Parquet table (and the rejections)."""

import pyarrow.compute as pc

from conflictlab.conflictbank.dataset import RECORD_SCHEMA, REJECTION_SCHEMA, build_records
from conflictlab.conflictbank.source import configured_records
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

data = snakemake.params.data
log = configure_logging(snakemake.log[0], "conflictbank_data")
source, records = configured_records(data)
log.info("reading ConflictBank records from %s", source)
build = build_records(
    records, source=source, on_error=data["on_error"], max_per_relation=data.get("max_per_relation"), seed=data["seed"]
)
table, rejected = build.tables()
write_parquet(table, snakemake.output.records, RECORD_SCHEMA)
write_parquet(rejected, snakemake.output.rejected, REJECTION_SCHEMA)
log.info(
    "wrote %d records over %d relations, rejected %d",
    table.num_rows,
    pc.count_distinct(table.column("relation")).as_py(),
    rejected.num_rows,
)
for row in build.rejections:
    log.warning("rejected record %d: %s: %s", row["record_id"], row["field"], row["reason"])

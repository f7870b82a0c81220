"""Rule construct_conflictbank: the constructed QA pairs read by the existing ConflictBank loader
(on_error fail), written as the table rule conflictbank_data makes from a released file."""

import pyarrow.compute as pc

from conflictlab.conflictbank.dataset import RECORD_SCHEMA, build_records, read_jsonl
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "construct_cb_check")
table, _ = build_records(read_jsonl(snakemake.input.qa), source=snakemake.input.qa, on_error="fail").tables()
write_parquet(table, snakemake.output.records, RECORD_SCHEMA)
relations = pc.count_distinct(table.column("relation")).as_py() if table.num_rows else 0
log.info("the ConflictBank loader accepted all %d constructed QA pairs (%d relations)", table.num_rows, relations)

"""Rule nq_swap_data: NQ-Swap records -> one Parquet table (and the rejections)."""

from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging
from conflictlab.nq_swap.dataset import ITEM_SCHEMA, REJECTION_SCHEMA, build_items
from conflictlab.nq_swap.source import configured_records

data = snakemake.params.data
log = configure_logging(snakemake.log[0], "nq_swap_data")
source, records = configured_records(data)
log.info("reading NQ-Swap records from %s", source)
build = build_items(records, source=source, on_error=data["on_error"], max_items=data["max_items"], seed=data["seed"])
items, rejected = build.tables()
write_parquet(items, snakemake.output.data, ITEM_SCHEMA)
write_parquet(rejected, snakemake.output.rejected, REJECTION_SCHEMA)
log.info("wrote %d items, rejected %d", items.num_rows, rejected.num_rows)
for row in build.rejections:
    log.warning("rejected row %d: %s: %s", row["row"], row["field"], row["reason"])

"""Rule memotrap_data: the released MemoTrap CSV files -> one Parquet table (conflictlab.memotrap.dataset)."""

from pathlib import Path

from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging, value_counts
from conflictlab.memotrap.dataset import ITEM_SCHEMA, load

log = configure_logging(snakemake.log[0], "memotrap_data")
# the inputs are <root>/<file>.csv, one per configured file, in that order
table = load(Path(snakemake.input[0]).parent, snakemake.params.files)
write_parquet(table, snakemake.output.prompts, ITEM_SCHEMA)
log.info("read %s; prompts per file: %s", ", ".join(snakemake.input), value_counts(table["file"]))

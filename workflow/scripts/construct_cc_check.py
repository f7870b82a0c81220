"""Rule construct_contextconflict: the constructed samples read by the existing ContextConflict loader
(on_error fail), one table over every constructed subset present."""

from pathlib import Path

import pyarrow as pa

from conflictlab.contextconflict.dataset import SAMPLE_SCHEMA, load_released
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "construct_cc_check")
root = Path(snakemake.input.release)
tables = []
for conflict_type, subsets in snakemake.params.subsets.items():
    present = [s for s in subsets if (root / f"{conflict_type}_conflict" / s).is_dir()]
    if present:
        table, _ = load_released(root, conflict_type, subsets=present, on_error="fail").tables()
        tables.append(table)
        log.info("%s: the loader accepted %d samples of %s", conflict_type, table.num_rows, ", ".join(present))
write_parquet(
    pa.concat_tables(tables) if tables else SAMPLE_SCHEMA.empty_table(), snakemake.output.samples, SAMPLE_SCHEMA
)

"""Rule attributions: coalition values -> Shapley values, shares and Balance per sample."""

import pyarrow.compute as pc

from conflictlab.contextconflict.balance import ATTRIBUTION_SCHEMA, attributions
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], f"attributions.{snakemake.wildcards.model}.{snakemake.wildcards.scorer}")
table = attributions(
    read_tables(snakemake.input.values),
    read_tables(snakemake.input.samples),
    model=snakemake.wildcards.model,
)
write_parquet(table, snakemake.output.attributions, ATTRIBUTION_SCHEMA)
undefined = pc.sum(table.column("undefined")).as_py() or 0
log.info("%d samples attributed, %d with undefined shares (every phi <= 0)", table.num_rows, undefined)

"""Rule causal_intervention: Table 3 rows for one generator."""

from conflictlab.contextconflict.causal import CAUSAL_SCHEMA, causal_intervention
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

model_name = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"causal_intervention.{model_name}")
lm = load(snakemake.input.model, dtype=snakemake.params.dtype)
table = causal_intervention(
    read_tables(snakemake.input.attributions),
    read_tables(snakemake.input.samples),
    read_tables(snakemake.input.responses),
    lm,
    model_name=model_name,
)
write_parquet(table, snakemake.output.causal, CAUSAL_SCHEMA)
log.info("%d samples intervened on", table.num_rows)

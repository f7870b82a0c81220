"""Rule causal_intervention: Table 3 rows for one generator."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.balance import CAUSAL_SCHEMA, causal_intervention
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging
from conflictlab.models import load_model

model_name = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"causal_intervention.{model_name}")
model, tokenizer = load_model(snakemake.input.model, dtype=snakemake.params.settings["dtype"])
table = causal_intervention(
    pq.read_table(snakemake.input.attributions),
    pa.concat_tables(pq.read_table(p) for p in snakemake.input.samples),
    pa.concat_tables(pq.read_table(p) for p in snakemake.input.responses),
    model,
    tokenizer,
    model_name=model_name,
)
write_parquet(table, snakemake.output[0], CAUSAL_SCHEMA)
log.info("%d samples intervened on", table.num_rows)

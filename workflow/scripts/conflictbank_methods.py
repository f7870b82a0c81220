"""Rule conflictbank_methods: one model's A-D read-out under every conflict-resolution method
(greedy first, also in the settings that fix the scored subset)."""

import pyarrow as pa

from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA, read_out_with_method
from conflictlab.conflictbank.prompts import METHOD_SETTINGS, SUBSET_SETTINGS, settings_named
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.methods import GREEDY, MethodRun
from conflictlab.logs import configure_logging

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"conflictbank_methods.{model}")
records = read_tables(snakemake.input.records)
lm = load(snakemake.input.model, dtype=params.options["dtype"])
tables = []
for method in params.methods:
    settings = settings_named((*SUBSET_SETTINGS, *METHOD_SETTINGS) if method == GREEDY else METHOD_SETTINGS)
    name = MethodRun(model, method).format()
    tables.append(read_out_with_method(lm, records, settings, method, model_name=name, batch_size=params.options["batch_size"]))
    log.info("%s: %d records x %d settings", name, records.num_rows, len(settings))
write_parquet(pa.concat_tables(tables), snakemake.output.predictions, PREDICTION_SCHEMA)

"""Rule conflictbank_methods: one model's A-D read-out under every conflict-resolution method
(greedy first, also in the settings that fix the scored subset)."""

import pyarrow as pa

from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA, read_out_with_methods
from conflictlab.conflictbank.prompts import METHOD_SETTINGS, SUBSET_SETTINGS, settings_named
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.methods import GREEDY, MethodRun
from conflictlab.logs import configure_logging

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"conflictbank_methods.{model}")
records = read_tables(snakemake.input.records)
lm = load(snakemake.input.model, dtype=params.options["dtype"])
names = [MethodRun(model, method).format() for method in params.methods]
options = {"model_names": names, "batch_size": params.options["batch_size"]}
tables = read_out_with_methods(lm, records, settings_named(METHOD_SETTINGS), params.methods, **options)
greedy = MethodRun(model, GREEDY).format()
tables += read_out_with_methods(
    lm, records, settings_named(SUBSET_SETTINGS), [GREEDY], **{**options, "model_names": [greedy]}
)
write_parquet(pa.concat_tables(tables), snakemake.output.predictions, PREDICTION_SCHEMA)
log.info(
    "%d records x %d settings x %d methods (%s), and greedy in %s",
    records.num_rows,
    len(METHOD_SETTINGS),
    len(params.methods),
    ", ".join(params.methods),
    ", ".join(SUBSET_SETTINGS),
)

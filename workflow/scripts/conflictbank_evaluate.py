"""Rules conflictbank_evaluate and conflictbank_embedded_evaluate: one model's
A-D read-out on every record under each configured setting."""

from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA, read_out
from conflictlab.conflictbank.prompts import settings_named
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

name = snakemake.params.name
log = configure_logging(snakemake.log[0], f"conflictbank_evaluate.{name}")
options = snakemake.params.options
records = read_tables(snakemake.input.records)
settings = settings_named(options["settings"])
lm = load(snakemake.input.model, dtype=options["dtype"])
predictions = read_out(lm, records, settings, model_name=name, batch_size=options["batch_size"])
write_parquet(predictions, snakemake.output.predictions, PREDICTION_SCHEMA)
log.info("%d records x %d settings read out", records.num_rows, len(settings))

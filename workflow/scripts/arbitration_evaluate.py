"""Rule arbitration_evaluate: one model's A/B read-out on every arbitration prompt."""

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA, evaluate_instances
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

name = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"arbitration_evaluate.{name}")
settings = snakemake.params.settings
lm = load(snakemake.input.model, dtype=settings["dtype"])
instances = read_tables([snakemake.input.main, snakemake.input.sensitivity])
predictions = evaluate_instances(lm, instances, model_name=name, batch_size=settings["batch_size"])
write_parquet(predictions, snakemake.output.predictions, PREDICTION_SCHEMA)
log.info("%d prompts read out, accuracy %.3f", predictions.num_rows, sum(predictions.column("correct").to_pylist()) / max(predictions.num_rows, 1))

"""Rule arbitration_methods: one model's A/B read-out of the main instances under every conflict-resolution method (greedy first)."""

import pyarrow as pa

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA, evaluate_instances
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.methods import MethodRun
from conflictlab.logs import configure_logging

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"arbitration_methods.{model}")
instances = read_tables(snakemake.input.main)
lm = load(snakemake.input.model, dtype=params.settings["dtype"])
tables = [
    evaluate_instances(lm, instances, model_name=MethodRun(model, method).format(), batch_size=params.settings["batch_size"], method=method)
    for method in params.methods
]
write_parquet(pa.concat_tables(tables), snakemake.output.predictions, PREDICTION_SCHEMA)
log.info("%d instances x %d methods (%s)", instances.num_rows, len(params.methods), ", ".join(params.methods))

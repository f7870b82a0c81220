"""Rule arbitration_methods: one model's A/B read-out of the main instances' conflict prompts under every
conflict-resolution method (greedy first)."""

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA, evaluate_with_methods
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.methods import MethodRun
from conflictlab.logs import configure_logging

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"arbitration_methods.{model}")
instances = read_tables(snakemake.input.main)
# The methods table reads the conflict prompts only (conflictlab.arbitration.methods): the unimodal references are not
# read out.
instances = instances.filter(pc.equal(instances["condition"], "conflict"))
lm = load(snakemake.input.model, dtype=params.settings["dtype"])
names = [MethodRun(model, method).format() for method in params.methods]
tables = evaluate_with_methods(
    lm, instances, params.methods, model_names=names, batch_size=params.settings["batch_size"]
)
write_parquet(pa.concat_tables(tables), snakemake.output.predictions, PREDICTION_SCHEMA)
log.info("%d conflict prompts x %d methods (%s)", instances.num_rows, len(params.methods), ", ".join(params.methods))

"""Rule arbitration_evaluate: one model's A/B read-out on every arbitration prompt,
and the job's endpoint usage."""

import pyarrow.compute as pc

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA, evaluate_instances, evaluate_instances_hosted
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

name, hosted = snakemake.wildcards.model, snakemake.params.hosted
log = configure_logging(snakemake.log[0], f"arbitration_evaluate.{name}")
settings = snakemake.params.settings
instances = read_tables([snakemake.input.main, snakemake.input.sensitivity])
if hosted:
    from conflictlab.lm.chat import ChatBackend, hosted_client

    with hosted_client(
        hosted, cache_dir=snakemake.input.request_cache, writer=f"arbitration_evaluate-{name}"
    ) as client:
        predictions = evaluate_instances_hosted(ChatBackend(client), instances, model_name=name)
else:
    from conflictlab.lm.loading import load

    lm = load(snakemake.input.model, dtype=settings["dtype"])
    predictions = evaluate_instances(lm, instances, model_name=name, batch_size=settings["batch_size"])
write_parquet(predictions, snakemake.output.predictions, PREDICTION_SCHEMA)
write_parquet(process_usage(f"arbitration_evaluate/{name}"), snakemake.output.usage, USAGE_SCHEMA)
log.info(
    "%d prompts read out, accuracy %.3f; read-outs %s",
    predictions.num_rows,
    (pc.sum(predictions.column("correct")).as_py() or 0) / max(predictions.num_rows, 1),
    predictions.column("read_out").value_counts().to_pylist(),
)

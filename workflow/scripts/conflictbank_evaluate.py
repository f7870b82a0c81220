"""Rules conflictbank_evaluate and conflictbank_embedded_evaluate: one model's
A-D read-out on every record under each configured setting (and, for the
first, the job's endpoint usage)."""

from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA, read_out, read_out_hosted
from conflictlab.conflictbank.prompts import settings_named
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging

name = snakemake.params.name
log = configure_logging(snakemake.log[0], f"conflictbank_evaluate.{name}")
options = snakemake.params.options
records = read_tables(snakemake.input.records)
settings = settings_named(options["settings"])
hosted = snakemake.params.get("hosted")
if hosted:
    from conflictlab.lm.chat import ChatBackend, hosted_client

    with hosted_client(
        hosted, cache_dir=snakemake.input.request_cache, writer=f"conflictbank_evaluate-{name}"
    ) as client:
        predictions = read_out_hosted(ChatBackend(client), records, settings, model_name=name)
else:
    from conflictlab.lm.loading import load

    lm = load(snakemake.input.model, dtype=options["dtype"])
    predictions = read_out(lm, records, settings, model_name=name, batch_size=options["batch_size"])
write_parquet(predictions, snakemake.output.predictions, PREDICTION_SCHEMA)
if "usage" in snakemake.output.keys():
    from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage

    write_parquet(process_usage(f"conflictbank_evaluate/{name}"), snakemake.output.usage, USAGE_SCHEMA)
log.info(
    "%d records x %d settings read out; read-outs %s",
    records.num_rows,
    len(settings),
    predictions.column("read_out").value_counts().to_pylist(),
)

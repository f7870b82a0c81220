"""Rule accuracy: one generator's reasoning responses -> correctness and CIs."""

import pyarrow as pa

from conflictlab.contextconflict.accuracy import ACCURACY_SCHEMA, SUMMARY_SCHEMA, score_responses, summarize_accuracy
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"accuracy.{model}")

judged = None
if "matches" in snakemake.input.keys():
    judged = {r["sample_id"]: r["equivalent"] for r in read_tables(snakemake.input.matches).to_pylist()}
per_sample = pa.concat_tables(
    score_responses(read_tables(samples), read_tables(responses), model, judged=judged)
    for samples, responses in zip(snakemake.input.samples, snakemake.input.responses)
)
summary = summarize_accuracy(per_sample)
write_parquet(per_sample, snakemake.output.per_sample, ACCURACY_SCHEMA)
write_parquet(summary, snakemake.output.summary, SUMMARY_SCHEMA)
log.info(
    "%d samples scored, %d correct, %d without an <answer> tag, %d not generated",
    per_sample.num_rows,
    sum(per_sample.column("correct").to_pylist()),
    sum(not t for t in per_sample.column("tag_found").to_pylist()),
    sum(s != "ok" for s in per_sample.column("status").to_pylist()),
)

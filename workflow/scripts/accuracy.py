"""Rule accuracy: one generator's reasoning responses -> correctness and CIs."""

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.contextconflict.accuracy import ACCURACY_SCHEMA, SUMMARY_SCHEMA, score_responses, summarize_accuracy
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"accuracy.{model}")

judged = None
if "matches" in snakemake.input.keys():
    matches = read_tables(snakemake.input.matches, columns=["sample_id", "equivalent"])
    judged = dict(
        zip(*(matches.column(name).to_pylist() for name in ("sample_id", "equivalent")))
    )  # a lookup, one per long free-text gold
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
    pc.sum(per_sample.column("correct")).as_py() or 0,
    pc.sum(pc.invert(per_sample.column("tag_found"))).as_py() or 0,
    pc.sum(pc.not_equal(per_sample.column("status"), "ok")).as_py() or 0,
)

"""Rule construct_cb_quality: generated evidence -> each text kept or the quality control it failed
(refusal filter, NLI entailment and conflict confirmation by the configured judge)."""

import polars as pl

from conflictlab.construction import write_frame
from conflictlab.construction.conflictbank import quality_controls
from conflictlab.judges.backends import judge_session
from conflictlab.logs import configure_logging

params, inputs = snakemake.params, snakemake.input
log = configure_logging(snakemake.log[0], "construct_cb_quality")
evidence = pl.read_parquet(inputs.evidence)
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer="construct_cb_quality",
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    checked = quality_controls(evidence, session.ask, checks=params.checks)
write_frame(checked, snakemake.output.checked)
for status, n in checked.group_by("status").len().sort("status").iter_rows():
    log.info("%s: %d", status, n)

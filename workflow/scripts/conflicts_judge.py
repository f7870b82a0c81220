"""Rule conflicts_judge: expected behaviour, answer recall and grounding of every CONFLICTS response."""

from conflictlab.conflicts.judging import JUDGED_SCHEMA, judge_responses
from conflictlab.io import read_tables, write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "conflicts_judge")
params, inputs = snakemake.params, snakemake.input
queries = read_tables(inputs.queries).to_pylist()
responses = read_tables([*inputs.responses, *inputs.methods]).to_pylist()
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer="conflicts",
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    table = judge_responses(queries, responses, session.ask, judge=session.cache.judge)
write_parquet(table, snakemake.output.judged, JUDGED_SCHEMA)
write_parquet(process_usage("judges/conflicts"), snakemake.output.usage, USAGE_SCHEMA)
for column in ("behaviour_status", "recall_status", "grounding_status"):
    log.info("%s: %s", column, table.column(column).value_counts().to_pylist())

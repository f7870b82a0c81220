"""Rule answer_match: the judge decides the long free-text golds of every judged model's reasoning responses."""

import pyarrow.compute as pc

from conflictlab.contextconflict.answer_match import ANSWER_MATCH_SCHEMA, judged_answer_matches
from conflictlab.io import read_tables, write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "answer_match")
params, inputs, outputs = snakemake.params, snakemake.input, snakemake.output
groups = [
    (model, read_tables(samples).to_pylist(), read_tables(responses).to_pylist())
    for model, samples, responses in zip(params.models, inputs.samples, inputs.responses)
]
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer="answer_match",  # the cache files of this job: answer_match-<digest>.parquet
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    table = judged_answer_matches(groups, session.ask, judge=session.cache.judge)
for model, path in zip(params.judged, outputs.matches, strict=True):
    matches = table.filter(pc.equal(table.column("model"), model))
    write_parquet(matches, path, ANSWER_MATCH_SCHEMA)
    log.info(
        "%s: %d long free-text answers judged, %d equivalent",
        model,
        matches.num_rows,
        pc.sum(pc.fill_null(matches.column("equivalent"), False)).as_py() or 0,
    )
write_parquet(process_usage("judges/answer_match"), outputs.usage, USAGE_SCHEMA)

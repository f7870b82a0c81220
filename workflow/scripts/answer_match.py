"""Rule answer_match: the judge decides long free-text golds of one generator's reasoning responses."""

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.contextconflict.answer_match import ANSWER_MATCH_SCHEMA, judged_answer_matches
from conflictlab.io import read_tables, write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"answer_match.{model}")
params, inputs = snakemake.params, snakemake.input
writer = f"answer_match-{model}"  # the cache files of this job: answer_match-<model>-<digest>.parquet
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer=writer,
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    table = pa.concat_tables(
        judged_answer_matches(
            read_tables(s).to_pylist(), read_tables(r).to_pylist(), session.ask, model=model, judge=session.cache.judge
        )
        for s, r in zip(inputs.samples, inputs.responses)
    )
write_parquet(table, snakemake.output.matches, ANSWER_MATCH_SCHEMA)
write_parquet(process_usage(f"judges/{writer}"), snakemake.output.usage, USAGE_SCHEMA)
log.info(
    "%d long free-text answers judged, %d equivalent",
    table.num_rows,
    pc.sum(pc.fill_null(table.column("equivalent"), False)).as_py() or 0,
)

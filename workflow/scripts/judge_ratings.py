"""Rule judge_ratings: the judge's 1-5 rating of every evidence piece of every generator's summarization responses."""

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.io import read_tables, write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.judges.ratings import RATING_SCHEMA, judge_rating_rows
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging, value_counts

log = configure_logging(snakemake.log[0], "judge_ratings")
params, inputs = snakemake.params, snakemake.input
tables = []
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer="ratings",
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    for model, samples_path, responses_path in zip(params.models, inputs.samples, inputs.responses):
        samples, responses = read_tables(samples_path).to_pylist(), read_tables(responses_path).to_pylist()
        tables.append(judge_rating_rows(samples, responses, session.ask, model=model, judge=session.cache.judge))
table = pa.concat_tables(tables)
write_parquet(table, snakemake.output.ratings, RATING_SCHEMA)
write_parquet(process_usage("judges/ratings"), snakemake.output.usage, USAGE_SCHEMA)
undefined = pc.sum(pc.and_(pc.equal(table.column("status"), "ok"), pc.is_null(table.column("balance")))).as_py() or 0
log.info(
    "%d samples rated: %s; %d with every rating 1 (judge Balance undefined)",
    table.num_rows,
    value_counts(table.column("status")),
    undefined,
)

"""Rule conflicts_judge: expected behaviour, answer recall and grounding of every CONFLICTS response."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.conflicts.judging import JUDGED_SCHEMA, judge_responses
from conflictlab.io import write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "conflicts_judge")
params, inputs = snakemake.params, snakemake.input
queries = pq.read_table(inputs.queries).to_pylist()
responses = pa.concat_tables(pq.read_table(path) for path in inputs.responses).to_pylist()
with judge_session(params.judge, inputs.get("judge_model"), cache_dir=params.cache, writer="conflicts", server_log=params.server_log) as session:
    table = judge_responses(queries, responses, session.ask, judge=session.cache.judge)
write_parquet(table, snakemake.output.judged, JUDGED_SCHEMA)
for column in ("behaviour_status", "recall_status", "grounding_status"):
    log.info("%s: %s", column, table.column(column).value_counts().to_pylist())

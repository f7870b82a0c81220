"""Rule judge_faithfulness: RAGAS Faithfulness of every response (base and steered) under the configured judge."""

from conflictlab.io import read_tables, write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.judges.faithfulness import FAITHFULNESS_SCHEMA, faithfulness_rows, first_by_id
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging, value_counts

log = configure_logging(snakemake.log[0], "judge_faithfulness")
params, inputs = snakemake.params, snakemake.input
groups = [
    (model, first_by_id(read_tables(samples).to_pylist(), params.max_per_type), read_tables(responses).to_pylist())
    for model, samples, responses in zip(params.models, inputs.samples, inputs.responses)
]
with judge_session(
    params.judge_settings,
    inputs.get("judge_model"),
    cache_dir=inputs.cache,
    writer="faithfulness",
    server_log=snakemake.log.get("server"),
    request_cache=inputs.get("request_cache"),
) as session:
    table = faithfulness_rows(
        groups, session.ask, judge=session.cache.judge, max_statement_tokens=params.max_statement_tokens
    )
write_parquet(table, snakemake.output.faithfulness, FAITHFULNESS_SCHEMA)
write_parquet(process_usage("judges/faithfulness"), snakemake.output.usage, USAGE_SCHEMA)
log.info("%d responses judged: %s", table.num_rows, value_counts(table.column("status")))

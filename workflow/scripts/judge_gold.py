"""Rule judge_gold: the configured judge's labels on the team-written gold set."""

from conflictlab.conflicts.gold import GOLD_KINDS as CONFLICTS_GOLD_KINDS
from conflictlab.io import write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.judges.gold import GOLD_KINDS, GOLD_SCHEMA, judge_gold, read_gold
from conflictlab.lm.endpoint import USAGE_SCHEMA, process_usage
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "judge_gold")
params = snakemake.params
kinds = {**GOLD_KINDS, **CONFLICTS_GOLD_KINDS}
items = read_gold(snakemake.input.gold, kinds)
with judge_session(
    params.judge_settings,
    snakemake.input.get("judge_model"),
    cache_dir=snakemake.input.cache,
    writer="gold",
    server_log=snakemake.log.get("server"),
    request_cache=snakemake.input.get("request_cache"),
) as session:
    table = judge_gold(items, session.ask, judge=session.cache.judge, kinds=kinds)
write_parquet(table, snakemake.output.judged, GOLD_SCHEMA)
write_parquet(process_usage("judges/gold"), snakemake.output.usage, USAGE_SCHEMA)
log.info("%d gold items judged", table.num_rows)

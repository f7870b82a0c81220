"""Rule judge_gold: the configured judge's labels on the team-written gold set."""

from conflictlab.io import write_parquet
from conflictlab.judges.backends import judge_session
from conflictlab.judges.gold import GOLD_SCHEMA, judge_gold, read_gold
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "judge_gold")
params = snakemake.params
items = read_gold(snakemake.input.gold)
with judge_session(params.judge, snakemake.input.get("judge_model"), cache_dir=params.cache, writer="gold", server_log=params.server_log) as session:
    table = judge_gold(items, session.ask, judge=session.cache.judge)
write_parquet(table, snakemake.output.judged, GOLD_SCHEMA)
log.info("%d gold items judged", table.num_rows)

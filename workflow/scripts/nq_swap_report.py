"""Rule nq_swap_report: the NQ-Swap table (md, csv), its figure and the per-answer scores."""

from pathlib import Path

from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging
from conflictlab.nq_swap import report
from conflictlab.nq_swap.metrics import SCORE_SCHEMA, score_responses
from conflictlab.nq_swap.steering import run_name
from conflictlab.report.figures import save
from conflictlab.report.tables import write_csv, write_text

params, out = snakemake.params, snakemake.output
log = configure_logging(snakemake.log[0], "nq_swap_report")
items = read_tables(snakemake.input.data)
scores = score_responses(items, read_tables(snakemake.input.responses))
write_parquet(scores, out.scores, SCORE_SCHEMA)
table = report.paired_cells(scores, min_n=params.min_n_mark, seed=params.seed)
steering = run_name(params.steering["alpha"]) if params.steering else None
caption = report.caption(items.num_rows, params.methods, steering)
write_text(report.markdown(table, caption_text=caption, min_n=params.min_n_mark), out.md)
write_csv(table, out.csv)
save(report.figure(table), Path(out.png).with_suffix(""))
log.info("%d answers scored, %d cells", scores.num_rows, table.num_rows)

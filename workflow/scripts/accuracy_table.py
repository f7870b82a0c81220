"""Rule accuracy_table: every generator's accuracy summary (with its judged Faithfulness) -> Markdown and CSV."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.judges.faithfulness import join_faithfulness, summarize_faithfulness
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "accuracy_table")
params = snakemake.params
table = pa.concat_tables(pq.read_table(path) for path in snakemake.input.summaries)
caption = "Accuracy on reasoning conflicts (bootstrap 95% CI; missing_tag_rate among generated responses)."
if "faithfulness" in snakemake.input.keys():
    judged = summarize_faithfulness(pq.read_table(snakemake.input.faithfulness), n_resamples=params.bootstrap, seed=params.seed)
    table = join_faithfulness(table, judged, where=lambda row: row["level"] == "type")
    caption += f" Faithfulness (RAGAS, judge {params.judge}) on type rows, over the judged samples; fth_nan_rate: share without a score."
write_markdown_and_csv(table, snakemake.output.md, snakemake.output.csv, caption=caption)
log.info("wrote %d rows to %s and %s", table.num_rows, snakemake.output.md, snakemake.output.csv)

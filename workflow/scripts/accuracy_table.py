"""Rule accuracy_table: every generator's accuracy summary -> Markdown and CSV."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "accuracy_table")
table = pa.concat_tables(pq.read_table(path) for path in snakemake.input.summaries)
write_markdown_and_csv(
    table,
    snakemake.output.md,
    snakemake.output.csv,
    caption="Accuracy on reasoning conflicts (bootstrap 95% CI; missing_tag_rate among generated responses).",
)
log.info("wrote %d rows to %s and %s", table.num_rows, snakemake.output.md, snakemake.output.csv)

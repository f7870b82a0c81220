"""Rule usage_table: the endpoint usage of every job, summed, with its cost."""

from conflictlab.io import read_tables
from conflictlab.lm.endpoint import USAGE_SCHEMA
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.report.usage import usage_summary

log = configure_logging(snakemake.log[0], "usage_table")
summary = usage_summary(read_tables(snakemake.input.usage, schema=USAGE_SCHEMA), snakemake.params.prices)
write_markdown_and_csv(
    summary,
    snakemake.output.md,
    snakemake.output.csv,
    caption="Endpoint usage per job: requests asked, answered from the request cache, HTTP attempts sent, answered, "
    "retried and "
    "given up, and the endpoint's token counts; cost in US dollars at the config's prices (models.*.prices; empty: no "
    "price). "
    "Jobs that ran local models send nothing and have no rows.",
)
log.info(
    "%d jobs with endpoint usage; total %s", summary.num_rows - 1, summary.slice(summary.num_rows - 1).to_pylist()[0]
)  # the total row

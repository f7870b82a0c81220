"""Rule memotrap_report: the MemoTrap accuracy table (conflictlab.memotrap.tables)."""

from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.memotrap.scoring import SCORE_SCHEMA
from conflictlab.memotrap.tables import accuracy_table, write_accuracy_table

log = configure_logging(snakemake.log[0], "memotrap_report")
table = accuracy_table(read_tables(snakemake.input.scores, schema=SCORE_SCHEMA))
write_accuracy_table(table, snakemake.output.accuracy_md, snakemake.output.accuracy_csv)
for row in table.to_pylist():
    log.info("%s %s %s: %d of %d", row["model"], row["method"], row["file"], row["correct"], row["n"])

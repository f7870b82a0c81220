"""Rule reproduction_plan: what this config can compare, from the config alone (no model, no table)."""

from conflictlab import paper_registries
from conflictlab.logs import configure_logging
from conflictlab.report import reproduction
from conflictlab.report.tables import write_text

log = configure_logging(snakemake.log[0], "reproduction_plan")
params = snakemake.params
registries = paper_registries.load(snakemake.input.papers)

rows = reproduction.plan(
    [number for registry in registries for number in registry.numbers],
    [claim for registry in registries for claim in registry.claims],
    tables_made=params.tables,
    model_lists=params.model_lists,
    sources=params.sources,
    instruments=params.instruments,
    margins=params.margins,
    caps={stem: tuple(cap) for stem, cap in params.caps.items()},
)
write_text(reproduction.csv_text(rows, reproduction.PLAN_CSV_COLUMNS), snakemake.output.csv)
for line in reproduction.plan_summary(rows):
    log.info("%s", line)
    print(line)

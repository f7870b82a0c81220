"""Rule reproduction: each paper's numbers and claims beside this run's (CSV, Markdown and HTML)."""

from conflictlab import paper_registries
from conflictlab.logs import configure_logging
from conflictlab.report import reproduction
from conflictlab.report.profile import read_table_rows
from conflictlab.report.tables import write_text

log = configure_logging(snakemake.log[0], "reproduction")
params, out = snakemake.params, snakemake.output

# the papers' data files are the rule's inputs (an edit reruns it), checked as they are read
registries = paper_registries.load(snakemake.input.papers)
papers = [registry.paper for registry in registries]
tables = {stem: read_table_rows(path) for stem, path in snakemake.input.items() if stem != "papers"}
log.info("read %d tables: %s", len(tables), ", ".join(tables))
context = dict(tables=tables, model_lists=params.model_lists, sources=params.sources, instruments=params.instruments)
rows = reproduction.compare_all(
    [number for registry in registries for number in registry.numbers], margins=params.margins, **context
)
claims = reproduction.evaluate_claims(
    [claim for registry in registries for claim in registry.claims],
    reproduction.ClaimContext(rows={(r["paper"], r["key"]): r for r in rows}, **context),
)
exclusions = [exclusion for registry in registries for exclusion in registry.exclusions]
run = reproduction.describe_run(params.model_lists, params.instruments)
write_text(reproduction.csv_text(rows, reproduction.CSV_COLUMNS), out.csv)
write_text(reproduction.csv_text(claims, reproduction.CLAIM_CSV_COLUMNS), out.claims_csv)
write_text(reproduction.render_markdown(papers, rows, run=run, claims=claims, exclusions=exclusions), out.md)
write_text(reproduction.render_html(papers, rows, run=run, claims=claims, exclusions=exclusions), out.html)
for paper in papers:
    mine = [r for r in rows if r["paper"] == paper.key]
    log.info("%s: %s", paper.key, reproduction.summary_line(mine, [c for c in claims if c["paper"] == paper.key]))

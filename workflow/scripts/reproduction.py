"""Rule reproduction: each paper's headline numbers beside this run's (Markdown and HTML)."""

from conflictlab.arbitration import paper_numbers as arbitration
from conflictlab.conflictbank import paper_numbers as conflictbank
from conflictlab.conflicts import paper_numbers as conflicts
from conflictlab.contextconflict import paper_numbers as contextconflict
from conflictlab.logs import configure_logging
from conflictlab.report import reproduction
from conflictlab.report.profile import read_csv_rows
from conflictlab.report.tables import write_text

log = configure_logging(snakemake.log[0], "reproduction")
params, out = snakemake.params, snakemake.output

registries = (contextconflict, conflicts, arbitration, conflictbank)
papers = [registry.PAPER for registry in registries]
tables = {stem: read_csv_rows(path) for stem, path in snakemake.input.items()}
rows = reproduction.compare_all([number for registry in registries for number in registry.NUMBERS], tables=tables,
                                model_lists=params.model_lists, sources=params.sources, instruments=params.instruments)
run = reproduction.describe_run(params.model_lists, params.instruments)
write_text(reproduction.render_markdown(papers, rows, run=run), out.md)
write_text(reproduction.render_html(papers, rows, run=run), out.html)
for paper in papers:
    log.info("%s: %s", paper.key, reproduction.counts([r for r in rows if r["paper"] == paper.key]))

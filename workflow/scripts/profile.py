"""Rule profile: one model's conflict profile across the selected benchmarks (HTML page and figure)."""

import pyarrow as pa

from conflictlab import benchmarks
from conflictlab.conflicts.tables import table4, table5, table6
from conflictlab.io import atomic_path
from conflictlab.logs import configure_logging
from conflictlab.paper_registries import resolve
from conflictlab.report import profile
from conflictlab.report.tables import write_text

log = configure_logging(snakemake.log[0], "profile")
model, lists, out = snakemake.wildcards.model, snakemake.params.models, snakemake.output


def read(key):
    """A result table's rows, or None where this run does not make the table."""
    path = snakemake.input.get(key)
    return profile.read_csv_rows(path) if path else None


# Each selected benchmark's cells, by its descriptor's profile function over its profile tables
# (conflictlab.benchmarks; the params hold the selected benchmarks' model lists).
cells = [
    cell
    for name, models in lists.items()
    for bench in [benchmarks.BY_NAME[name]]
    if bench.profile_cells
    for cell in resolve(bench.profile_cells)(*map(read, bench.profile_tables), models=models)
]
# The paper's numbers: the rows 'paper' that conflictlab.conflicts.tables puts
# into CONFLICTS Tables 4-6 (given no rows of this run, those rows alone).
published = (table4(pa.table({})), table5(pa.table({})), table6(pa.table({})))
paper_models = profile.paper_names(*published)
paper_name = profile.paper_model_name(model, snakemake.params.source, paper_models)
paper = profile.paper_cells(paper_name, *published)

png = profile.figure_png(profile.profile_figure(model, cells, lists, paper))
with atomic_path(out.png) as tmp:
    tmp.write_bytes(png)
write_text(
    profile.render_page(
        model,
        lists,
        cells,
        paper,
        paper_name=paper_name,
        paper_models=paper_models,
        png=png,
        methods=read("methods"),
        verdicts=read("reproduction"),
    ),
    out.html,
)
log.info(
    "%s: %d numbers of this run over %d models, %d of the paper (%s)",
    model,
    len(cells),
    len(profile.profile_models(lists)),
    len(paper),
    paper_name or "none",
)

"""Rule conflictbank_report: the MR/OAR table, the contrast figure, MR against
model size, and the embedded-knowledge table, panel and Figures 6-8."""

from pathlib import Path

import polars as pl

from conflictlab.conflictbank.metrics import embedded_metrics, scan_predictions, setting_metrics, with_oar_drop
from conflictlab.conflictbank.report import (
    EMBEDDED_FIGURES,
    embedded_figure,
    embedded_settings_figure,
    memorization_figure,
    model_size,
    scale_figure,
    write_embedded_table,
    write_metric_table,
)
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save

log = configure_logging(snakemake.log[0], "conflictbank_report")
out, options = snakemake.output, snakemake.params.options
boot = dict(n_resamples=options["bootstrap_resamples"], seed=options["seed"])

# Scanned, not read: the full QA set is ~9.4M prediction rows per model.
predictions = scan_predictions(snakemake.input.predictions)
metrics = setting_metrics(predictions, **boot)
write_metric_table(metrics, out.table_md, out.table_csv)
models = predictions.select(pl.col("model").unique(maintain_order=True)).collect()["model"].to_list()
save(memorization_figure(metrics, models), Path(out.figure_png).with_suffix(""))
sizes = {model: model_size(folder) for model, folder in zip(snakemake.params.sized_models, snakemake.input.models)}
log.info("model sizes: %s", sizes)
save(scale_figure(metrics, sizes), Path(out.scale_png).with_suffix(""))
for row in pl.from_arrow(metrics).iter_rows(named=True):  # one per model and setting
    log.info(
        "%s %s: n_scored %d, OAR %s, MR %s (n_mr %d)",
        row["model"],
        row["setting"],
        row["n_scored"],
        row["oar"],
        row["mr"],
        row["n_mr"],
    )

embedded = {}
for ratio, path in zip(snakemake.params.ratios, snakemake.input.embedded):
    embedded.setdefault(ratio, []).append(path)
trained = {ratio: scan_predictions(paths) for ratio, paths in embedded.items()}
rows = embedded_metrics(
    predictions, trained, models=snakemake.params.embedded_models, settings=options["embedded_settings"], **boot
)
rows = with_oar_drop(rows, predictions, trained)
write_embedded_table(rows, out.embedded_md, out.embedded_csv)
save(embedded_figure(rows), Path(out.embedded_png).with_suffix(""))
for figure in EMBEDDED_FIGURES:
    save(embedded_settings_figure(rows, figure), Path(getattr(out, f"{figure}_png")).with_suffix(""))
log.info("embedded panel: %d rows", rows.num_rows)

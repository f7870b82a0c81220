"""Rule conflictbank_report: the MR/OAR table, the contrast figure and the
embedded-knowledge panel."""

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from conflictlab.conflictbank.metrics import setting_metrics
from conflictlab.conflictbank.report import embedded_figure, embedded_rows, memorization_figure
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "conflictbank_report")
out, options = snakemake.output, snakemake.params.options
boot = dict(n_resamples=options["bootstrap_resamples"], seed=options["seed"])

predictions = pa.concat_tables(pq.read_table(p) for p in snakemake.input.predictions)
metrics = setting_metrics(predictions, **boot)
write_markdown_and_csv(
    metrics, out.table_md, out.table_csv,
    caption="ConflictBank per model and setting, on the scored subset (records answered correctly without evidence "
    "and with the correct evidence; n_scored of n_records): OAR, CAR and uncertain rate (%), MR = OAR/(OAR+CAR) (%), "
    "95% bootstrap intervals, mean entropy (bits) of the A-D probabilities. '_reversed': conflicting evidence first.",
)
models = list(dict.fromkeys(predictions.column("model").to_pylist()))
save(memorization_figure(metrics, models), Path(out.figure_png).with_suffix(""))
for row in metrics.to_pylist():
    log.info("%s %s: n_scored %d, OAR %s, MR %s", row["model"], row["setting"], row["n_scored"], row["oar"], row["mr"])

# Embedded knowledge: the untrained models ("base") beside each trained ratio,
# every record scored (the trained models' own scored subsets would differ).
embedded_models = pa.array(snakemake.params.embedded_models)
by_ratio = {"base": predictions.filter(pc.is_in(predictions.column("model"), embedded_models))}
for ratio, path in zip(snakemake.params.ratios, snakemake.input.embedded):
    by_ratio[ratio] = pa.concat_tables([by_ratio[ratio], pq.read_table(path)]) if ratio in by_ratio else pq.read_table(path)
every_record = set(predictions.column("record_id").to_pylist())
rows = embedded_rows({ratio: setting_metrics(table, subset=every_record, **boot) for ratio, table in by_ratio.items()}, options["embedded_settings"])
write_markdown_and_csv(
    rows, out.embedded_md, out.embedded_csv,
    caption="Embedded knowledge: OAR, CAR and MR (%) over every record after continued pre-training on default : "
    "conflicting evidence text at each ratio ('base': the model before training).",
)
save(embedded_figure(rows), Path(out.embedded_png).with_suffix(""))
log.info("embedded panel: %d rows", rows.num_rows)

"""Rule arbitration_report: Figure 4 A-H, accuracy table, sensitivity table, Figure A1."""

from pathlib import Path

import pyarrow.compute as pc

from conflictlab.arbitration.prompts import ORDERS, SETTINGS
from conflictlab.arbitration.report import (
    accuracy_by_cell,
    arbitration_panels,
    mean_over_seeds,
    order_pairs,
    sensitivity_table,
    trajectory_examples,
)
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "arbitration_report")
out = snakemake.output
main = read_tables(snakemake.input.main)
sensitivity = read_tables(snakemake.input.sensitivity)
predictions = read_tables(snakemake.input.predictions)
is_main = pc.is_in(predictions.column("instance_id"), value_set=main.column("instance_id"))

summary = mean_over_seeds(accuracy_by_cell(main, predictions.filter(is_main)))
save(arbitration_panels(summary, settings=list(SETTINGS), orders=list(ORDERS)), Path(out.fig4_png).with_suffix(""))
write_markdown_and_csv(
    summary,
    out.accuracy_md,
    out.accuracy_csv,
    caption="Arbitration accuracy (%) per setting, evidence order and condition, read out as the argmax of the A/B "
    "next-token logits: mean over seeds [Clopper-Pearson 95% CI over the n instances of all seeds, each counted once "
    "in its row; none at n < 2]; std across seeds. Both orders of an instance are analysed as a pair in "
    "arbitration_orders. "
    "Unimodal references show only the aligned source and are repeated under both orders. "
    "calibrated_accuracy (not the paper's protocol): 'A' when logit_A - logit_B exceeds the model's median margin, "
    "which removes a constant answer-letter bias.",
    intervals={"accuracy": ("ci_low", "ci_high")},
    scale={"accuracy": 100, "std": 100, "calibrated_accuracy": 100},
)
orders = order_pairs(main, predictions.filter(is_main))
percent = ("accuracy", *ORDERS, "difference", "follows_numbers")
write_markdown_and_csv(
    orders,
    out.orders_md,
    out.orders_csv,
    caption="Arbitration under conflict with the instance as the unit (A/B logit argmax): n_pairs instances read out "
    "in both evidence orders (seeds pooled). accuracy: per instance the mean of its two orders, then the mean over "
    "instances [Clopper-Pearson 95% CI over instances, an instance's share its count of successes]; each order's "
    "accuracy over the same instances [Clopper-Pearson]; difference = aligned_first - aligned_last [Tango score "
    "paired 95% CI], p_paired exact McNemar; follows_numbers (rows 'all' of text-vs-numbers settings): answers that "
    "follow the numbers.",
    intervals={name: (f"{name}_low", f"{name}_high") for name in percent},
    scale={name: 100 for name in percent},
)
log.info("order pairs: %s instances per (model, setting, source)", orders.column("n_pairs").to_pylist())
sens = sensitivity_table(sensitivity, predictions.filter(pc.invert(is_main)))
write_markdown_and_csv(
    sens,
    out.sensitivity_md,
    out.sensitivity_csv,
    caption="Sensitivity (modality setting): mean ± std of |accuracy(variant) − accuracy(default)| over the factor's "
    "values, seeds and orders.",
)
save(trajectory_examples(main, horizon=snakemake.params.horizon), Path(out.figA1_png).with_suffix(""))
log.info("summary %d rows, sensitivity %d rows", summary.num_rows, sens.num_rows)

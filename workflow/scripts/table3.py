"""Rule table3: the causal-intervention validation of the Shapley rankings."""

from conflictlab.contextconflict.balance import summarize_causal, table3_caption
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "table3")
settings = snakemake.params.settings
table = summarize_causal(
    read_tables(snakemake.input.causal),
    n_resamples=settings["bootstrap_resamples"],
    seed=settings["seed"],
)
write_markdown_and_csv(
    table,
    snakemake.output.table3_md,
    snakemake.output.table3_csv,
    caption=table3_caption(),
    intervals={
        "delta_high": ("delta_high_ci_low", "delta_high_ci_high"),
        "delta_low": ("delta_low_ci_low", "delta_low_ci_high"),
        "high_minus_low": ("high_minus_low_ci_low", "high_minus_low_ci_high"),
        "frac_high_gt_low": ("frac_ci_low", "frac_ci_high"),
    },
    scale={"frac_high_gt_low": 100},
    decimals={"delta_high": 3, "delta_low": 3, "high_minus_low": 3},
)
log.info("wrote %d rows", table.num_rows)

"""Rule table3: the causal-intervention validation of the Shapley rankings."""

from conflictlab.contextconflict.balance import summarize_causal
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

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
    caption="Table 3: removing the piece of highest vs lowest Shapley value phi (argmax / argmin phi; a share "
    "would tie pieces whose phi <= 0). delta = l_full - l_without, the generating model's own length-normalised "
    f"log-likelihood of its response (the scorer), mean [Student-t 95% CI; none at n < {MIN_N_MEAN} or without "
    "spread]; "
    "frac_high_gt_low: share of responses with delta_high > delta_low [Clopper-Pearson 95% CI; none at n < 2].",
    intervals={
        "delta_high": ("delta_high_ci_low", "delta_high_ci_high"),
        "delta_low": ("delta_low_ci_low", "delta_low_ci_high"),
        "frac_high_gt_low": ("frac_ci_low", "frac_ci_high"),
    },
    scale={"frac_high_gt_low": 100},
    decimals={"delta_high": 3, "delta_low": 3},
)
log.info("wrote %d rows", table.num_rows)

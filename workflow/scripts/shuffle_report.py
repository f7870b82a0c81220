"""Rule shuffle_report: one generator's shuffled-evidence shares by presented position (the paper's Tables 9-10) and by
original piece."""

from conflictlab.contextconflict.balance import attributions, shuffled_shares
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"shuffle_report.{model}")
settings = snakemake.params.settings
samples = read_tables(snakemake.input.samples)
attr = attributions(
    read_tables(snakemake.input.values),
    samples,
    model=model,
)
presented, original = shuffled_shares(attr, samples, n_resamples=settings["bootstrap_resamples"], seed=settings["seed"])
write_markdown_and_csv(
    presented,
    snakemake.output.presented_md,
    snakemake.output.presented_csv,
    caption=f"Shuffled evidence, {model} (the paper's Tables 9-10 are this table for Llama-3.1-8B and GPT-OSS-20B): "
    f"mean Shapley share (coalition values scored by {snakemake.params.scorer}) by presented position (what the model "
    f"saw first, second, ...), % [Student-t 95% CI over the n_samples responses; none at n < {MIN_N_MEAN} or without "
    "spread].",
    intervals={"mean_share": ("ci_low", "ci_high")},
    scale={"mean_share": 100, "chance": 100},
)
write_markdown_and_csv(
    original,
    snakemake.output.original_md,
    snakemake.output.original_csv,
    caption=f"Shuffled evidence, {model}, by original piece (this project's addition): the same shares mapped back to "
    f"the release's source_1, source_2, ..., % (scorer {snakemake.params.scorer}) [Student-t 95% CI; none at n < "
    f"{MIN_N_MEAN} "
    "or without spread].",
    intervals={"mean_share": ("ci_low", "ci_high")},
    scale={"mean_share": 100, "chance": 100},
)
log.info("%d shuffled samples attributed", attr.num_rows)

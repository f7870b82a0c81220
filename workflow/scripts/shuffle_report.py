"""Rule shuffle_report: one generator's shuffled-evidence shares by presented position (the paper's Tables 9-10) and by original piece."""

from conflictlab.contextconflict.balance import attributions, shuffled_shares
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv

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
    presented, snakemake.output.presented_md, snakemake.output.presented_csv,
    caption=f"Shuffled evidence, {model} (the paper's Tables 9-10 are this table for Llama-3.1-8B and GPT-OSS-20B): "
    "mean Shapley share by presented position (what the model saw first, second, ...), % [bootstrap 95% CI over the "
    "n_samples responses; none at n < 2].",
    intervals={"mean_share": ("ci_low", "ci_high")}, scale={"mean_share": 100, "chance": 100},
)
write_markdown_and_csv(
    original, snakemake.output.original_md, snakemake.output.original_csv,
    caption=f"Shuffled evidence, {model}, by original piece (this project's addition): the same shares mapped back to "
    "the release's source_1, source_2, ..., % [bootstrap 95% CI; none at n < 2].",
    intervals={"mean_share": ("ci_low", "ci_high")}, scale={"mean_share": 100, "chance": 100},
)
log.info("%d shuffled samples attributed", attr.num_rows)

"""Rule balance_report: Balance table, Table 6 and position-share figures."""

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from conflictlab.balance import position_shares, scorer_robustness, summarize_balance
from conflictlab.figures import position_share_bars, position_share_pies, save
from conflictlab.logs import configure_logging
from conflictlab.tables import write_csv, write_markdown_and_csv

log = configure_logging(snakemake.log[0], "balance_report")
settings = snakemake.params.settings
boot = dict(n_resamples=settings["bootstrap_resamples"], seed=settings["seed"])
attr = pa.concat_tables(pq.read_table(p) for p in snakemake.input)

summary = summarize_balance(attr, **boot)
write_markdown_and_csv(
    summary, *snakemake.output.balance,
    caption="Balance (normalised Gini of Shapley shares; 0 = even use, 1 = one piece) with bootstrap 95% CI. "
    "gini_paper_code: the unnormalised Gini the paper's code reported. n_undefined: samples with every phi <= 0, excluded.",
)
wide, taus = scorer_robustness(summary)
write_markdown_and_csv(
    wide, *snakemake.output.table6,
    caption="Table 6: mean Balance over summarization types per generator and scorer.\n\n"
    + "\n".join(f"Kendall tau ({r['scorer_a']} vs {r['scorer_b']}, {r['n_generators']} generators): {r['kendall_tau']:.3f}" for r in taus.to_pylist()),
)
positions = position_shares(attr, **boot)
write_csv(positions, snakemake.output.positions)

# Figures for the default scorer, one pair of files per generator.
default = positions.filter(pa.compute.equal(positions.column("scorer"), snakemake.params.default_scorer))
for model in sorted(set(default.column("model").to_pylist())):
    mine = default.filter(pa.compute.equal(default.column("model"), model))
    title = f"{model}: mean Shapley share by evidence position (scorer {snakemake.params.default_scorer})"
    save(position_share_bars(mine, title=title), f"results/figures/position_bars_{model}")
    save(position_share_pies(mine, title=title), f"results/figures/position_pies_{model}")
log.info(
    "%d attributions: %d summary rows, %d position rows; Kendall tau %s",
    attr.num_rows, summary.num_rows, positions.num_rows, taus.column("kendall_tau").to_pylist(),
)

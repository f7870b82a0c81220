"""Rule balance_report: Balance table, Table 6 and position-share figures."""

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from conflictlab.contextconflict.balance import position_shares, scorer_robustness, summarize_balance
from conflictlab.contextconflict.figures import position_share_bars, position_share_pies
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_csv, write_markdown_and_csv

log = configure_logging(snakemake.log[0], "balance_report")
params, out = snakemake.params, snakemake.output
boot = dict(n_resamples=params.settings["bootstrap_resamples"], seed=params.settings["seed"])
attr = pa.concat_tables(pq.read_table(p) for p in snakemake.input.attributions)

summary = summarize_balance(attr, **boot)
write_markdown_and_csv(
    summary, out.balance_md, out.balance_csv,
    caption="Balance (normalised Gini of Shapley shares; 0 = even use, 1 = one piece) with bootstrap 95% CI. "
    "gini_paper_code: the unnormalised Gini the paper's code reported. n_undefined: samples with every phi <= 0, excluded.",
)
cells, agreement = scorer_robustness(attr)
write_markdown_and_csv(
    cells, out.table6_md, out.table6_csv,
    caption="Table 6: mean Balance of every (generator, type) cell under each scorer.",
)
write_markdown_and_csv(
    agreement, out.agreement_md, out.agreement_csv,
    caption="Table 6, scorer agreement: Kendall's tau and Spearman's rho (p-values) between each pair of scorers, "
    "over the (generator x type) cells and, per type, over the Balance of each response; NaN with fewer than 3 pairs.",
)
positions = position_shares(attr, **boot)
write_csv(positions, out.positions)

# Figures for the default scorer, one pair of files per generator (outputs in params.models order).
default = positions.filter(pc.equal(positions.column("scorer"), params.default_scorer))
for model, bars, pies in zip(params.models, out.bars_png, out.pies_png):
    mine = default.filter(pc.equal(default.column("model"), model))
    title = f"{model}: mean Shapley share by evidence position (scorer {params.default_scorer})"
    save(position_share_bars(mine, title=title), Path(bars).with_suffix(""))
    save(position_share_pies(mine, title=title), Path(pies).with_suffix(""))
log.info(
    "%d attributions: %d summary rows, %d position rows; Kendall tau %s",
    attr.num_rows, summary.num_rows, positions.num_rows, agreement.column("kendall_tau").to_pylist(),
)

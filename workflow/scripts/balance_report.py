"""Rule balance_report: Balance table, Table 6 and position-share figures."""

from pathlib import Path

import pyarrow.compute as pc

from conflictlab.contextconflict.balance import position_shares, scorer_robustness, summarize_balance
from conflictlab.contextconflict.figures import position_share_bars, position_share_pies
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_csv, write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

log = configure_logging(snakemake.log[0], "balance_report")
params, out = snakemake.params, snakemake.output
boot = dict(n_resamples=params.settings["bootstrap_resamples"], seed=params.settings["seed"])
attr = read_tables(snakemake.input.attributions)

summary = summarize_balance(attr, **boot)
write_markdown_and_csv(
    summary,
    out.balance_md,
    out.balance_csv,
    caption="Balance (normalised Gini of Shapley shares; 0 = even use, 1 = one piece; %), per scorer (the scorer "
    "column: "
    "the log-likelihood scorer whose coalition values gave the Shapley values), mean [Student-t 95% CI] over the n "
    f"defined samples; no interval at n < {MIN_N_MEAN} (coverage under 93% there, docs/statistics.md) or without "
    "spread. gini_paper_code: the unnormalised Gini the paper's code reported. n_undefined: samples with every "
    "phi <= 0, excluded.",
    intervals={"balance": ("ci_low", "ci_high")},
    scale={"balance": 100},
    decimals={"gini_paper_code": 3},
)
cells, agreement = scorer_robustness(attr, seed=params.settings["seed"])
write_markdown_and_csv(
    cells,
    out.table6_md,
    out.table6_csv,
    caption="Table 6: mean Balance of every (generator, type) cell under each scorer (balance[scorer]: the Shapley "
    "Balance from that scorer's coalition values), n[scorer] defined samples each.",
    decimals={c: 3 for c in cells.column_names if c.startswith("balance[")},
)
write_markdown_and_csv(
    agreement,
    out.agreement_md,
    out.agreement_csv,
    caption="Table 6, agreement of the Shapley Balance between each pair of scorers. Headline: 'within generator x "
    "type', Kendall's tau over pairs of responses of the same generator and conflict type (p: permutation within "
    "those strata), so neither a type's nor a generator's level counts as agreement; beside it 'within types' "
    "(pairs across generators). Then per type, tau and Spearman's rho over its responses (p exact up to n = 10, "
    "by permutation up to n = 50 with the count in p_method, asymptotic above; p_floor: the smallest p the test "
    "allows; p with two significant digits). Last, secondary: over the (generator x type) cell means, which "
    "differences between types alone can make large. Undefined below 3 pairs or on constant input (p_method).",
    decimals={"kendall_tau": 3, "spearman_rho": 3},
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
# Every generator in one figure, a row each (the paper's Figures 23-29 side by side).
save(
    position_share_pies(
        default,
        title=f"Mean Shapley share by evidence position, every generator (scorer {params.default_scorer})",
        name_rows=True,
    ),
    Path(out.pies_generators_png).with_suffix(""),
)
log.info(
    "%d attributions: %d summary rows, %d position rows; Kendall tau %s",
    attr.num_rows,
    summary.num_rows,
    positions.num_rows,
    agreement.column("kendall_tau").to_pylist(),
)

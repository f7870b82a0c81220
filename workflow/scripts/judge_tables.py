"""Rule judge_tables: Faithfulness per model and type, Table 2 (kappa), Table 7 (judge Balance) and the judge's gold-set
agreement."""

from conflictlab.io import read_tables
from conflictlab.judges.faithfulness import DEVIATIONS, SUMMARY_DISPLAY, summarize_faithfulness
from conflictlab.judges.gold import MIN_N_ITEMS_BOOTSTRAP, gold_agreement
from conflictlab.judges.ratings import HUMAN_NOTE, MIN_N_KAPPA, agreement_table, judge_balance_table
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

log = configure_logging(snakemake.log[0], "judge_tables")
params, inputs, out = snakemake.params, snakemake.input, snakemake.output
boot = dict(n_resamples=params.bootstrap, seed=params.seed)
judge = params.judge_label

faithfulness = summarize_faithfulness(read_tables(inputs.faithfulness), **boot)
write_markdown_and_csv(
    faithfulness,
    out.faithfulness_md,
    out.faithfulness_csv,
    caption=f"Faithfulness (RAGAS; judge {judge}) per responding model and type: mean (%) over the n_scored scored "
    "responses "
    f"with Student-t 95% CI (none at n_scored < {MIN_N_MEAN} or without spread); nan_rate: share of the n responses "
    "without a score, Clopper-Pearson 95% CI, "
    f"by reason in the n_* columns. {DEVIATIONS}",
    **SUMMARY_DISPLAY,
)
if "ratings" in inputs.keys():
    ratings = read_tables(inputs.ratings)
    attributions = read_tables(inputs.attributions)
    agreement = agreement_table(ratings, attributions, scorer=params.scorer)
    write_markdown_and_csv(
        agreement,
        out.table2_md,
        out.table2_csv,
        caption="Table 2: Cohen's kappa (unweighted, as the paper; and linearly and quadratically weighted over the "
        "ordered 1-5 "
        f"scale) between the LLM judge ({judge}) and Shapley-derived ratings, 1 + round(2 x min(n x share, 2)) (an "
        "even share "
        "is 3 at every n), pooled over the n_pieces rated evidence pieces of n_samples samples, per type and per "
        "number of "
        "pieces (n_evidence); mean per-sample Spearman rho of ratings vs phi over n_spearman samples. Human rows: "
        f"{HUMAN_NOTE}.",
        decimals={"kappa": 3, "kappa_linear": 3, "kappa_quadratic": 3, "mean_spearman": 3},
    )
    balance = judge_balance_table(ratings, attributions, **boot)
    write_markdown_and_csv(
        balance,
        out.table7_md,
        out.table7_csv,
        caption=f"Table 7: Balance (normalised Gini %, lower is better) from the LLM judge's 1-5 ratings ({judge}; a "
        "piece's "
        "mass is rating - 1, so one piece rated 5 and the rest 1 is 100% as all Shapley mass on one piece) and from "
        "Shapley "
        f"values under {params.scorer}, both over the same n samples (both Balances defined; by pieces per sample in "
        f"n_evidence), Student-t 95% CI, none at n < {MIN_N_MEAN} or without spread; samples left out are counted by "
        "reason. "
        f"Human column: {HUMAN_NOTE}.",
        intervals={
            "judge_balance": ("judge_ci_low", "judge_ci_high"),
            "shapley_balance": ("shapley_ci_low", "shapley_ci_high"),
        },
        decimals={"judge_balance": 1, "shapley_balance": 1},
    )
gold = gold_agreement(read_tables(inputs.gold), **boot)
write_markdown_and_csv(
    gold,
    out.gold_md,
    out.gold_csv,
    caption=f"How good is the judge? Agreement of {judge} with the team-written gold set "
    "(resources/judges/gold.jsonl): "
    "share of labels equal to gold (%, an unreadable label counts as disagreement) with its 95% interval over the "
    "n_items items (Clopper-Pearson where an item has one label; where it has several, a bootstrap over items, none "
    f"below {MIN_N_ITEMS_BOOTSTRAP} items), Cohen's kappa over the readable labels with a 95% bootstrap interval over "
    "items (none "
    f"below {MIN_N_KAPPA} items, where its coverage falls under 93%), and for ratings the mean |judge Balance - gold "
    "Balance| in points.",
    intervals={"agreement": ("agreement_low", "agreement_high"), "kappa": ("kappa_low", "kappa_high")},
    scale={"agreement": 100},
    decimals={"kappa": 3},
)
for row in gold.to_pylist():
    log.info(
        "gold %s: agreement %s, kappa %s over %d labels", row["kind"], row["agreement"], row["kappa"], row["n_labels"]
    )

"""Rule judge_tables: Faithfulness per model and type, Table 2 (kappa), Table 7 (judge Balance) and the judge's gold-set agreement."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.judges.faithfulness import summarize_faithfulness
from conflictlab.judges.gold import gold_agreement
from conflictlab.judges.ratings import HUMAN_NOTE, agreement_table, judge_balance_table
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "judge_tables")
params, inputs, out = snakemake.params, snakemake.input, snakemake.output
boot = dict(n_resamples=params.bootstrap, seed=params.seed)
judge = params.judge

faithfulness = summarize_faithfulness(pq.read_table(inputs.faithfulness), **boot)
write_markdown_and_csv(
    faithfulness, out.faithfulness_md, out.faithfulness_csv,
    caption=f"Faithfulness (RAGAS; judge {judge}) per responding model and type: mean over scored responses with bootstrap "
    "95% CI; nan_rate: judged responses without a score (no statement, unparseable reply, not generated).",
)
if "ratings" in inputs.keys():
    ratings = pq.read_table(inputs.ratings)
    attributions = pa.concat_tables(pq.read_table(p) for p in inputs.attributions)
    agreement = agreement_table(ratings, attributions, scorer=params.scorer)
    write_markdown_and_csv(
        agreement, out.table2_md, out.table2_csv,
        caption=f"Table 2: Cohen's kappa between the LLM judge ({judge}) and Shapley-derived ratings (1 + round(4 x share)), "
        f"pooled over rated evidence pieces, and the mean per-sample Spearman rho of ratings vs phi. Human rows: {HUMAN_NOTE}.",
    )
    balance = judge_balance_table(ratings, attributions, **boot)
    write_markdown_and_csv(
        balance, out.table7_md, out.table7_csv,
        caption=f"Table 7: Balance (normalised Gini %, lower is better) from the LLM judge's 1-5 ratings ({judge}) and, "
        f"for the same responses, from Shapley values under {params.scorer}; bootstrap 95% CI. Human column: {HUMAN_NOTE}.",
    )
gold = gold_agreement(pq.read_table(inputs.gold))
write_markdown_and_csv(
    gold, out.gold_md, out.gold_csv,
    caption=f"How good is the judge? Agreement of {judge} with the team-written gold set (resources/judges/gold.jsonl): "
    "share of labels equal to gold, Cohen's kappa, and for ratings the mean |judge Balance - gold Balance| in points.",
)
for row in gold.to_pylist():
    log.info("gold %s: agreement %s, kappa %s over %d labels", row["kind"], row["agreement"], row["kappa"], row["n_labels"])

"""Rule accuracy_table: every generator's accuracy summary (with its judged Faithfulness) -> Markdown and CSV."""

from conflictlab.contextconflict.accuracy import accuracy_caption
from conflictlab.io import read_tables
from conflictlab.judges.faithfulness import DEVIATIONS, join_faithfulness, summarize_faithfulness
from conflictlab.logs import configure_logging
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

log = configure_logging(snakemake.log[0], "accuracy_table")
params = snakemake.params
table = read_tables(snakemake.input.summaries)
scorer = (
    ("golds of more than three words decided by the judge " + params.judge_label)
    if params.free_text == "judge"
    else "verbatim match only"
)
caption = accuracy_caption(scorer)
display = {"intervals": {"accuracy": ("ci_low", "ci_high")}, "scale": {"accuracy": 100, "missing_tag_rate": 100}}
if "faithfulness" in snakemake.input.keys():
    judged = summarize_faithfulness(
        read_tables(snakemake.input.faithfulness), n_resamples=params.bootstrap, seed=params.seed
    )
    table = join_faithfulness(table, judged, where=lambda row: row["level"] == "type")
    display["intervals"]["faithfulness"] = ("fth_ci_low", "fth_ci_high")
    display["scale"].update(faithfulness=100, fth_nan_rate=100)
    caption += (
        f" Faithfulness (RAGAS, judge {params.judge_label}) on type rows: mean over the fth_n scored responses (its "
        "own n, not the "
        f"accuracy n), Student-t 95% CI, none at fth_n < {MIN_N_MEAN} or without spread; fth_nan_rate: share of the "
        f"judged responses without a score. {DEVIATIONS}"
    )
write_markdown_and_csv(table, snakemake.output.md, snakemake.output.csv, caption=caption, **display)
log.info("wrote %d rows to %s and %s", table.num_rows, snakemake.output.md, snakemake.output.csv)

"""Rule conflicts_tables: CONFLICTS Tables 2 and 4-7 and the confusion matrices."""

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.conflicts.tables import (
    TABLE4_DISPLAY,
    TABLE5_DISPLAY,
    TABLE6_DISPLAY,
    confusion_figure,
    table2,
    table4,
    table5,
    table6,
    table7,
)
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN

log = configure_logging(snakemake.log[0], "conflicts_tables")
out, options, judge = snakemake.output, snakemake.params.options, snakemake.params.judge_label
queries = read_tables(snakemake.input.queries)
types = read_tables(snakemake.input.types)
judged = read_tables(snakemake.input.judged)
# The judged table also holds the conflict-resolution methods' runs (rules/methods.smk): their table is the methods
# table.
judged = judged.filter(pc.is_in(judged["model"], value_set=pa.array(snakemake.params.models, pa.string())))
PAPER_ROWS = (
    "Rows 'paper': the paper's numbers, for reference; their n is the number of release queries they cover; "
    "the paper gives no interval."
)
EMPTY = "An empty interval: n < 2; an empty cell: n = 0."
UNPARSEABLE = (
    "n_unparseable: responses not generated or not readable (unparseable Taxonomy-aware form, no predicted type for "
    "Pipeline, empty, prompt too long, no final channel); they stay in every denominator and score as wrong."
)

write_markdown_and_csv(
    table2(queries),
    out.table2_md,
    out.table2_csv,
    caption="CONFLICTS Table 2: queries per conflict category, this run (n) beside the release (n_paper, the paper's "
    "Table 2).",
    notes=[
        "This run's queries: at most conflicts.max_per_category per category where it is set, every query of the file "
        "where it is null."
    ],
)
write_markdown_and_csv(
    table7(queries),
    out.table7_md,
    out.table7_csv,
    caption="CONFLICTS Table 7: queries per data source, this run (n) beside the release (n_paper, the paper's Table "
    "7).",
    notes=[
        "released_as: the source strings read that match the paper's name (case and punctuation ignored); "
        "a source the paper does not name has no n_paper."
    ],
)
write_markdown_and_csv(
    table4(types),
    out.table4_md,
    out.table4_csv,
    caption="CONFLICTS Table 4: conflict-type prediction accuracy (%, 95% Clopper-Pearson interval) over every query, "
    "per "
    "model and read-out, the scorer (option_loglikelihood: the most likely category name under the model; generated: "
    "the parsed label of its answer).",
    notes=[
        "n_unparseable: labels that could not be read (or prompts too long); counted wrong, in n.",
        PAPER_ROWS + " (458 queries)",
        EMPTY,
    ],
    **TABLE4_DISPLAY,
)
write_markdown_and_csv(
    table5(judged, n_resamples=options["bootstrap_resamples"], seed=options["seed"]),
    out.table5_md,
    out.table5_csv,
    caption=f"CONFLICTS Table 5: response quality per model and strategy, judged by {judge}, % with 95% intervals: "
    "expected "
    "behaviour and answer recall (Clopper-Pearson), factual grounding (FACTS, supported / factual sentences; mean per "
    f"response, Student-t; none at n_grounding < {MIN_N_MEAN} or without spread).",
    notes=[
        UNPARSEABLE,
        "n_behaviour, n_recall: responses scored (n less the verdicts the judge left unreadable, counted in "
        "n_unreadable).",
        "answer_recall: the paper's, over No conflict, Freshness and Misinformation queries (228 on the release); "
        "answer_recall_all_gold: over every query with a gold answer (237 on the release).",
        "grounding: over responses with a factual sentence (n_grounding); cited_sentences: % of n_sentences with a "
        "citation; "
        "n_invalid_citations: citations of results that do not exist.",
        PAPER_ROWS + " Judge: Gemini 2.5 Flash; grounding's n is not reported.",
        EMPTY,
    ],
    **TABLE5_DISPLAY,
)
write_markdown_and_csv(
    table6(judged),
    out.table6_md,
    out.table6_csv,
    caption="CONFLICTS Table 6: expected behaviour (%, 95% Clopper-Pearson interval) per category and strategy, "
    f"judged by {judge}; "
    "Freshness (outdated information) and Misinformation merged as in the paper.",
    notes=[
        "n_*: responses scored; " + UNPARSEABLE.replace("n_unparseable", "n_unparseable_*"),
        PAPER_ROWS + " Model: Gemini 2.5 Flash Thinking.",
        EMPTY,
    ],
    **TABLE6_DISPLAY,
)
save(confusion_figure(types), Path(out.confusion_png).with_suffix(""))
log.info("tables over %d type predictions and %d judged responses", types.num_rows, judged.num_rows)

"""Rule conflicts_tables: CONFLICTS Tables 4-6 and the confusion matrices."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.conflicts.tables import confusion_figure, table4, table5, table6
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv

log = configure_logging(snakemake.log[0], "conflicts_tables")
out, options, judge = snakemake.output, snakemake.params.options, snakemake.params.judge
boot = dict(n_resamples=options["bootstrap_resamples"], seed=options["seed"])
types = pa.concat_tables(pq.read_table(path) for path in snakemake.input.types)
judged = pq.read_table(snakemake.input.judged)

write_markdown_and_csv(
    table4(types, **boot), out.table4_md, out.table4_csv,
    caption="CONFLICTS Table 4: conflict-type prediction accuracy (%, 95% bootstrap interval over queries) per model and "
    "read-out (option_loglikelihood: the most likely category name; generated: the parsed label, unparseable counted "
    "wrong). Rows 'paper': the paper's Table 4, for reference (the release's 458 queries).",
)
write_markdown_and_csv(
    table5(judged, **boot), out.table5_md, out.table5_csv,
    caption=f"CONFLICTS Table 5: response quality per model and strategy, judged by {judge}: expected behaviour, answer "
    "recall (queries with a gold answer) and factual grounding (FACTS, supported / factual sentences), % with 95% "
    "bootstrap intervals over responses; cited_sentences: % of sentences with a citation; n_invalid_citations: "
    "citations of results that do not exist; n_not_generated and n_unreadable are counted, never scored. Rows "
    "'paper': the paper's Table 5 (Gemini 2.5 Flash as judge).",
)
write_markdown_and_csv(
    table6(judged), out.table6_md, out.table6_csv,
    caption=f"CONFLICTS Table 6: expected behaviour (%) per category and strategy, judged by {judge}; Freshness "
    "(outdated information) and Misinformation merged as in the paper; n_*: judged responses. Rows 'paper': the "
    "paper's Table 6 (Gemini 2.5 Flash Thinking).",
)
save(confusion_figure(types), Path(out.confusion_png).with_suffix(""))
log.info("tables over %d type predictions and %d judged responses", types.num_rows, judged.num_rows)

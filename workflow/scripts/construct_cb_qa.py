"""Rule construct_cb_qa: kept evidence -> QA pairs in the released ConflictBank format, and the counts
after every step beside the paper's (Table 3's shape)."""

import json

import polars as pl

from conflictlab.construction.conflictbank import KINDS, qa_records, steps_table
from conflictlab.io import atomic_path
from conflictlab.logs import configure_logging
from conflictlab.report.tables import markdown, write_markdown_and_csv

params, inputs, output = snakemake.params, snakemake.input, snakemake.output
log = configure_logging(snakemake.log[0], "construct_cb_qa")
claims, checked = pl.read_parquet(inputs.claims), pl.read_parquet(inputs.checked)
records = qa_records(claims, checked, seed=params.seed)
with atomic_path(output.qa) as tmp, open(tmp, "w", encoding="utf-8") as handle:
    for record in records:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
statuses = dict(checked.group_by("status").len().iter_rows())
steps = list(pl.read_parquet(inputs.counts).iter_rows()) + [
    ("facts sampled for the model steps", checked.get_column("fact_id").n_unique()),
    ("claim-evidence pairs generated", checked.height),
    ("after the refusal filter", checked.height - sum(n for s, n in statuses.items() if s.startswith("refusal"))),
    ("claim-evidence pairs after quality control", statuses.get("kept", 0)),
    ("QA pairs", len(records)),
]
table = steps_table(steps)
caption = (
    "ConflictBank construction: counts after each step (n = the count itself), beside the paper's where its text "
    "states one (Table 3's cells were lost from the text copy: only the abstract's totals). "
    f"Evidence kinds per fact: {', '.join(KINDS)}; "
    f"the model steps ran on a seeded sample. Quality checks: {', '.join(params.checks)}; drop reasons: "
    + "; ".join(f"{s}: {n}" for s, n in sorted(statuses.items()) if s != "kept")
)
write_markdown_and_csv(table, output.md, output.csv, caption=caption)
log.info("%d QA pairs -> %s\n%s", len(records), output.qa, markdown(table, caption=caption))

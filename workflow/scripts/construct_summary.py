"""Rule construct_summary: both pipelines' counts after each step beside the papers', and every
rejection counted by its reason (the report's construction section)."""

import csv
import json
from pathlib import Path

from conflictlab.construction.summary import (
    conflictbank_steps,
    contextconflict_steps,
    rejections_table,
    steps_table,
)
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging
from conflictlab.report.tables import markdown, write_markdown_and_csv

params, inputs, output = snakemake.params, snakemake.input, snakemake.output
log = configure_logging(snakemake.log[0], "construct_summary")
with open(inputs.cb_steps, newline="", encoding="utf-8") as handle:
    cb_steps = list(csv.DictReader(handle))
cc_rejections = read_tables(inputs.cc_rejected).to_pylist()
audit = json.loads((Path(inputs.audit) / "plan.json").read_text())
steps = steps_table(
    conflictbank_steps(cb_steps)
    + contextconflict_steps(read_tables(inputs.cc_instances).to_pylist(), cc_rejections, audit)
)
rejections = rejections_table(
    read_tables(inputs.cb_rejected).to_pylist(),
    read_tables(inputs.cb_checked).column("status").to_pylist(),
    cc_rejections,
)
quality = (
    f"Generator {params.generator} (local), judge {params.judge}. The demo's generator is a small local model on "
    "purpose, so its data is poor by design: the demo shows that every step executes, and it reproduces neither "
    "dataset's quality."
    if params.local
    else f"Generator {params.generator} (hosted), judge {params.judge}."
)
write_markdown_and_csv(
    steps,
    output.steps_md,
    output.steps_csv,
    caption="Construction: the count after each step (n, itself the count) beside the paper's where a source gives "
    f"it (paper_source). {quality} Audit sheets: {inputs.audit}/.",
)
write_markdown_and_csv(
    rejections,
    output.rejections_md,
    output.rejections_csv,
    caption="Construction: every rejection (n) by pipeline, file (or prompt), stage and reason; the rows themselves "
    "are in results/construction/conflictbank/dump.rejected.parquet and results/construction/contextconflict/"
    f"rejected.parquet. {quality}",
)
log.info("%s\n%s", markdown(steps, caption="steps"), markdown(rejections, caption="rejections"))

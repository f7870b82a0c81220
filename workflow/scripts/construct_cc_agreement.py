"""Rule construct_cc_agreement: completed audit sheets -> agreement (Wilson intervals) and the disagreements."""

import json

from conflictlab.construction.audit import agreement, read_sheets
from conflictlab.logs import configure_logging
from conflictlab.report.tables import markdown, write_markdown_and_csv

log = configure_logging(snakemake.log[0], "construct_cc_agreement")
rows = read_sheets(dict(zip(snakemake.params.annotators, snakemake.input.sheets)))
table, disagreements = agreement(rows)
caption = (
    "Audit of the constructed ContextConflict samples: percent agreement of the two annotators on the double-annotated "
    "items (verdict, and the corrected answer when wrong) and the share judged wrong, each with its n and a "
    "Wilson 95% interval "
    "(none below n = 2)."
)
write_markdown_and_csv(table, snakemake.output.md, snakemake.output.csv, caption=caption)
with open(snakemake.output.disagreements, "w", encoding="utf-8") as handle:
    json.dump(disagreements, handle, indent=1, ensure_ascii=False)
log.info("%d sheet rows, %d disagreements\n%s", len(rows), len(disagreements), markdown(table, caption=caption))

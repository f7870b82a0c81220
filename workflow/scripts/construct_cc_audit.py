"""Rule construct_cc_audit: constructed samples and preserved originals -> audit sheets (CSV, HTML per annotator)."""

import json

from conflictlab.construction.audit import audit_plan, write_sheets
from conflictlab.construction.contextconflict import (
    CONSTRUCTED_SUBSETS,
    instance_items,
    original_items,
)
from conflictlab.io import atomic_path, read_tables
from conflictlab.logs import configure_logging

params, inputs = snakemake.params, snakemake.input
log = configure_logging(snakemake.log[0], "construct_cc_audit")
audit = params.audit
constructed = audit_plan(
    instance_items(read_tables(inputs.instances)),
    double=audit["double"],
    sampled=audit["sampled"],
    sample_rate=audit["sample_rate"],
    spot_rate=audit["spot_rate"],
    seed=params.seed,
    constructed=True,
)
originals = [item for path in inputs.originals for item in original_items(read_tables(path), CONSTRUCTED_SUBSETS)]
spot = audit_plan(
    originals,
    double=(),
    sampled=(),
    sample_rate=audit["sample_rate"],
    spot_rate=audit["spot_rate"],
    seed=params.seed,
    constructed=False,
)
with atomic_path(snakemake.output.sheets, directory=True) as folder:
    write_sheets(constructed + spot, folder)
    (folder / "plan.json").write_text(
        json.dumps([{k: i[k] for k in ("item_id", "audit", "annotators")} for i in constructed + spot], indent=1)
    )
log.info(
    "audit: %d constructed items (%s), %d preserved originals spot-checked",
    len(constructed),
    {a: sum(i["audit"] == a for i in constructed) for a in ("double", "sampled")},
    len(spot),
)

"""The construction section of the report: the counts after each step of both
pipelines beside the papers' (ConflictBank's Table 3 shape), and every
rejection counted by its reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa

from conflictlab.construction.conflictbank import PAPER_COUNTS

CONFLICTBANK_URL = "https://arxiv.org/html/2408.12076v1"
# Where each paper number was read. ConflictBank's Table 3 (§B.2) gives the volume after
# every step, but neither the stored copy of that page (searched 2026-12-06: the excerpts it
# returns hold the abstract and §1, not the appendix) nor the text copy (003_f1d9f2914a4daca0.txt,
# the table's cells lost) gives its cells: only the totals of the abstract and §1 are shown,
# and every other step says so.
CONFLICTBANK_TOTAL_SOURCE = f"{CONFLICTBANK_URL}, abstract and §1 (the totals of Table 3)"
CONFLICTBANK_STEP_SOURCE = f"{CONFLICTBANK_URL}, Table 3 (§B.2): this step's cell is not in the stored copy"
# ContextConflict §3 (text copy 000_9b6c6cf2b7e20b09.txt, line 40): 1,734 semi-synthetic
# instances, 29.99% of 5,781; its per-type usage (Appendix Table 5) lost its cells.
CONTEXTCONFLICT_SOURCE = "ContextConflict §3 (arXiv 2609.03148; text copy line 40)"
CONTEXTCONFLICT_PAPER = {"samples built (final, rules passed)": 1_734}

STEPS_SCHEMA = pa.schema(
    [
        pa.field("pipeline", pa.string(), nullable=False),
        pa.field("step", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("paper", pa.int64()),  # null: no paper number for this step
        pa.field("paper_source", pa.string()),
    ]
)

REJECTIONS_SCHEMA = pa.schema(
    [
        pa.field("pipeline", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),  # the input file, or the prompt of a generation
        pa.field("stage", pa.string(), nullable=False),  # read | generate | quality control
        pa.field("reason", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
    ]
)


def conflictbank_steps(steps: Iterable[Mapping]) -> list[dict]:
    """Rows of :data:`STEPS_SCHEMA` from the ConflictBank steps table (rows with
    ``step`` and ``count``, :func:`conflictlab.construction.conflictbank.steps_table`)."""
    return [
        {
            "pipeline": "ConflictBank",
            "step": row["step"],
            "n": int(row["count"]),
            "paper": PAPER_COUNTS.get(row["step"]),
            "paper_source": CONFLICTBANK_TOTAL_SOURCE if row["step"] in PAPER_COUNTS else CONFLICTBANK_STEP_SOURCE,
        }
        for row in steps
    ]


def contextconflict_steps(instances: Sequence[Mapping], rejections: Sequence[Mapping], audit: Sequence[Mapping]):
    """Rows of :data:`STEPS_SCHEMA` for ContextConflict's construction:
    ``instances`` rows of :data:`~conflictlab.construction.contextconflict.INSTANCE_SCHEMA`,
    ``rejections`` of its ``REJECTION_SCHEMA``, ``audit`` the audit plan's items
    (``audit``: double | sampled | spot)."""
    final = [r for r in instances if r["final"]]
    counts = [
        ("base records refused at reading", sum(r["stage"] == "read" for r in rejections)),
        ("generations (every request, both SciFact steps)", len(instances)),
        ("generations rejected by the prompt's rules", sum(r["rejection"] is not None for r in instances)),
        ("final generations (one per sample)", len(final)),
        ("samples built (final, rules passed)", sum(r["sample"] is not None for r in final)),
    ]
    audited = Counter(item["audit"] for item in audit)
    counts += [(f"audit sheet items: {kind}", audited[kind]) for kind in ("double", "sampled", "spot")]
    return [
        {
            "pipeline": "ContextConflict",
            "step": step,
            "n": int(n),
            "paper": CONTEXTCONFLICT_PAPER.get(step),
            "paper_source": CONTEXTCONFLICT_SOURCE if step in CONTEXTCONFLICT_PAPER else None,
        }
        for step, n in counts
    ]


def steps_table(rows: Sequence[Mapping]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=STEPS_SCHEMA)


def rejections_table(
    dump_rejections: Iterable[Mapping], evidence_statuses: Iterable[str], cc_rejections: Iterable[Mapping]
) -> pa.Table:
    """Every rejection counted by pipeline, file, stage and reason (:data:`REJECTIONS_SCHEMA`):
    ``dump_rejections`` rows of :data:`conflictlab.construction.wikidata.REJECTION_SCHEMA`,
    ``evidence_statuses`` the quality controls' status of each evidence text ("kept" or the
    drop reason), ``cc_rejections`` ContextConflict's rejection rows."""
    counts: Counter = Counter()
    for row in dump_rejections:
        counts["ConflictBank", row["file"], "read", f"{row['field']}: {row['reason']}"] += 1
    for status in evidence_statuses:
        if status != "kept":
            counts["ConflictBank", "evidence.parquet", "quality control", status] += 1
    for row in cc_rejections:
        counts["ContextConflict", row["source"], row["stage"], row["reason"]] += 1
    rows = [{"pipeline": p, "file": f, "stage": s, "reason": r, "n": n} for (p, f, s, r), n in sorted(counts.items())]
    return pa.Table.from_pylist(rows, schema=REJECTIONS_SCHEMA)

"""ConflictBank QA records: the hub file, a local JSON Lines file or the demo,
read into one table with one row per record under one consistent naming.

The hub (``Warrieryes/CB_qa``) and the authors' own pipeline spell the same
fields differently (``misinformation_conflict_evidence_evidence`` in the hub
is ``fact_conflict_evidence`` in their ``prompt.py``; ``replace_option`` is
``replaced_option``). :data:`HUB_FIELDS` and :data:`PIPELINE_FIELDS` record
both mappings onto this project's names; a record may use either spelling.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import pyarrow as pa

from conflictlab.sampling import sample_per_group

EVIDENCE_KINDS = ("default", "misinformation", "temporal", "semantic")
CONFLICT_KINDS = EVIDENCE_KINDS[1:]
LETTERS = ("A", "B", "C", "D")
# The hub writes the news style as "new".
STYLES = {"wikipedia": "wikipedia", "new": "news", "news": "news", "book": "book"}

# hub name -> this project's name
HUB_FIELDS = {
    "relation": "relation",
    "subject": "subject",
    "subject_description": "subject_description",
    "semantic_description": "semantic_description",
    "object": "object",
    "object_description": "object_description",
    "replaced_object": "replaced_object",
    "replaced_description": "replaced_description",
    "default_claim": "default_claim",
    "default_evidence_category": "default_style",
    "default_evidence": "default_evidence",
    "misinformation_conflict_claim": "misinformation_claim",
    "misinformation_conflict_evidence_category": "misinformation_style",
    "misinformation_conflict_evidence_evidence": "misinformation_evidence",
    "temporal_conflict_time_span": "temporal_span",
    "temporal_conflict_claim": "temporal_claim",
    "temporal_conflict_evidence_category": "temporal_style",
    "temporal_conflict_evidence": "temporal_evidence",
    "semantic_conflict_claim": "semantic_claim",
    "semantic_conflict_evidence_category": "semantic_style",
    "semantic_conflict_evidence": "semantic_evidence",
    "question": "question",
    "options": "options",
    "correct_option": "correct_letter",
    "replace_option": "replaced_letter",
    "uncertain_option": "uncertain_letter",
}
# the authors' prompt.py name -> this project's name (where it differs from the hub's)
PIPELINE_FIELDS = {
    "correct_evidence": "default_evidence",
    "fact_conflict_evidence": "misinformation_evidence",
    "conflict_time_span": "temporal_span",
    "replaced_option": "replaced_letter",
}

_HUB_NAME = {ours: hub for hub, ours in HUB_FIELDS.items()}  # for error messages

RECORD_SCHEMA = pa.schema(
    [pa.field("record_id", pa.int64(), nullable=False)]
    + [
        pa.field(name, pa.list_(pa.string()) if name in ("options", "temporal_span") else pa.string(), nullable=False)
        for name in HUB_FIELDS.values()
    ]
    + [pa.field("source", pa.string(), nullable=False)]
)

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("record_id", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


class RecordError(ValueError):
    """A record that cannot be read; the message names the source, the record and the field."""

    def __init__(self, source: str, record_id: int, field_name: str, problem: str):
        super().__init__(f"{source}: record {record_id}: field {field_name!r}: {problem}")
        self.source, self.record_id, self.field, self.problem = source, record_id, field_name, problem


def normalise_record(raw: Mapping[str, Any], *, source: str, record_id: int) -> dict:
    """One hub (or pipeline-named) record as a row of :data:`RECORD_SCHEMA`.

    Raises :class:`RecordError` for a missing or mistyped field, options that
    are not four strings, a letter outside A–D, letters that collide, a time
    span of zero or more than two dates, or an unknown evidence style.
    """
    if not isinstance(raw, Mapping):
        raise RecordError(source, record_id, "<record>", f"is a {type(raw).__name__}, not a JSON object")
    renamed: dict[str, Any] = {}
    for name, value in raw.items():
        ours = HUB_FIELDS.get(name) or PIPELINE_FIELDS.get(name)
        if ours is None:
            continue
        if ours in renamed and renamed[ours] != value:
            raise RecordError(
                source, record_id, name, f"names {ours!r}, which another spelling in the record gives a different value"
            )
        renamed[ours] = value

    row: dict[str, Any] = {"record_id": record_id, "source": source}
    for hub_name, ours in HUB_FIELDS.items():
        if ours not in renamed:
            raise RecordError(source, record_id, hub_name, "is missing")
        value = renamed[ours]
        if ours in ("options", "temporal_span"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RecordError(source, record_id, hub_name, "must be a list of strings")
        elif not isinstance(value, str):
            raise RecordError(source, record_id, hub_name, f"must be a string, got {type(value).__name__}")
        elif not value.strip():
            raise RecordError(source, record_id, hub_name, "is empty")
        row[ours] = value

    if len(row["options"]) != 4:
        raise RecordError(source, record_id, "options", f"has {len(row['options'])} entries, not 4")
    letters = {}
    for ours in ("correct_letter", "replaced_letter", "uncertain_letter"):
        hub_name = _HUB_NAME[ours]
        letter = row[ours].strip().upper()
        if letter not in LETTERS:
            raise RecordError(source, record_id, hub_name, f"{row[ours]!r} is not one of A, B, C, D")
        if letter in letters.values():
            other = next(k for k, v in letters.items() if v == letter)
            raise RecordError(source, record_id, hub_name, f"{letter} is also {other}")
        letters[hub_name] = letter
        row[ours] = letter
    if not 1 <= len(row["temporal_span"]) <= 2:
        raise RecordError(
            source,
            record_id,
            "temporal_conflict_time_span",
            f"has {len(row['temporal_span'])} dates; one or two are expected",
        )
    for kind in EVIDENCE_KINDS:
        style = row[f"{kind}_style"]
        if style not in STYLES:
            raise RecordError(
                source, record_id, _HUB_NAME[f"{kind}_style"], f"{style!r} is not one of {sorted(STYLES)}"
            )
        row[f"{kind}_style"] = STYLES[style]
    return row


@dataclass
class BuildResult:
    """Accepted rows and recorded rejections of one read."""

    rows: list[dict] = field(default_factory=list)
    rejections: list[dict] = field(default_factory=list)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return (
            pa.Table.from_pylist(self.rows, schema=RECORD_SCHEMA),
            pa.Table.from_pylist(self.rejections, schema=REJECTION_SCHEMA),
        )


def read_jsonl(path: str | os.PathLike) -> Iterable[tuple[int, Any]]:
    """(line number from 0, parsed object) for each non-blank line; a line that
    is not JSON is yielded as a RecordError so the caller can reject it."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as err:
                yield number, RecordError(str(path), number, "<line>", f"is not JSON ({err.msg} at column {err.colno})")


def build_records(
    records: Iterable[tuple[int, Any]],
    *,
    source: str,
    on_error: str = "fail",
    max_per_relation: int | None = None,
    seed: int = 0,
) -> BuildResult:
    """Validate ``(record_id, raw record)`` pairs into rows.

    ``on_error="fail"`` raises the first :class:`RecordError`; ``"reject"``
    records it and goes on. ``max_per_relation`` keeps a seeded sample of that
    many accepted records per relation (the full hub set has 553k), rows in
    their original order.
    """
    if on_error not in ("fail", "reject"):
        raise ValueError(f"on_error must be 'fail' or 'reject', got {on_error!r}")
    result = BuildResult()
    for record_id, raw in records:
        try:
            if isinstance(raw, RecordError):
                raise raw
            result.rows.append(normalise_record(raw, source=source, record_id=record_id))
        except RecordError as err:
            if on_error == "fail":
                raise
            result.rejections.append(
                {"record_id": record_id, "source": source, "field": err.field, "reason": err.problem}
            )
    if max_per_relation is not None:
        result.rows = sample_per_group(result.rows, itemgetter("relation"), max_per_relation, seed=seed)
    return result

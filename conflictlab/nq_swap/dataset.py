"""NQ-Swap records in the released format, validated into one table (one row per item).

The release (Hugging Face ``pminervini/NQ-Swap``, split ``dev``; its Parquet file
``data/dev-00000-of-00001.parquet``) has five fields per record: ``question``
(str), ``org_context`` (str: a Natural Questions passage, HTML-like tags such as
``<P>`` kept), ``org_answer`` (list of str: the gold answers in that passage),
``sub_context`` (str: the same passage with the answer entity substituted) and
``sub_answer`` (list of str: the substituted entity). Rows are read from the hub,
a local copy of that Parquet file, or a JSON Lines file with the same fields (the
demo, ``resources/demo/nq_swap/dev.jsonl``). An item's id is its row index in
the source (``nqswap-<index>``), so a sample keeps its id.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from conflictlab.nq_swap.metrics import normalize_answer

FIELDS = ("question", "org_context", "org_answer", "sub_context", "sub_answer")
TEXT_FIELDS = ("question", "org_context", "sub_context")
ANSWER_FIELDS = ("org_answer", "sub_answer")

ITEM_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("row", pa.int64(), nullable=False),  # row index in the source
        pa.field("question", pa.string(), nullable=False),
        pa.field("org_context", pa.string(), nullable=False),
        pa.field("org_answer", pa.list_(pa.string()), nullable=False),
        pa.field("sub_context", pa.string(), nullable=False),
        pa.field("sub_answer", pa.list_(pa.string()), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ]
)

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("row", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


class RecordError(ValueError):
    """A record that cannot be read; the message names the source, the row and the field."""

    def __init__(self, source: str, row: int, field_name: str, problem: str):
        super().__init__(f"{source}: row {row}: field {field_name!r}: {problem}")
        self.source, self.row, self.field, self.problem = source, row, field_name, problem


def item_id(row: int) -> str:
    return f"nqswap-{row}"


def normalise_record(raw: Mapping[str, Any], *, source: str, row: int) -> dict:
    """One released record as a row of :data:`ITEM_SCHEMA`.

    Raises :class:`RecordError` for a missing field, a text field that is not a
    non-empty string, an answer field that is not a non-empty list of non-empty
    strings (a bare string is taken as a one-answer list, as some copies store
    it), a substituted context that does not differ from the original, and an
    item whose substituted and original answers match after SQuAD normalisation
    (exact match could not tell them apart).
    """
    if not isinstance(raw, Mapping):
        raise RecordError(source, row, "<record>", f"is a {type(raw).__name__}, not an object")
    out: dict[str, Any] = {"item_id": item_id(row), "row": row, "source": source}
    for name in FIELDS:
        if name not in raw:
            raise RecordError(source, row, name, "is missing")
        value = raw[name]
        if name in TEXT_FIELDS:
            if not isinstance(value, str) or not value.strip():
                raise RecordError(source, row, name, f"must be a non-empty string, got {value!r:.60}")
            out[name] = value
            continue
        answers = [value] if isinstance(value, str) else value
        if hasattr(answers, "tolist"):  # a numpy array from a Parquet reader
            answers = answers.tolist()
        if not isinstance(answers, list) or not answers:
            raise RecordError(source, row, name, f"must be a non-empty list of strings, got {value!r:.60}")
        if not all(isinstance(a, str) and a.strip() for a in answers):
            raise RecordError(source, row, name, f"holds an empty or non-string answer: {answers!r:.80}")
        out[name] = list(answers)
    if out["org_context"] == out["sub_context"]:
        raise RecordError(source, row, "sub_context", "is the original context unchanged")
    shared = {normalize_answer(a) for a in out["org_answer"]} & {normalize_answer(a) for a in out["sub_answer"]}
    if shared:
        raise RecordError(source, row, "sub_answer", f"matches org_answer after normalisation: {sorted(shared)}")
    return out


def read_local(path: str | os.PathLike) -> Iterable[tuple[int, Any]]:
    """(row index, record) of a local copy: the release's Parquet file, or JSON Lines with its fields.
    A line that is not JSON is a :class:`RecordError` naming the file and line."""
    path = os.fspath(path)
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        yield from enumerate(pq.read_table(path).to_pylist())
        return
    with open(path, encoding="utf-8") as handle:
        row = 0
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(path, row, "<line>", f"line {number} is not JSON ({error.msg})") from None
            yield row, record
            row += 1


def hub_records(dataset: str, *, revision: str | None, split: str) -> Iterable[tuple[int, Any]]:
    """(row index, record) of the hub dataset (``datasets.load_dataset``; needs the hub or its cache,
    ``HF_DATASETS_OFFLINE`` honoured)."""
    from datasets import load_dataset

    yield from enumerate(load_dataset(dataset, revision=revision, split=split))


@dataclass
class Build:
    """Items read and records rejected (``on_error: reject``)."""

    items: list[dict] = field(default_factory=list)
    rejections: list[dict] = field(default_factory=list)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return (
            pa.Table.from_pylist(self.items, schema=ITEM_SCHEMA),
            pa.Table.from_pylist(self.rejections, schema=REJECTION_SCHEMA),
        )


def build_items(
    records: Iterable[tuple[int, Any]], *, source: str, on_error: str, max_items: int | None, seed: int
) -> Build:
    """Validated items of ``records`` ((row, record) pairs), and the rejected ones.

    ``on_error``: ``fail`` raises the first :class:`RecordError`; ``reject``
    lists it in ``rejections`` and goes on. ``max_items``: a seeded sample of
    that many valid items, kept in source order (None: all).
    """
    if on_error not in ("fail", "reject"):
        raise ValueError(f"on_error must be 'fail' or 'reject', got {on_error!r}")
    build = Build()
    for row, raw in records:
        try:
            build.items.append(normalise_record(raw, source=source, row=row))
        except RecordError as error:
            if on_error == "fail":
                raise
            build.rejections.append({"row": row, "source": source, "field": error.field, "reason": error.problem})
    if not build.items:
        raise ValueError(f"{source}: no valid NQ-Swap record ({len(build.rejections)} rejected)")
    if max_items is not None and max_items < len(build.items):
        import numpy as np

        keep = np.sort(np.random.default_rng(seed).choice(len(build.items), size=max_items, replace=False))
        build.items = [build.items[i] for i in keep]
    return build

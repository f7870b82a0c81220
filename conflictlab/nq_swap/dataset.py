"""NQ-Swap records in the released format, validated into one table (one row per item).

The release (Hugging Face ``pminervini/NQ-Swap``, split ``dev``, 4,746 records; its Parquet file
``data/dev-00000-of-00001.parquet``) has five fields per record: ``question``
(str), ``org_context`` (str: a Natural Questions passage, HTML-like tags such as
``<P>``, ``<Table>``, ``<Li>`` kept), ``org_answer`` (list of str: the gold answers in that passage,
one to 23 of them, repeats kept), ``sub_context`` (str: the same passage with the answer entity substituted,
at every place it occurs) and ``sub_answer`` (list of str: the substituted entity). The dataset card
declares exactly these columns, the answers as a sequence of strings (:data:`HUB_SCHEMA`). The split was
pushed from a JSON Lines file with the same fields, one object a line, non-ASCII characters unescaped
(a copy: github.com/kushalc/nd-lora, ``leaderboard/cli/nqswap/merged.jsonl``; a real excerpt is in
``tests/fixtures/real/nq_swap/``). The hub repository also holds splits ``original`` and ``substituted``
with a different layout (``question``, ``context``, ``answer``): one context per record, not a conflict
pair, refused by name (:func:`table_records`).

Rows are read from the hub, a local copy of that Parquet file, or a JSON Lines file with the same fields
(the demo, ``resources/demo/nq_swap/dev.jsonl``). The hub and a local Parquet file go through the same
column check (:func:`table_records`), and every record, whatever its source, through
:func:`normalise_record`. An item's id is its row index in the source (``nqswap-<index>``), so a sample
keeps its id.
"""

from __future__ import annotations

import ast
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

# The hub's columns and types (the dataset card's features: strings, and sequences of strings for the answers).
HUB_SCHEMA = pa.schema(
    [
        pa.field("question", pa.string()),
        pa.field("org_context", pa.string()),
        pa.field("org_answer", pa.list_(pa.string())),
        pa.field("sub_context", pa.string()),
        pa.field("sub_answer", pa.list_(pa.string())),
    ]
)

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
        pa.field("line", pa.int64()),  # a JSON Lines file's line (row + 1); null for a Parquet or hub row
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


class RecordError(ValueError):
    """A record that cannot be read; the message names the source, the row and the field."""

    def __init__(self, source: str, row: int, field_name: str, problem: str, line: int | None = None):
        at = f"row {row}" if line is None else f"row {row} (line {line})"
        super().__init__(f"{source}: {at}: field {field_name!r}: {problem}")
        self.source, self.row, self.field, self.problem, self.line = source, row, field_name, problem, line


def item_id(row: int) -> str:
    return f"nqswap-{row}"


def normalise_record(raw: Mapping[str, Any], *, source: str, row: int) -> dict:
    """One released record as a row of :data:`ITEM_SCHEMA`.

    Raises :class:`RecordError` for a missing field, a text field that is not a
    non-empty string, an answer field that is not a non-empty list of non-empty
    strings (read by :func:`answer_list`), a substituted context that does not differ from the original, and an
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
        answers = answer_list(value, source=source, row=row, field_name=name)
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


def answer_list(value: Any, *, source: str, row: int, field_name: str) -> Any:
    """An answer cell as a list: a list as it is (a numpy array from a Parquet reader made a list); a string
    holding a list literal, in either quote style, as the list it writes (``"['Jane Austen']"``, as a copy
    exported to CSV stores it); any other string as a one-answer list. A string that opens with ``[`` and
    closes with ``]`` but is not a literal list of strings is a :class:`RecordError`, not an answer."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return [value]
    try:
        answers = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        answers = None
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise RecordError(
            source, row, field_name, f"looks like a list literal but is not a list of strings: {value!r:.80}"
        )
    return answers


def table_records(table: pa.Table, source: str) -> Iterable[tuple[int, Any]]:
    """(row index, record) of a table in the hub's layout (:data:`HUB_SCHEMA`): the hub's split as Arrow, or
    a local copy of its Parquet file. Columns beyond the five are ignored; a missing one is a ValueError
    naming the source and the columns it has (the hub's ``original`` and ``substituted`` splits, one
    context per record, are named as such)."""
    missing = [name for name in FIELDS if name not in table.column_names]
    if missing:
        single = {"question", "context", "answer"} <= set(table.column_names)
        hint = (
            ": this is the layout of the hub's 'original' or 'substituted' split, one context per record; "
            "NQ-Swap's conflict pairs are the 'dev' split"
            if single
            else ""
        )
        raise ValueError(f"{source}: no column {', '.join(missing)} (it has {', '.join(table.column_names)}){hint}")
    yield from enumerate(table.select(list(FIELDS)).to_pylist())


def read_local(path: str | os.PathLike) -> Iterable[tuple[int, Any]]:
    """(row index, record) of a local copy: the release's Parquet file (:func:`table_records`), or JSON Lines
    with its fields, where a record's row is its line's index (line - 1; a blank line is no record). A line
    that is not JSON is a :class:`RecordError` naming the file and line."""
    path = os.fspath(path)
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        yield from table_records(pq.read_table(path), path)
        return
    with open(path, encoding="utf-8") as handle:
        for row, line in enumerate(handle):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(path, row, "<line>", f"not JSON ({error.msg})", line=row + 1) from None
            yield row, record


def hub_records(dataset: str, *, revision: str | None, split: str) -> Iterable[tuple[int, Any]]:
    """(row index, record) of the hub dataset (``datasets.load_dataset``; needs the hub or its cache,
    ``HF_DATASETS_OFFLINE`` honoured), read as Arrow through :func:`table_records`, as a local Parquet copy is."""
    from datasets import load_dataset

    table = load_dataset(dataset, revision=revision, split=split).with_format("arrow")[:]
    yield from table_records(table, hub_source(dataset, revision, split))


def hub_source(dataset: str, revision: str | None, split: str) -> str:
    """How errors and rejections name a hub split: ``<dataset>@<revision or main>:<split>``."""
    return f"{dataset}@{revision or 'main'}:{split}"


@dataclass(frozen=True)
class Source:
    """The records a config section names: how errors name them, the (row, record) pairs, and whether they
    are a JSON Lines file's (so a row's line is row + 1; :func:`build_items`'s ``lines``)."""

    name: str
    records: Iterable[tuple[int, Any]]
    lines: bool


def open_source(section: Mapping[str, Any]) -> Source:
    """The records of the ``nq_swap`` config section: ``source: local`` reads ``path`` (:func:`read_local`),
    ``huggingface`` the hub's ``hf_dataset`` at ``hf_revision``, split ``split`` (:func:`hub_records`)."""
    if section["source"] == "local":
        path = os.fspath(section["path"])
        return Source(path, read_local(path), not path.endswith(".parquet"))
    dataset, revision, split = section["hf_dataset"], section.get("hf_revision"), section["split"]
    return Source(hub_source(dataset, revision, split), hub_records(dataset, revision=revision, split=split), False)


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
    records: Iterable[tuple[int, Any]],
    *,
    source: str,
    on_error: str,
    max_items: int | None,
    seed: int,
    lines: bool = False,
) -> Build:
    """Validated items of ``records`` ((row, record) pairs), and the rejected ones.

    ``on_error``: ``fail`` raises the first :class:`RecordError`; ``reject``
    lists it in ``rejections`` and goes on. ``max_items``: a seeded sample of
    that many valid items, kept in source order (None: all). ``lines``: the
    records are a JSON Lines file's (:func:`read_local`), so each error and
    rejection names its line, row + 1.
    """
    if on_error not in ("fail", "reject"):
        raise ValueError(f"on_error must be 'fail' or 'reject', got {on_error!r}")
    build = Build()
    for row, raw in records:
        try:
            build.items.append(normalise_record(raw, source=source, row=row))
        except RecordError as error:
            line = row + 1 if lines else None
            if on_error == "fail":
                raise RecordError(source, row, error.field, error.problem, line) from None
            build.rejections.append(
                {"row": row, "source": source, "line": line, "field": error.field, "reason": error.problem}
            )
    if not build.items:
        raise ValueError(f"{source}: no valid NQ-Swap record ({len(build.rejections)} rejected)")
    if max_items is not None and max_items < len(build.items):
        import numpy as np

        keep = np.sort(np.random.default_rng(seed).choice(len(build.items), size=max_items, replace=False))
        build.items = [build.items[i] for i in keep]
    return build

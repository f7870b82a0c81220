"""Streaming a Wikidata JSON dump: one pass over a compressed file, one line at a time.

The dump (``latest-all.json.bz2`` / ``.gz``) is one JSON array written one
entity per line::

    [
    {"type":"item","id":"Q42","labels":{"en":{"language":"en","value":"..."}}, "descriptions":{...},
     "claims":{"P69":[{"mainsnak":{"snaktype":"value","property":"P69",
        "datavalue":{"value":{"entity-type":"item","id":"Q691283"},"type":"wikibase-entityid"}},
        "type":"statement","rank":"normal"}], ...}},
    ...
    ]

Each entity line ends with a comma except the last. A scatter job reads the
lines whose number ``n`` (from 1) has ``n % n_chunks == chunk``: every job
decompresses the whole stream (cheap beside JSON parsing) but parses only its
share, so no split step writes a second copy of the dump. A line that cannot
be read becomes a rejection row (file, line, reason); nothing is dropped silently.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

import pyarrow as pa

ENTITY_ID = re.compile(r"^[QP][1-9][0-9]*$")
ITEM_ID = re.compile(r"^Q[1-9][0-9]*$")
RANK_ORDER = {"preferred": 0, "normal": 1}  # deprecated statements are never used

ENTITY_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("label", pa.string(), nullable=False),  # English label
        pa.field("description", pa.string()),  # English description; null when absent
        pa.field("type", pa.string()),  # first "instance of" (P31) value; null when absent
    ]
)

FACT_SCHEMA = pa.schema(
    [
        pa.field("subject_id", pa.string(), nullable=False),
        pa.field("relation", pa.string(), nullable=False),
        pa.field("object_id", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),  # the subject's line in the dump (from 1)
    ]
)

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("file", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),  # from 1
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)

COUNT_SCHEMA = pa.schema([pa.field("step", pa.string(), nullable=False), pa.field("count", pa.int64(), nullable=False)])


def open_dump(path: str | os.PathLike) -> IO[bytes]:
    """The dump's decompressed byte stream, read lazily: bz2 and gzip by their
    magic bytes (not the file name), anything else as plain text."""
    with open(path, "rb") as handle:
        magic = handle.read(3)
    if magic == b"BZh":
        return bz2.open(path, "rb")
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


class LineError(ValueError):
    def __init__(self, field_name: str, reason: str):
        super().__init__(f"{field_name}: {reason}")
        self.field, self.reason = field_name, reason


FLUSH_ROWS = 65_536  # rows held as Python lists before they become Arrow arrays (bounds a chunk's memory)


@dataclass
class ChunkScan:
    """One chunk's entities and facts (Arrow batches plus the rows not yet
    flushed), its rejections and counts."""

    entities: dict[str, list] = field(default_factory=lambda: {name: [] for name in ENTITY_SCHEMA.names})
    facts: dict[str, list] = field(default_factory=lambda: {name: [] for name in FACT_SCHEMA.names})
    rejections: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    batches: dict[str, list[pa.RecordBatch]] = field(default_factory=lambda: {"entities": [], "facts": []})

    def count(self, step: str, n: int = 1) -> None:
        self.counts[step] = self.counts.get(step, 0) + n

    def flush(self, force: bool = False) -> None:
        """Move held rows into Arrow batches (when ``FLUSH_ROWS`` are held, or ``force``)."""
        for name, columns, schema in (("entities", self.entities, ENTITY_SCHEMA), ("facts", self.facts, FACT_SCHEMA)):
            held = len(columns[schema.names[0]])
            if held and (force or held >= FLUSH_ROWS):
                self.batches[name].append(pa.RecordBatch.from_pydict(columns, schema=schema))
                for values in columns.values():
                    values.clear()

    def tables(self) -> tuple[pa.Table, pa.Table, pa.Table, pa.Table]:
        """(entities, facts, rejections, counts) tables of the schemas above."""
        self.flush(force=True)
        return (
            pa.Table.from_batches(self.batches["entities"], schema=ENTITY_SCHEMA),
            pa.Table.from_batches(self.batches["facts"], schema=FACT_SCHEMA),
            pa.Table.from_pylist(self.rejections, schema=REJECTION_SCHEMA),
            pa.Table.from_pylist([{"step": k, "count": v} for k, v in self.counts.items()], schema=COUNT_SCHEMA),
        )


def _english(entity: dict, key: str) -> str | None:
    values = entity.get(key)
    if values is None:
        return None
    if not isinstance(values, dict):
        raise LineError(key, f"is a {type(values).__name__}, not an object of languages")
    english = values.get("en")
    if english is None:
        return None
    if not isinstance(english, dict) or not isinstance(english.get("value"), str):
        raise LineError(f"{key}.en", "has no string 'value'")
    return english["value"]


def _item_value(statement: dict, where: str) -> str | None:
    """The item id a statement's main snak names; None for a deprecated
    statement or a 'somevalue'/'novalue' snak (valid Wikidata, no object)."""
    if not isinstance(statement, dict) or not isinstance(statement.get("mainsnak"), dict):
        raise LineError(where, "a statement without a 'mainsnak' object")
    if statement.get("rank") not in RANK_ORDER:
        return None
    snak = statement["mainsnak"]
    if snak.get("snaktype") != "value":
        return None
    value = (snak.get("datavalue") or {}).get("value")
    item = value.get("id") if isinstance(value, dict) else None
    if not isinstance(item, str) or not ITEM_ID.match(item):
        raise LineError(f"{where}.mainsnak.datavalue", f"is not an item value ({json.dumps(value)[:60]})")
    return item


def best_object(statements, where: str) -> str | None:
    """One triple per subject-relation pair: the first preferred statement,
    else the first normal one (the dump's order); None when none names an item."""
    if not isinstance(statements, list):
        raise LineError(where, f"is a {type(statements).__name__}, not a list of statements")
    best, best_rank = None, len(RANK_ORDER)
    for index, statement in enumerate(statements):
        item = _item_value(statement, f"{where}[{index}]")
        rank = RANK_ORDER.get(statement.get("rank"), len(RANK_ORDER))
        if item is not None and rank < best_rank:
            best, best_rank = item, rank
    return best


def read_entity(
    entity, relations: Sequence[str]
) -> tuple[tuple[str, str, str | None, str | None] | None, list[tuple[str, str]]]:
    """(entity row or None, [(relation, object id)]) of one parsed line.

    Items without an English label give no row (they cannot be named in a
    claim); properties give neither. Raises :class:`LineError` naming the
    field of a malformed entity."""
    if not isinstance(entity, dict):
        raise LineError("<line>", f"is a JSON {type(entity).__name__}, not an entity object")
    entity_id = entity.get("id")
    if not isinstance(entity_id, str) or not ENTITY_ID.match(entity_id):
        raise LineError("id", f"{entity_id!r} is not a Wikidata entity id")
    if entity.get("type") != "item" or not entity_id.startswith("Q"):
        return None, []
    claims = entity.get("claims", {})
    if not isinstance(claims, dict):
        raise LineError("claims", f"is a {type(claims).__name__}, not an object of properties")
    label = _english(entity, "labels")
    description = _english(entity, "descriptions")
    kind = best_object(claims["P31"], "claims.P31") if "P31" in claims else None
    facts = []
    for relation in relations:
        if relation in claims:
            item = best_object(claims[relation], f"claims.{relation}")
            if item is not None:
                facts.append((relation, item))
    if label is None:
        return None, facts
    return (entity_id, label, description, kind), facts


def dump_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, entity text without its trailing comma) of every
    line other than the array's brackets and blank lines."""
    for number, raw in enumerate(stream, start=1):
        line = raw.strip()
        if line in (b"[", b"]", b""):
            continue
        if line.endswith(b","):
            line = line[:-1]
        yield number, line


def scan_chunk(
    path: str | os.PathLike, relations: Sequence[str], *, chunk: int = 0, n_chunks: int = 1, display: str | None = None
) -> ChunkScan:
    """Entities and facts of ``relations`` on the chunk's lines of the dump at ``path``.

    ``display``: the file name written in rejections (default: ``path``).
    Counts: lines read, rejected, properties and other non-items, items,
    items without an English label, and facts (one per subject-relation).
    """
    if not 0 <= chunk < n_chunks:
        raise ValueError(f"chunk {chunk} is not in 0..{n_chunks - 1}")
    display = display or str(path)
    scan = ChunkScan()
    ent, fac = scan.entities, scan.facts
    lines = labelled = unlabelled = other = facts = 0
    with open_dump(path) as stream:
        for number, line in dump_lines(stream):
            if number % n_chunks != chunk:
                continue
            lines += 1
            try:
                try:
                    entity = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError) as err:
                    raise LineError("<line>", f"is not JSON ({err})") from None
                row, found = read_entity(entity, relations)
            except LineError as err:
                scan.rejections.append({"file": display, "line": number, "field": err.field, "reason": err.reason})
                continue
            if row is None:  # a property or lexeme, or an item whose facts cannot be stated without a label
                if entity["id"].startswith("Q") and entity.get("type") == "item":
                    unlabelled += 1
                else:
                    other += 1
                continue
            labelled += 1
            for name, value in zip(ENTITY_SCHEMA.names, row):
                ent[name].append(value)
            for relation, item in found:
                fac["subject_id"].append(row[0])
                fac["relation"].append(relation)
                fac["object_id"].append(item)
                fac["line"].append(number)
            facts += len(found)
            if labelled % FLUSH_ROWS == 0:
                scan.flush()
    scan.count("dump lines read", lines)
    scan.count("dump lines rejected", len(scan.rejections))
    scan.count("non-item entities (properties, lexemes)", other)
    scan.count("items without an English label", unlabelled)
    scan.count("labelled items", labelled)
    scan.count("facts (one triple per subject-relation pair)", facts)
    return scan


def write_dump(entities: Iterable[dict | str], stream: IO[bytes]) -> int:
    """Write entities (objects, or raw lines such as a planted malformed one)
    in the dump's layout; returns the number of entity lines."""
    stream.write(b"[\n")
    n, previous = 0, None
    for entity in entities:
        text = entity if isinstance(entity, str) else json.dumps(entity, ensure_ascii=False, separators=(",", ":"))
        if previous is not None:
            stream.write(previous.encode() + b",\n")
        previous, n = text, n + 1
    if previous is not None:
        stream.write(previous.encode() + b"\n")
    stream.write(b"]\n")
    return n

"""CONFLICTS queries (``conflicts.jsonl`` of google-research-datasets/rag_conflicts)
read into one table, one row per query.

A record: ``source``, ``question``, ``conflict_type`` (one of five released
strings; the third is spelled with "and" in the file and with "or" in the
paper, both accepted), ``correct_answer`` (empty for most complementary and
opinion queries: stored as null), ``search_results`` (title, url, snippet,
date, short_text, response_str). ``query_id`` is the record's line number in
the file (1-based), stable across reruns. Dates come as released (ISO,
written, ``NA``, relative such as "2 days ago") and, where the text names a
calendar date, parsed; a relative date has no anchor (the crawl date is not
released), so it parses to null like ``NA``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter

import pyarrow as pa

from conflictlab.data_check import FileCheck, Problem, unreadable
from conflictlab.sampling import sample_per_group

# short name -> the strings the release and the paper use for it
CATEGORIES = {
    "no_conflict": ("No conflict",),
    "complementary": ("Complementary information",),
    "conflicting_opinions": ("Conflicting opinions and research outcomes", "Conflicting opinions or research outcomes"),
    "outdated": ("Conflict due to outdated information",),
    "misinformation": ("Conflict due to misinformation",),
}
ORDER = tuple(CATEGORIES)  # category order of score vectors and confusion matrices
CATEGORY_OF = {released.casefold(): short for short, names in CATEGORIES.items() for released in names}

# The pinned release (a third-party importer's pin of the official file).
RELEASE_REVISION = "81ba921dd684a93db41a7e9dda6b6a7c67348a88"
RELEASE_SHA256 = "14559d5c08fde057d7b46783e3345ee5852d6cf6a750f370dc072a0b957fac54"
RELEASE_ROWS = 458

RESULT_FIELDS = ("title", "url", "snippet", "date", "short_text", "response_str")

RESULT_TYPE = pa.struct(
    [pa.field(name, pa.string()) for name in RESULT_FIELDS[:4]]
    + [pa.field("parsed_date", pa.date32())]
    + [pa.field(name, pa.string()) for name in RESULT_FIELDS[4:]]
)

QUERY_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # short name (CATEGORIES)
        pa.field("conflict_type_released", pa.string(), nullable=False),
        pa.field("correct_answer", pa.string()),  # null when empty
        pa.field("search_results", pa.list_(RESULT_TYPE), nullable=False),
        pa.field("n_results", pa.int32(), nullable=False),
    ]
)

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


@dataclass
class RecordError(ValueError):
    path: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: field {self.field!r}: {self.reason}"


MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTHS = {m.casefold(): i for i, m in enumerate(MONTH_NAMES, start=1)}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_MONTH_FIRST = re.compile(r"^([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})$")  # May 1, 2023 / Mar. 3 2021
_DAY_FIRST = re.compile(r"^(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})$")  # 1 May 2023
_RELATIVE = re.compile(r"^\d+\s+(second|minute|hour|day|week|month|year)s?\s+ago$", re.IGNORECASE)
MISSING_DATES = ("", "na", "n/a", "none", "null")


def parse_date(text: str | None) -> dt.date | None:
    """The calendar date a released date string names, else None (``NA``,
    empty, relative dates, anything unrecognised)."""
    if text is None:
        return None
    text = text.strip()
    if text.casefold() in MISSING_DATES or _RELATIVE.match(text):
        return None
    try:
        if m := _ISO.match(text):
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        if m := _MONTH_FIRST.match(text):
            month = _MONTHS.get(m[1].casefold())
            return dt.date(int(m[3]), month, int(m[2])) if month else None
        if m := _DAY_FIRST.match(text):
            month = _MONTHS.get(m[2].casefold())
            return dt.date(int(m[3]), month, int(m[1])) if month else None
    except ValueError:  # e.g. February 30
        return None
    return None


def normalise_record(raw: dict, *, path: str, line: int) -> dict:
    """One released record -> a :data:`QUERY_SCHEMA` row; RecordError names what is wrong."""

    def fail(field: str, reason: str):
        raise RecordError(str(path), line, field, reason)

    if not isinstance(raw, dict):
        fail("(record)", "not a JSON object")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        fail("question", "missing or empty")
    released = raw.get("conflict_type")
    if not isinstance(released, str) or released.strip().casefold() not in CATEGORY_OF:
        known = sorted(name for names in CATEGORIES.values() for name in names)
        fail("conflict_type", f"{released!r} is not one of {known}")
    results = raw.get("search_results")
    if not isinstance(results, list):
        fail("search_results", "missing or not a list")
    if not results:
        fail("search_results", "empty: a query needs at least one search result")
    rows = []
    for k, result in enumerate(results, start=1):
        if not isinstance(result, dict):
            fail(f"search_results[{k}]", "not an object")
        row = {}
        for name in RESULT_FIELDS:
            value = result.get(name)
            if value is not None and not isinstance(value, str):
                fail(f"search_results[{k}].{name}", f"not a string ({type(value).__name__})")
            row[name] = value
        row["parsed_date"] = parse_date(row["date"])
        rows.append(row)
    answer = raw.get("correct_answer")
    if answer is not None and not isinstance(answer, str):
        fail("correct_answer", f"not a string ({type(answer).__name__})")
    source = raw.get("source")
    if not isinstance(source, str):
        fail("source", "missing or not a string")
    return {
        "query_id": line,
        "source": source,
        "question": question,
        "conflict_type": CATEGORY_OF[released.strip().casefold()],
        "conflict_type_released": released,
        "correct_answer": answer if answer and answer.strip() else None,
        "search_results": rows,
        "n_results": len(rows),
    }


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_conflicts(
    path: str | os.PathLike, *, on_error: str = "fail", check_release: bool = False
) -> tuple[pa.Table, pa.Table]:
    """(queries, rejections) from a ``conflicts.jsonl`` file.

    ``on_error``: ``fail`` raises the first :class:`RecordError`; ``reject``
    records it (line, field, reason) and goes on. ``check_release``: the file
    must be the pinned release (SHA-256), else ValueError naming both digests.
    """
    if on_error not in ("fail", "reject"):
        raise ValueError(f"on_error must be 'fail' or 'reject', not {on_error!r}")
    if check_release:
        found = file_sha256(path)
        if found != RELEASE_SHA256:
            raise ValueError(
                f"{path}: SHA-256 {found} is not the pinned release's {RELEASE_SHA256} (revision {RELEASE_REVISION})"
            )
    rows, rejected = [], []
    with open(path, encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                try:
                    raw = json.loads(text)
                except json.JSONDecodeError as err:
                    raise RecordError(str(path), line, "(line)", f"not JSON ({err.msg})") from None
                rows.append(normalise_record(raw, path=str(path), line=line))
            except RecordError as err:
                if on_error == "fail":
                    raise
                rejected.append({"query_id": line, "path": str(path), "field": err.field, "reason": err.reason})
    return pa.Table.from_pylist(rows, schema=QUERY_SCHEMA), pa.Table.from_pylist(rejected, schema=REJECTION_SCHEMA)


def sample_queries(queries: pa.Table, max_per_category: int | None, *, seed: int) -> pa.Table:
    """At most ``max_per_category`` queries of each category (seeded, file
    order kept); None keeps every query."""
    if max_per_category is None:
        return queries
    rows = sample_per_group(queries.to_pylist(), itemgetter("conflict_type"), max_per_category, seed=seed)
    return pa.Table.from_pylist(rows, schema=QUERY_SCHEMA)


RELEASE_URL = (
    f"https://raw.githubusercontent.com/google-research-datasets/rag_conflicts/{RELEASE_REVISION}/conflicts.jsonl"
)


def download_release(
    url: str, dest: str | os.PathLike, *, sha256: str | None = RELEASE_SHA256, timeout: float = 120
) -> str:
    """Fetch ``conflicts.jsonl`` from ``url`` into ``dest`` (atomically) and
    return its SHA-256; a digest other than ``sha256`` (None: no check) is a
    ValueError and leaves nothing at ``dest``."""
    import urllib.request

    from conflictlab.io import atomic_path

    digest = hashlib.sha256()
    with atomic_path(dest) as tmp, urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
        for block in iter(lambda: response.read(1 << 20), b""):
            digest.update(block)
            out.write(block)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise ValueError(f"{url}: SHA-256 {digest.hexdigest()} is not the pinned release's {sha256}")
    return digest.hexdigest()


def check_input(config: Mapping) -> list[FileCheck]:
    """The data check of config's ``conflicts.path`` (:mod:`conflictlab.validate_data`): every query read as
    :func:`read_conflicts` reads it, each rejection with its line and field."""
    section = config["conflicts"]
    path, stops = str(section["path"]), section.get("on_error", "fail") == "fail"
    try:
        queries, rejected = read_conflicts(path, on_error="reject", check_release=section.get("check_release", False))
    except (OSError, ValueError) as error:
        return [unreadable("conflicts", path, error, stops_run=True)]
    problems = [Problem(f"line {r['query_id']}", r["field"], r["reason"]) for r in rejected.to_pylist()]
    return [FileCheck("conflicts", path, queries.num_rows, problems, stops)]

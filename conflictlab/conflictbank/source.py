"""Where config's ``conflictbank`` section reads its records (the local JSON Lines file or the hub), for the
``conflictbank_data`` job and the data check (rule validate_data), so that both read the same records.

Apart from :mod:`conflictlab.conflictbank.dataset`, like :mod:`conflictlab.conflictbank.hub`: only the rules
that read the input need the ``datasets`` package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conflictlab.conflictbank.dataset import build_records, read_jsonl
from conflictlab.conflictbank.hub import hub_records
from conflictlab.data_check import FileCheck, Problem, unreadable


def configured_records(section: Mapping) -> tuple[str, Iterable[tuple[int, Any]]]:
    """(source name, ``(record_id, raw record)`` pairs) of config's ``conflictbank`` section: the local JSON
    Lines file (``source: local``; record ids are line numbers from 0) or the hub dataset (row indices)."""
    if section["source"] == "local":
        return str(section["path"]), read_jsonl(section["path"])
    source = f"{section['hf_dataset']}@{section.get('hf_revision') or 'main'}"
    return source, hub_records(section["hf_dataset"], revision=section.get("hf_revision"))


def check_input(config: Mapping) -> list[FileCheck]:
    """The data check of config's ``conflictbank`` input (:mod:`conflictlab.validate_data`): every record
    validated as :func:`build_records` does, each rejection with its line (local file) or row (hub)."""
    section = config["conflictbank"]
    source, records = configured_records(section)
    where = "line {}" if section["source"] == "local" else "row {}"
    offset = 1 if section["source"] == "local" else 0
    stops = section.get("on_error", "fail") == "fail"
    try:
        build = build_records(records, source=source, on_error="reject")
    except (OSError, ValueError) as error:
        return [unreadable("conflictbank", source, error)]
    problems = [Problem(where.format(r["record_id"] + offset), r["field"], r["reason"]) for r in build.rejections]
    return [FileCheck("conflictbank", source, len(build.rows), problems, stops)]

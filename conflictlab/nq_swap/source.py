"""Where config's ``nq_swap`` section reads its records (the local file or the hub split), for the
``nq_swap_data`` job and the data check (rule validate_data), so that both read the same records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conflictlab.data_check import FileCheck, Problem, unreadable
from conflictlab.nq_swap.dataset import build_items, hub_records, read_local


def configured_records(section: Mapping) -> tuple[str, Iterable[tuple[int, Any]]]:
    """(source name, ``(row, record)`` pairs) of config's ``nq_swap`` section: the local file (``source:
    local``) or the hub dataset's split."""
    if section["source"] == "local":
        return str(section["path"]), read_local(section["path"])
    source = f"{section['hf_dataset']}@{section.get('hf_revision') or 'main'}:{section['split']}"
    return source, hub_records(section["hf_dataset"], revision=section.get("hf_revision"), split=section["split"])


def check_input(config: Mapping) -> list[FileCheck]:
    """The data check of config's NQ-Swap input (:mod:`conflictlab.validate_data`): every record validated as
    :func:`~conflictlab.nq_swap.dataset.build_items` does (no sampling), each rejection with its row (the
    record's index in the source, from 0)."""
    section = config["nq_swap"]
    source, records = configured_records(section)
    stops = section.get("on_error", "fail") == "fail"
    try:
        build = build_items(records, source=source, on_error="reject", max_items=None, seed=0)
    except (OSError, ValueError) as error:
        return [unreadable("nq_swap", source, error)]
    problems = [Problem(f"row {r['row']}", r["field"], r["reason"]) for r in build.rejections]
    return [FileCheck("nq_swap", source, len(build.items), problems, stops)]

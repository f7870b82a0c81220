"""The data check of NQ-Swap's input (rule validate_data): the records :func:`~conflictlab.nq_swap.dataset.open_source`
reads for the ``nq_swap_data`` job, validated the same way."""

from __future__ import annotations

from collections.abc import Mapping

from conflictlab.data_check import FileCheck, Problem, unreadable
from conflictlab.nq_swap.dataset import build_items, open_source


def check_input(config: Mapping) -> list[FileCheck]:
    """The data check of config's NQ-Swap input (:mod:`conflictlab.validate_data`): every record validated as
    :func:`~conflictlab.nq_swap.dataset.build_items` does (no sampling), each rejection with its row (the
    record's index in the source, from 0)."""
    section = config["nq_swap"]
    stops = section.get("on_error", "fail") == "fail"
    try:
        source = open_source(section)
        build = build_items(
            source.records, source=source.name, on_error="reject", max_items=None, seed=0, lines=source.lines
        )
    except (OSError, ValueError) as error:
        return [unreadable("nq_swap", str(section.get("path") or section.get("hf_dataset")), error)]
    problems = [
        Problem(f"line {r['line']}" if r.get("line") is not None else f"row {r['row']}", r["field"], r["reason"])
        for r in build.rejections
    ]
    return [FileCheck("nq_swap", source.name, len(build.items), problems, stops)]

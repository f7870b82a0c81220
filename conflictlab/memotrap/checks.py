"""The data check of MemoTrap's configured files (:mod:`conflictlab.validate_data`, rule validate_data)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from conflictlab.data_check import FileCheck, Problem, unreadable
from conflictlab.memotrap.dataset import read_file


def check_input(config: Mapping) -> list[FileCheck]:
    """One check per configured file, read as the ``memotrap_data`` job reads it, every bad row listed with
    the line it starts on and its field. The run itself stops at the first bad row (the ``memotrap_data``
    job has no reject mode), so any problem here fails the check."""
    section = config["memotrap"]
    checks = []
    for file in section["files"]:
        path = str(Path(section["root"]) / f"{file}.csv")
        try:
            rejections: list[dict] = []
            rows = read_file(path, file, rejections)
            problems = [Problem(f"line {r['line']}", r["field"], r["reason"]) for r in rejections]
            checks.append(FileCheck("memotrap", path, len(rows), problems))
        except (OSError, ValueError) as error:
            checks.append(unreadable("memotrap", path, error))
    return checks

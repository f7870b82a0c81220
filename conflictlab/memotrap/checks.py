"""The data check of MemoTrap's configured files (:mod:`conflictlab.validate_data`, rule validate_data)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from conflictlab.data_check import FileCheck, unreadable
from conflictlab.memotrap.dataset import read_file


def check_input(config: Mapping) -> list[FileCheck]:
    """One check per configured file, read as the ``memotrap_data`` job reads it. The reader has no reject
    mode (a bad row stops the run), so a file with a bad row is one problem: its message names the data
    row, the line it ends on and the field, and the rows after it are not counted."""
    section = config["memotrap"]
    checks = []
    for file in section["files"]:
        path = str(Path(section["root"]) / f"{file}.csv")
        try:
            checks.append(FileCheck("memotrap", path, len(read_file(path, file))))
        except (OSError, ValueError) as error:
            checks.append(unreadable("memotrap", path, error))
    return checks

"""What a benchmark's data check finds (rule validate_data): per input file the records read and the problems.

A benchmark's validator (:attr:`conflictlab.specs.Benchmark.validator`) returns :class:`FileCheck` rows;
:mod:`conflictlab.validate_data` runs the validators of the selected benchmarks and reports. This module
imports nothing of the library, so that a benchmark's reader may build its checks without importing the
registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FIELD = re.compile(r"field '([^']+)'")


@dataclass(frozen=True)
class Problem:
    """One record (or a whole file) that would be rejected: where in the file (``line 7``, a file of a
    folder), the field, and why."""

    where: str
    field: str
    reason: str


@dataclass
class FileCheck:
    """What reading one input file (or folder) gave: records read, the problems, and whether the benchmark's
    run stops on a problem (``on_error: fail``) rather than recording it."""

    benchmark: str
    path: str
    read: int = 0
    problems: list[Problem] = field(default_factory=list)
    stops_run: bool = True


def field_of(message: str, default: str = "(record)") -> str:
    """The field a reader's message names (``field 'x'``), else ``default``."""
    match = _FIELD.search(message)
    return match[1] if match else default


def unreadable(benchmark: str, path: str, error: Exception, *, stops_run: bool = True) -> FileCheck:
    """The check of a file whose reader stopped at ``error`` (a layout problem, a line that is not JSON,
    the first bad row of a reader without a reject mode): one problem, no records counted."""
    message = str(error)
    return FileCheck(benchmark, path, 0, [Problem("(file)", field_of(message, "(file)"), message)], stops_run)

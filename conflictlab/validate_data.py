"""The data check (``snakemake validate_data``): every configured benchmark's whole input read, no model.

Each benchmark's descriptor names its validator (:attr:`conflictlab.specs.Benchmark.validator`,
``"module:function"``): ``function(config)`` reads the benchmark's input exactly as its data rule does, but
every record and with rejections recorded instead of raised, and returns one :class:`FileCheck` per file (or
per folder, where a release is a folder of one-record files). A benchmark without a validator reads no input
file (arbitration: its instances are generated from config). Adding a benchmark with a validator adds its check.

The check fails (:func:`stops_run`) when a record would be rejected by a benchmark whose run stops on the
first bad record (``on_error: fail``, or a reader without a reject mode); a benchmark set to
``on_error: reject`` has its rejections listed, and the run would record them and go on.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module

from conflictlab import benchmarks
from conflictlab.data_check import FileCheck
from conflictlab.io import atomic_path

SUMMARY_COLUMNS = ("benchmark", "file", "read", "rejected", "stops_run")
REJECTION_COLUMNS = ("benchmark", "file", "where", "field", "reason")


def _validator(name: str) -> Callable[[Mapping], list[FileCheck]] | None:
    spec = benchmarks.BY_NAME[name].validator
    if spec is None:
        return None
    module, function = spec.split(":")
    return getattr(import_module(module), function)


def check(config: Mapping, names: Iterable[str] | None = None) -> dict[str, list[FileCheck] | None]:
    """``{benchmark: its file checks}`` for the benchmarks config selects (or ``names``), in registry order;
    None for a benchmark that reads no input file."""
    chosen = benchmarks.selected_names(config) if names is None else list(names)
    result: dict[str, list[FileCheck] | None] = {}
    for name in chosen:
        validator = _validator(name)
        result[name] = None if validator is None else validator(config)
    return result


def stops_run(checks: Mapping[str, list[FileCheck] | None]) -> bool:
    """Whether any problem would stop a run (its benchmark fails on the first bad record)."""
    return any(c.problems and c.stops_run for files in checks.values() for c in files or ())


def report_text(checks: Mapping[str, list[FileCheck] | None]) -> str:
    """The printed report: per file the records read and rejected, each rejection with where, field and
    reason, then the verdict."""
    rows = [("benchmark", "file", "read", "rejected")]
    notes: list[str] = []
    for name, files in checks.items():
        if files is None:
            rows.append((name, "(no input files: its instances are generated from config)", "-", "-"))
            continue
        for c in files:
            rows.append((name, c.path, str(c.read), str(len(c.problems))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in rows
    ]
    for files in checks.values():
        for c in files or ():
            for p in c.problems:
                notes.append(f"{c.path}: {p.where}: field {p.field!r}: {p.reason}")
            if c.problems and not c.stops_run:
                notes.append(f"{c.path}: on_error is reject: a run records these {len(c.problems)} and goes on")
    files = [c for fs in checks.values() for c in fs or ()]
    read = sum(c.read for c in files)
    rejected = sum(len(c.problems) for c in files)
    verdict = (
        f"FAILED: {rejected} rejected in {len(files)} files ({read} records read); a run with on_error: fail "
        "stops on the first of them"
        if stops_run(checks)
        else f"OK: {read} records read in {len(files)} files, {rejected} rejected"
    )
    return "\n".join([*lines, *(["", "Rejected:"] + notes if notes else []), "", verdict]) + "\n"


def write_reports(checks: Mapping[str, list[FileCheck] | None], summary_path, rejections_path) -> None:
    """Write the TSV reports atomically: one row per file (:data:`SUMMARY_COLUMNS`) and one row per rejection
    (:data:`REJECTION_COLUMNS`)."""
    summary, rejections = [], []
    for name, files in checks.items():
        for c in files or ():
            summary.append((name, c.path, c.read, len(c.problems), c.stops_run))
            rejections += [(name, c.path, p.where, p.field, p.reason) for p in c.problems]
    for path, columns, rows in (
        (summary_path, SUMMARY_COLUMNS, summary),
        (rejections_path, REJECTION_COLUMNS, rejections),
    ):
        with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)

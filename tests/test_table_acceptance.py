"""Issue 50's acceptance checks over every table the smoke DAG writes
(results/tables/*.csv and *.md): the methods tables carry the paired
columns, no interval is printed with zero width, no p-value reads 0."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from conflictlab.report.audit import _number, audit_rows
from conflictlab.report.tables import is_p_column

PAIRED = ("difference", "difference_low", "difference_high", "p_paired", "n_pairs")
BRACKETS = re.compile(r"\[\s*([-+]?[\d.]+)\s*,\s*([-+]?[\d.]+)\s*\]")


def csv_problems(path: Path) -> list[str]:
    """The paired columns a methods table lacks, and the audit's problems of
    one CSV table (:func:`conflictlab.report.audit.audit_rows`: zero-width
    intervals, p-values of 0, values outside their interval, missing n)."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        columns, rows = list(reader.fieldnames or []), list(reader)
    missing = [f"{path.name}: no column {c}" for c in PAIRED if "methods" in path.name and c not in columns]
    return missing + audit_rows(path.name, columns, rows)


def markdown_problems(path: Path) -> list[str]:
    """Intervals printed as ``[x, x]`` and p-value cells that read 0 (``0``,
    ``0.0000``) in the pipe tables of one Markdown file."""
    problems, header = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        for name, cell in zip(header, cells):
            for low, high in BRACKETS.findall(cell):
                if _number(low) == _number(high):
                    problems.append(f"{path.name}:{number}: {name} printed as a zero-width interval: {cell}")
            if (is_p_column(name) or name.startswith("p ")) and _number(cell) == 0:
                problems.append(f"{path.name}:{number}: p-value {name} reads {cell}")
    return problems


def table_problems(results: Path) -> list[str]:
    """Every problem of :func:`csv_problems` and :func:`markdown_problems` under ``results/tables``."""
    tables = results / "tables"
    return [p for path in sorted(tables.glob("*.csv")) for p in csv_problems(path)] + [
        p for path in sorted(tables.glob("*.md")) for p in markdown_problems(path)
    ]


def test_the_checks_find_what_they_look_for(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "x_methods.csv").write_text("value,ci_low,ci_high,n,p_paired\n0.5,0.5,0.5,4,0.0\n0.5,0.4,0.6,4,0.2\n")
    (tables / "y.md").write_text("| a | p (paired) | kendall_p |\n|---|---|---|\n| 50.0 [50.0, 50.0] | 0.0000 | 0 |\n")
    found = table_problems(tmp_path)
    assert sum("no column" in p for p in found) == 4  # all but p_paired missing
    assert any("zero-width interval of value [0.5, 0.5]" in p for p in found)
    assert any("p_paired = 0 (a p-value is never 0)" in p for p in found)
    assert sum("y.md" in p for p in found) == 3


def test_smoke_tables_have_paired_columns_no_zero_width_interval_and_no_zero_p(smoke_run):
    workflow, run = smoke_run
    assert run.returncode == 0, run.stderr[-3000:]
    results = workflow / "results"
    methods = sorted((results / "tables").glob("*methods*.csv"))
    assert methods, "the smoke DAG wrote no methods table"
    assert table_problems(results) == []

"""Checks every result table against the conventions of README, Statistics.

Run over a results folder with ``python -m conflictlab.report.audit
results``; the smoke-run test asserts it finds nothing. It reads the CSV
tables (full precision) under ``tables/`` and the per-layer spectral tables
(``mechanistic/*/spectral.parquet``, where Figure 4's intervals live) and, for
every interval in them, checks:

- the reported value lies inside its own interval;
- no finite interval stands on fewer than 2 samples, none has zero width;
- no p-value is 0;
- the table has an n column;
- no p-value lies below the smallest its sample size allows (``p_floor``).

Intervals are found by name: ``X_low``/``X_high``, ``X_ci_low``/``X_ci_high``
or ``ci_low``/``ci_high``; the value is column ``X`` where it exists, else
the column just before the lower bound. The n of a value is column
``n_<value>``, ``<stem>_n`` or ``n_<stem>`` (``fth_ci_low`` -> ``fth_n``)
where one exists, else ``n_<end of the value's name>`` (``n_recall`` for
``answer_recall``), else the nearest column to its left that names a
denominator (:data:`conflictlab.report.columns.DENOMINATORS`, or ``n[…]``), else the first such to its
right; a value with none is a problem.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

from conflictlab.report.columns import n_column
from conflictlab.report.tables import is_p_column


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def intervals(columns: list[str]) -> list[tuple[str, str, str]]:
    """(value, low, high) column triples of a table's header."""
    out = []
    for i, low in enumerate(columns):
        # a value named like a bound (delta_low) has bounds of its own
        if not low.endswith("low") or any(f"{low}{tail}" in columns for tail in ("_low", "_ci_low")):
            continue
        high = low[: -len("low")] + "high"
        if high not in columns:
            continue
        stem = low[: -len("_ci_low")] if low.endswith("_ci_low") else low[: -len("_low")]
        value = stem if stem in columns else columns[i - 1] if i else None
        if value is not None and value != high:
            out.append((value, low, high))
    return out


def audit_rows(name: str, columns: list[str], rows: list[dict[str, str]]) -> list[str]:
    """Problems of one table (``name`` for the messages), as sentences."""
    problems = []
    triples = intervals(columns)
    for value, low, high in triples:
        n_name = n_column(columns, value, low)
        if n_name is None:
            problems.append(f"{name}: no n column for {value}")
        for line, row in enumerate(rows, start=2):
            v, lo, hi = _number(row[value]), _number(row[low]), _number(row[high])
            if math.isnan(lo) or math.isnan(hi):
                continue
            if not math.isnan(v) and not lo - 1e-9 <= v <= hi + 1e-9:
                problems.append(f"{name}, line {line}: {value} = {v:g} outside its interval [{lo:g}, {hi:g}]")
            n = _number(row[n_name]) if n_name else math.nan
            if n < 2:
                problems.append(f"{name}, line {line}: finite interval of {value} on {n_name} = {n:g}")
            if hi - lo <= 0:
                problems.append(
                    f"{name}, line {line}: zero-width interval of {value} [{lo:g}, {hi:g}] (no spread is no interval)"
                )
    for column in filter(is_p_column, columns):
        for line, row in enumerate(rows, start=2):
            if _number(row[column]) == 0:
                problems.append(f"{name}, line {line}: {column} = 0 (a p-value is never 0)")
    if "p_floor" in columns:
        for line, row in enumerate(rows, start=2):
            floor = _number(row["p_floor"])
            for column in (c for c in columns if c.endswith("_p")):
                p = _number(row[column])
                if not math.isnan(p) and not math.isnan(floor) and p < floor - 1e-12:
                    problems.append(f"{name}, line {line}: {column} = {p:g} below p_floor {floor:g}")
    return problems


def audit_folder(results: str | Path) -> list[str]:
    """Problems of every table of a results folder (see the module docstring)."""
    from conflictlab.io import read_tables

    results, problems = Path(results), []
    for path in sorted((results / "tables").glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            problems += audit_rows(path.name, list(reader.fieldnames or []), rows)
    for path in sorted(results.glob("mechanistic/*/spectral.parquet")):
        table = read_tables(path)
        rows = [{k: str(v) for k, v in row.items()} for row in table.to_pylist()]
        problems += audit_rows(str(path.relative_to(results)), table.column_names, rows)
    return problems


if __name__ == "__main__":
    found = audit_folder(sys.argv[1] if len(sys.argv) > 1 else "results")
    print("\n".join(found) or "no problems")
    sys.exit(1 if found else 0)

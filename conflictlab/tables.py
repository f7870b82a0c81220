"""Rendering result tables as Markdown and CSV (written atomically)."""

from __future__ import annotations

import csv
import io
import math
import os
from typing import Sequence

import pyarrow as pa

from conflictlab.io import atomic_path


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def markdown(table: pa.Table, *, caption: str | None = None, columns: Sequence[str] | None = None) -> str:
    columns = list(columns or table.column_names)
    lines = [f"{caption}\n"] if caption else []
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    for row in table.select(columns).to_pylist():
        lines.append("| " + " | ".join(_cell(row[c]) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def write_markdown_and_csv(table: pa.Table, md_path: str | os.PathLike, csv_path: str | os.PathLike, *, caption: str) -> None:
    """The same table twice: Markdown for reading, CSV (full precision) for tools."""
    with atomic_path(md_path) as tmp:
        tmp.write_text(markdown(table, caption=caption), encoding="utf-8")
    write_csv(table, csv_path)


def write_csv(table: pa.Table, csv_path: str | os.PathLike) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(["" if v is None else v for v in row.values()])
    with atomic_path(csv_path) as tmp:
        tmp.write_text(buffer.getvalue(), encoding="utf-8")

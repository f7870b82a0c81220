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
    write_text(markdown(table, caption=caption), md_path)
    write_csv(table, csv_path)


def write_csv(table: pa.Table, csv_path: str | os.PathLike) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(["" if v is None else v for v in row.values()])
    with atomic_path(csv_path) as tmp:
        tmp.write_text(buffer.getvalue(), encoding="utf-8")


# --------------------------------------------------------------------------
# Tables with best/second marks (Table 4): values in percent, one decimal.

_MARKUP = {
    "md": {"best": "**{}**", "second": "<u>{}</u>", "": "{}"},
    "tex": {"best": "\\textbf{{{}}}", "second": "\\underline{{{}}}", "": "{}"},
}


def _marked(cell: dict | None, style: str) -> str:
    if cell is None or cell["value"] is None or math.isnan(cell["value"]):
        return "–" if style == "md" else "--"
    return _MARKUP[style][cell["mark"]].format(f"{100 * cell['value']:.1f}")


def marked_markdown(rows: Sequence[dict], labels: Sequence[str], columns: Sequence[tuple[str, str]], *, caption: str, notes: Sequence[str] = ()) -> str:
    """``rows``: dicts with the ``labels`` keys (plain text) and, per
    ``(key, header)`` in ``columns``, a cell dict (``value``, ``mark``) or None."""
    lines = [f"{caption}\n", "| " + " | ".join([*labels, *(h for _, h in columns)]) + " |", "|" + "|".join("---" for _ in [*labels, *columns]) + "|"]
    for row in rows:
        lines.append("| " + " | ".join([*(str(row[k]) for k in labels), *(_marked(row[k], "md") for k, _ in columns)]) + " |")
    if notes:
        lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def marked_latex(rows: Sequence[dict], labels: Sequence[str], columns: Sequence[tuple[str, str]], *, caption: str, group: str) -> str:
    """A booktabs ``table`` with a midrule between the blocks of ``group``."""
    def tex(text: str) -> str:
        return str(text).replace("\\", "\\textbackslash{}").replace("_", "\\_").replace("&", "\\&").replace("%", "\\%")

    lines = [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{tex(caption)}}}",
        "\\begin{tabular}{" + "l" * len(labels) + "r" * len(columns) + "}",
        "\\toprule",
        " & ".join([*(tex(k) for k in labels), *(tex(h) for _, h in columns)]) + " \\\\",
        "\\midrule",
    ]
    previous = None
    for row in rows:
        if previous is not None and row[group] != previous:
            lines.append("\\midrule")
        previous = row[group]
        lines.append(" & ".join([*(tex(row[k]) for k in labels), *(_marked(row[k], "tex") for k, _ in columns)]) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")

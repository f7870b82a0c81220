"""Rendering result tables as Markdown and CSV (written atomically)."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence

import pyarrow as pa

from conflictlab.io import atomic_path
from conflictlab.stats import format_p


def _cell(value, *, scale: float = 1.0, decimals: int = 4, p_value: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if p_value and isinstance(value, (int, float)):
        return format_p(float(value))
    if isinstance(value, float):
        return f"{scale * value:.{decimals}f}"
    return str(value)


def _shown(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def is_p_column(name: str) -> bool:
    """Whether column ``name`` holds p-values (``p``, ``kendall_p``, ``p_paired``, ``p_floor``; not ``p_method``)."""
    return name == "p" or name.endswith("_p") or (name.startswith("p_") and name != "p_method")


def format_estimate(
    value: float | None,
    low: float | None = None,
    high: float | None = None,
    *,
    scale: float = 100.0,
    decimals: int = 1,
    n: int | None = None,
) -> str:
    """``62.5 [48.1, 75.2]``: the estimate and its interval, times ``scale``;
    ``""`` for none. Without an interval, why, where ``n`` is given: ``(no
    interval at n = 5 < 30)`` below :data:`conflictlab.stats.MIN_N_MEAN` (a
    proportion gets one from n = 2), ``(no spread, n = 40)`` from there on;
    a zero-width interval reads ``(no spread)``, never ``[x, x]``."""
    from conflictlab.stats import MIN_N_INTERVAL, MIN_N_MEAN

    if not _shown(value):
        return ""
    text = f"{scale * value:.{decimals}f}"
    if _shown(low) and _shown(high):
        if high - low > 0:
            # a narrow interval keeps the digits that tell its bounds apart, never "[x, x]"
            digits = next(
                (d for d in range(decimals, decimals + 6) if f"{scale * low:.{d}f}" != f"{scale * high:.{d}f}"),
                decimals + 6,
            )
            return text + f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
        return text + (" (no spread)" if n is None else f" (no spread, n = {n})")
    if n is None:
        return text
    if n < MIN_N_INTERVAL:
        return text + f" (no interval at n = {n})"
    return text + (f" (no interval at n = {n} < {MIN_N_MEAN})" if n < MIN_N_MEAN else f" (no spread, n = {n})")


def markdown(
    table: pa.Table,
    *,
    caption: str | None = None,
    columns: Sequence[str] | None = None,
    intervals: Mapping[str, tuple[str, str]] | None = None,
    scale: Mapping[str, float] | None = None,
    decimals: Mapping[str, int] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """``table`` as a Markdown table for reading.

    ``intervals``: value column -> (low column, high column); the three show
    as one cell, ``62.5 [48.1, 75.2]`` (the value alone where the interval is
    NaN), and the bound columns are not shown apart; an estimate without an
    interval says why with its n (:func:`format_estimate`; the n column found
    as :func:`conflictlab.report.columns.n_column` finds it). ``scale``
    multiplies a column's floats (1 -> 100 for a proportion shown in percent)
    and its interval's; ``decimals`` sets its digits (default 4, or 1 for a
    column scaled by 100). p-value columns (:func:`is_p_column`) show two
    significant digits and never 0 (:func:`format_p`). ``notes`` follow as a
    bullet list (why a cell is empty).
    """
    from conflictlab.report.columns import n_column

    intervals, scale, decimals = dict(intervals or {}), dict(scale or {}), dict(decimals or {})
    bounds = {c for pair in intervals.values() for c in pair}
    columns = [c for c in (columns or table.column_names) if c not in bounds]
    digits = {c: decimals.get(c, 1 if scale.get(c) == 100 else 4) for c in columns}
    counts = {c: n_column(table.column_names, c, low) for c, (low, _) in intervals.items() if c in table.column_names}
    lines = [f"{caption}\n"] if caption else []
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    for row in table.to_pylist():
        cells = []
        for c in columns:
            if c in intervals:
                low, high = intervals[c]
                n = row[counts[c]] if counts.get(c) else None
                cells.append(
                    format_estimate(row[c], row[low], row[high], scale=scale.get(c, 1.0), decimals=digits[c], n=n)
                )
            else:
                cells.append(_cell(row[c], scale=scale.get(c, 1.0), decimals=digits[c], p_value=is_p_column(c)))
        lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_markdown_and_csv(
    table: pa.Table, md_path: str | os.PathLike, csv_path: str | os.PathLike, *, caption: str, **display
) -> None:
    """The same table twice: Markdown for reading (``display``: the keyword
    arguments of :func:`markdown`), CSV (every column, full precision) for tools."""
    write_text(markdown(table, caption=caption, **display), md_path)
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
    """A cell as ``value [low, high] (n=…)`` in percent, the value marked."""
    if cell is None or cell["value"] is None or math.isnan(cell["value"]):
        return "–" if style == "md" else "--"
    text = _MARKUP[style][cell["mark"]].format(format_estimate(cell["value"]))
    if style == "md":
        interval = format_estimate(cell["value"], cell.get("ci_low"), cell.get("ci_high"), n=cell.get("n"))[
            len(format_estimate(cell["value"])) :
        ]
        return f"{text}{interval} (n={cell['n']})" if "n" in cell else text + interval
    return f"{text} {{\\scriptsize ({cell['n']})}}" if "n" in cell else text


def marked_markdown(
    rows: Sequence[dict],
    labels: Sequence[str],
    columns: Sequence[tuple[str, str]],
    *,
    caption: str,
    notes: Sequence[str] = (),
) -> str:
    """``rows``: dicts with the ``labels`` keys (plain text) and, per
    ``(key, header)`` in ``columns``, a cell dict (``value``, ``mark``) or None."""
    lines = [
        f"{caption}\n",
        "| " + " | ".join([*labels, *(h for _, h in columns)]) + " |",
        "|" + "|".join("---" for _ in [*labels, *columns]) + "|",
    ]
    for row in rows:
        lines.append(
            "| " + " | ".join([*(str(row[k]) for k in labels), *(_marked(row[k], "md") for k, _ in columns)]) + " |"
        )
    if notes:
        lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def marked_latex(
    rows: Sequence[dict], labels: Sequence[str], columns: Sequence[tuple[str, str]], *, caption: str, group: str
) -> str:
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
        lines.append(
            " & ".join([*(tex(row[k]) for k in labels), *(_marked(row[k], "tex") for k, _ in columns)]) + " \\\\"
        )
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")

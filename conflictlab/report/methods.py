"""The conflict-resolution methods table: methods as rows, each benchmark's
headline metrics as columns, one model block per model (issue 35).

Every benchmark contributes long-form *cells* (:data:`METHOD_CELL_SCHEMA`),
one per (model, method, benchmark, metric): the estimate, its 95% interval,
n and an identity of the samples behind it (:func:`samples_key`). The table
ranks cells of one column within a model block only where every cell covers
the same samples with n ≥ ``min_n`` (:func:`conflictlab.stats.marks_over_same_samples`);
a method that did not run on a benchmark has an empty cell and a note says why.
"""

from __future__ import annotations

import hashlib
import math
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.report.figures import panel_grid, plt
from conflictlab.stats import bootstrap_mean_ci, marks_over_same_samples, proportion_ci

METHOD_CELL_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),  # base | a steering variant | a decoding/prompting method (file-name spelling)
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),  # the column header, e.g. "Acc (reasoning)"
        pa.field("value", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("samples", pa.string(), nullable=False),  # samples_key of the ids the cell averages
        pa.field("higher_is_better", pa.bool_()),  # null: neither direction is better (no marks)
        pa.field("interval", pa.string(), nullable=False),  # wilson | bootstrap
        pa.field("shown", pa.bool_(), nullable=False),  # in the Markdown table and the figure (false: the CSV only)
    ]
)


def samples_key(ids: Sequence) -> str:
    """A short identity of a set of sample ids (order and repeats ignored):
    equal keys mean the same samples, so marks may compare the cells."""
    joined = "\n".join(sorted({str(i) for i in ids}))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def method_cell(
    *,
    model: str,
    method: str,
    benchmark: str,
    metric: str,
    values: np.ndarray,
    sample_ids: Sequence,
    proportion: bool,
    higher_is_better: bool | None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """One cell from per-sample ``values`` (shape (n,); 0/1 when
    ``proportion``: Wilson interval; else a percentile-bootstrap interval of
    the mean); no interval at n < 2."""
    values = np.asarray(values, dtype=float)
    if len(sample_ids) != values.size:
        raise ValueError(f"{benchmark} {metric} of {model}@{method}: {values.size} values but {len(sample_ids)} sample ids")
    if proportion:
        value, low, high = proportion_ci(values)
    else:
        value, low, high = bootstrap_mean_ci(values, n_resamples=n_resamples, seed=seed)
    return {
        "model": model, "method": method, "benchmark": benchmark, "metric": metric,
        "value": value, "ci_low": low, "ci_high": high, "n": int(values.size),
        "samples": samples_key(sample_ids), "higher_is_better": higher_is_better,
        "interval": "wilson" if proportion else "bootstrap", "shown": True,
    }


def _nan_to_none(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def methods_table(cells: pa.Table, *, methods: Sequence[str], min_n: int) -> tuple[list[dict], list[tuple[str, str]], list[str]]:
    """Rows, columns and notes of the methods table.

    ``methods``: the row order within each model block (a method without
    any cell for a model is left out of that block). Returns (rows, columns,
    notes): one dict per (model, method) with ``model``, ``method`` and, per
    column key, a cell dict (``value``, ``ci_low``, ``ci_high``, ``n``,
    ``mark``) or None; columns as (key, header) in the order benchmarks first
    appear in ``cells`` (the cells ``shown`` only); notes on empty cells and
    unmarked columns.
    """
    data = {(r["model"], r["method"], r["benchmark"], r["metric"]): r for r in cells.to_pylist() if r["shown"]}
    columns = list(dict.fromkeys((b, m) for _, _, b, m in data))
    keys = [(f"{b}:{m}", f"{b} {m}") for b, m in columns]
    models = list(dict.fromkeys(cells.column("model").to_pylist()))
    rows, notes, unmarked, missing = [], [], {}, {}
    for model in models:
        present = [m for m in methods if any((model, m, b, metric) in data for b, metric in columns)]
        block = [{"model": model, "method": method} for method in present]
        for (benchmark, metric), (key, header) in zip(columns, keys):
            found = [data.get((model, method, benchmark, metric)) for method in present]
            values = [math.nan if c is None or c["value"] is None else c["value"] for c in found]
            direction = next((c["higher_is_better"] for c in found if c is not None), None)
            if direction is None:
                marks, why = [""] * len(found), "neither direction is better"
            else:
                marks, why = marks_over_same_samples(
                    values, [None if c is None else c["samples"] for c in found], [0 if c is None else c["n"] for c in found],
                    higher_is_better=direction, min_n=min_n,
                )
            if why:
                unmarked.setdefault(why, []).append(f"{model} {header}")
            for row, cell, mark, method in zip(block, found, marks, present):
                row[key] = None if cell is None else {**{k: _nan_to_none(cell[k]) for k in ("value", "ci_low", "ci_high")}, "n": cell["n"], "mark": mark}
                if cell is None:
                    missing.setdefault((model, benchmark), {}).setdefault(method, []).append(header)
        rows += block
    for (model, benchmark), by_method in missing.items():
        headers = [h for (b, _), (_, h) in zip(columns, keys) if b == benchmark]
        everywhere = [m for m, where in by_method.items() if len(where) == len(headers)]
        if everywhere:
            notes.append(f"{model}, {benchmark}: not run for {', '.join(everywhere)}")
        for header in headers:
            some = [m for m, where in by_method.items() if header in where and m not in everywhere]
            if some:
                notes.append(f"{model}, {header}: no value for {', '.join(some)} (no sample scored)")
    notes += [f"no marks ({why}): {', '.join(where)}" for why, where in unmarked.items()]
    return rows, keys, notes


def methods_figure(cells: pa.Table, *, methods: Sequence[str], title: str):
    """One panel per (benchmark, metric): each method's estimate and 95%
    interval, one colour per model; a dashed line at each model's base."""
    rows = [r for r in cells.to_pylist() if r["shown"]]
    columns = list(dict.fromkeys((r["benchmark"], r["metric"]) for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    shown = [m for m in methods if any(r["method"] == m for r in rows)]
    fig, axes = panel_grid(max(1, len(columns)), width=3.6, height=0.35 * len(shown) + 1.4, sharey=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (benchmark, metric) in zip(axes, columns):
        for k, model in enumerate(models):
            offset = (k - (len(models) - 1) / 2) * 0.15
            for y, method in enumerate(shown):
                cell = next((r for r in rows if (r["model"], r["method"], r["benchmark"], r["metric"]) == (model, method, benchmark, metric)), None)
                if cell is None or cell["value"] is None or math.isnan(cell["value"]):
                    continue
                low, high = cell["ci_low"], cell["ci_high"]
                err = None if low is None or math.isnan(low) else [[cell["value"] - low], [high - cell["value"]]]
                ax.errorbar(cell["value"], y + offset, xerr=err, fmt="o", color=colours[k % len(colours)], ms=4, capsize=2, label=model)
                if method == "base":
                    ax.axvline(cell["value"], color=colours[k % len(colours)], ls="--", lw=0.8)
        ax.set_yticks(range(len(shown)), shown)
        ax.invert_yaxis()
        ax.set_title(f"{benchmark}\n{metric}", fontsize=9)
        ax.set_xlabel("value (95% CI)")
    unique = {}
    for ax in axes:  # one legend entry per model, wherever it first appears
        for handle, label in zip(*ax.get_legend_handles_labels()):
            unique.setdefault(label, handle)
    if unique:
        fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=len(unique), frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    return fig

"""The conflict-resolution methods table: methods as rows, each benchmark's
headline metrics as columns, one model block per model (issue 35).

Every benchmark contributes long-form *cells* (:data:`METHOD_CELL_SCHEMA`),
one per (model, method, benchmark, metric): the estimate, its 95% interval,
n and an identity of the samples behind it (:func:`samples_key`), and, while
the table is built, the per-item values behind it (``ITEMS``: ids and values).

Every method answers the same items as its model's baseline, so
:func:`with_paired` compares each method with the baseline item by item
(issue 50, item 3; :mod:`conflictlab.paired`): the difference (method −
baseline), its paired 95% interval, a paired p-value (exact McNemar for
proportions, a sign-flip test for means) and the number of pairs, joined on
the item id. A cell is marked best only where its method beats every other
row of its model block in paired tests, Holm-corrected across them
(:func:`conflictlab.paired.best_by_paired_tests`), with every row at n ≥
``min_n``. A method that did not run on a benchmark has an empty cell and a
note says why.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from conflictlab import metrics
from conflictlab.paired import (
    PAIRED_COLUMNS,
    PAIRED_MIN_N,
    adjusted_mean_interval,
    best_by_paired_tests,
    mcnemar_exact,
    nan_to_none,
    paired_columns,
    sign_flip_p,
    tango_interval,
)
from conflictlab.paired_ratios import (
    MIN_N_PAIRED_RATIO,
    best_by_ratio_tests,
    join_on_ids,
    paired_ratio_difference,
    paired_ratio_interval,
    swap_p,
)
from conflictlab.report.figures import panel_grid, plt
from conflictlab.specs import Metric
from conflictlab.stats import format_p

ITEMS = "_items"  # a cell's (item ids, per-item values) while the table is built; never written
# How the cell is compared with its baseline (conflictlab.metrics.paired_comparison: proportion | mean | ratio),
# while the table is built; never written. A ratio's ITEMS are (item ids, (n, 2) numerator and denominator) over
# every item, not the items its own value counts.
COMPARED_AS = "_compared_as"

METHOD_CELL_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field(
            "method", pa.string(), nullable=False
        ),  # base | a steering variant | a decoding/prompting method (file-name spelling)
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),  # the column header, e.g. "Acc (reasoning)"
        pa.field("value", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("samples", pa.string(), nullable=False),  # samples_key of the ids the cell averages
        pa.field("higher_is_better", pa.bool_()),  # null: neither direction is better (no marks)
        pa.field("interval", pa.string(), nullable=False),  # a name of metrics.METHOD_NAMES
        pa.field("shown", pa.bool_(), nullable=False),  # in the Markdown table and the figure (false: the CSV only)
        # against the model's baseline on the items both answered (null on the baseline's own row)
        pa.field("difference", pa.float64()),  # method − baseline
        pa.field("difference_low", pa.float64()),  # paired 95% interval; null below PAIRED_MIN_N pairs
        pa.field("difference_high", pa.float64()),
        pa.field("p_paired", pa.float64()),  # exact McNemar (proportions) | sign-flip (means)
        pa.field("p_paired_text", pa.string()),  # p_paired with two significant digits, "< 1e-4" below
        pa.field("n_pairs", pa.int64()),
        pa.field("paired_test", pa.string()),
        pa.field("best", pa.bool_(), nullable=False),  # beats every other row of its block, paired and Holm-corrected
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
    spec: Metric,
    paired_items: tuple[Sequence, np.ndarray] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """One cell from per-sample ``values`` (shape (n,)) of the metric ``spec``
    (:mod:`conflictlab.metrics`), which gives its interval
    (:func:`conflictlab.metrics.estimate`: the registry's interval for the
    metric, none below its minimum n, whose coverage tests/test_coverage.py
    checks), its direction and how it is
    compared with the baseline (:func:`conflictlab.metrics.paired_comparison`);
    ``metric`` is the column's label. ``paired_items``: a ratio's (item ids,
    (n, 2) per-item numerator and denominator) over every item, which its
    paired comparison takes (required for a ratio spec). ``n_resamples`` is
    unused since the percentile bootstrap, which undercovered at small n, was dropped."""
    values = np.asarray(values, dtype=float)
    if len(sample_ids) != values.size:
        raise ValueError(
            f"{benchmark} {metric} of {model}@{method}: {values.size} values but {len(sample_ids)} sample ids"
        )
    value, low, high = metrics.estimate(spec, values)
    compared_as = metrics.paired_comparison(spec)
    if (compared_as == "ratio") != (paired_items is not None):
        raise ValueError(
            f"{benchmark} {metric} of {model}@{method}: per-item numerators and denominators over every item are "
            "given for a ratio metric, and only for one"
        )
    return {
        "model": model,
        "method": method,
        "benchmark": benchmark,
        "metric": metric,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "n": int(values.size),
        "samples": samples_key(sample_ids),
        "higher_is_better": metrics.higher_is_better(spec),
        "interval": metrics.method_name(spec),
        "shown": True,
        ITEMS: (list(sample_ids), values) if paired_items is None else (list(paired_items[0]), paired_items[1]),
        COMPARED_AS: compared_as,
    }


def with_paired(cells: list[dict], *, base: str, min_n: int, n_resamples: int = 10_000, seed: int = 0) -> list[dict]:
    """``cells`` (dicts of :func:`method_cell`, or any with ``ITEMS``) with
    the paired columns of :data:`METHOD_CELL_SCHEMA` filled against the
    cell of method ``base`` of the same (model, benchmark, metric), and the
    ``best`` mark; ``ITEMS`` and ``COMPARED_AS`` removed. A cell without a
    baseline cell keeps null paired columns; each is compared as its
    ``COMPARED_AS`` says (proportions, means, or ratios over every item)."""
    groups: dict[tuple, list[dict]] = {}
    for cell in cells:
        groups.setdefault((cell["model"], cell["benchmark"], cell["metric"]), []).append(cell)
    out = []
    for group in groups.values():
        reference = next((c for c in group if c["method"] == base), None)
        for cell in group:
            paired = dict.fromkeys(PAIRED_COLUMNS)
            if reference is not None and cell is not reference:
                paired.update(_paired_cell(cell, reference, n_resamples=n_resamples, seed=seed))
            out.append({**cell, **paired, "best": False})
        direction = group[0]["higher_is_better"]
        if direction is not None and len(group) > 1 and all(c["n"] >= min_n for c in group):
            ids, values = [c[ITEMS][0] for c in group], [c[ITEMS][1] for c in group]
            compared_as, resamples = group[0][COMPARED_AS], min(n_resamples, 2000)
            if compared_as == "ratio":
                best = best_by_ratio_tests(ids, values, higher_is_better=direction, n_resamples=resamples, seed=seed)
            else:
                proportion = compared_as == "proportion"
                best = best_by_paired_tests(
                    ids, values, higher_is_better=direction, proportion=proportion, n_resamples=resamples, seed=seed
                )
            if best is not None:
                out[len(out) - len(group) + best]["best"] = True
    for cell in out:
        cell.pop(ITEMS, None)
        cell.pop(COMPARED_AS, None)
    return out


def _paired_cell(cell: dict, reference: dict, *, n_resamples: int, seed: int) -> dict:
    what = f"{cell['benchmark']} {cell['metric']} of {cell['model']}: {cell['method']} against {reference['method']}"
    if cell[COMPARED_AS] == "ratio":
        x, y = join_on_ids(*cell[ITEMS], *reference[ITEMS], what=what)
        if len(x) == 0:
            return {"n_pairs": 0}
        result = {
            k: nan_to_none(v) for k, v in paired_ratio_difference(x, y, n_resamples=n_resamples, seed=seed).items()
        }
        return {**result, "p_paired_text": format_p(result["p_paired"])}
    return paired_columns(
        cell[ITEMS],
        reference[ITEMS],
        proportion=cell[COMPARED_AS] == "proportion",
        what=what,
        n_resamples=n_resamples,
        seed=seed,
    )


def methods_table(
    cells: pa.Table, *, methods: Sequence[str], min_n: int
) -> tuple[list[dict], list[tuple[str, str]], list[str]]:
    """Rows, columns and notes of the methods table.

    ``methods``: the row order within each model block (a method without
    any cell for a model is left out of that block). Returns (rows, columns,
    notes): one dict per (model, method) with ``model``, ``method`` and, per
    column key, a cell dict (``value``, ``ci_low``, ``ci_high``, ``n``,
    ``mark``: "best" from the cells' ``best``, see :func:`with_paired`) or None; columns as (key, header) in the order
    benchmarks first
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
            direction = next((c["higher_is_better"] for c in found if c is not None), None)
            marks = ["best" if c is not None and c["best"] else "" for c in found]
            if direction is None:
                why = "neither direction is better"
            elif any(c is not None and c["n"] < min_n for c in found):
                why = f"n < {min_n}"
            elif not any(marks):
                why = "no method beats every other in paired tests, Holm-corrected at 5%"
            else:
                why = ""
            if why:
                unmarked.setdefault(why, []).append(f"{model} {header}")
            for row, cell, mark, method in zip(block, found, marks, present):
                row[key] = (
                    None
                    if cell is None
                    else {
                        **{k: nan_to_none(cell[k]) for k in ("value", "ci_low", "ci_high")},
                        "n": cell["n"],
                        "mark": mark,
                    }
                )
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
                cell = next(
                    (
                        r
                        for r in rows
                        if (r["model"], r["method"], r["benchmark"], r["metric"]) == (model, method, benchmark, metric)
                    ),
                    None,
                )
                if cell is None or cell["value"] is None or math.isnan(cell["value"]):
                    continue
                low, high = cell["ci_low"], cell["ci_high"]
                err = None if low is None or math.isnan(low) else [[cell["value"] - low], [high - cell["value"]]]
                ax.errorbar(
                    cell["value"],
                    y + offset,
                    xerr=err,
                    fmt="o",
                    color=colours[k % len(colours)],
                    ms=4,
                    capsize=2,
                    label=model,
                )
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


def paired_markdown(cells: pa.Table, *, base: str) -> str:
    """The paired comparisons of :func:`with_paired` as a Markdown table: one
    line per (model, method, column) compared with ``base``: difference
    [95% interval] in percentage points (every column is a share or a 0–1
    score), paired p, n of pairs, the test."""
    label = metrics.method_label
    lines = [
        f"Paired differences from {base} (method − {base}, percentage points) on the items both answered: proportions "
        f"with an {label(mcnemar_exact)} p and {label(tango_interval)} interval, means with a {label(sign_flip_p)} p "
        f"and the {label(adjusted_mean_interval)} interval, "
        f"ratios (MR) over every item both answered, matched or not, with a {label(swap_p)} p and the "
        f"{label(paired_ratio_interval)} interval (docs/statistics.md); no interval below "
        f"{PAIRED_MIN_N['proportion']} pairs (proportions), "
        f"{PAIRED_MIN_N['mean']} (means) or {MIN_N_PAIRED_RATIO} (ratios), nor where every difference is equal "
        "(no spread). Each p is one comparison with the baseline, unadjusted for the others (the best marks above use "
        "Holm's adjustment).\n",
        "| model | method | column | difference [95% CI] | p (paired) | pairs | test |",
        "|---|---|---|---|---|---|---|",
    ]
    # the fewest pairs of the comparison the cell got (metrics.paired_comparison chose it), by its test's name
    fewest_pairs = {
        label(mcnemar_exact): PAIRED_MIN_N["proportion"],
        label(swap_p): MIN_N_PAIRED_RATIO,
        "": PAIRED_MIN_N["mean"],
    }
    for r in cells.to_pylist():
        if r["n_pairs"] is None:
            continue
        scale = 100.0  # every column of the table is a share or a 0-1 score, shown in percent
        diff = "–" if r["difference"] is None else f"{scale * r['difference']:+.1f}"
        minimum = next(m for test, m in fewest_pairs.items() if (r["paired_test"] or "").startswith(test))
        if r["difference_low"] is not None:
            diff += f" [{scale * r['difference_low']:+.1f}, {scale * r['difference_high']:+.1f}]"
        elif r["difference"] is not None:
            diff += f" (no interval at n = {r['n_pairs']} < {minimum})" if r["n_pairs"] < minimum else " (no spread)"
        lines.append(
            f"| {r['model']} | {r['method']} | {r['benchmark']} {r['metric']} | {diff} | {r['p_paired_text'] or '–'} "
            f"| {r['n_pairs']} | {r['paired_test'] or '–'} |"
        )
    return "\n".join(lines) + "\n"

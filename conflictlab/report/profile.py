"""One model's conflict profile across the four benchmarks: one HTML page, one figure.

The page reads only the aggregate tables the other rules write, so every
number on it is a number of its table (nothing is re-estimated):

======================  ===============================================  ==================================
benchmark               rows of the page                                 table (``results/tables/``)
======================  ===============================================  ==================================
ContextConflict         accuracy per reasoning type (Clopper-Pearson)    ``accuracy.csv``, ``level = type``
                        Balance per summarization type and scorer        ``balance.csv``, ``group = all``
                        (Student-t); Faithfulness per type where judged  ``faithfulness.csv`` (n = n_scored)
evidence arbitration    conflict accuracy when the numbers / the text    ``arbitration_orders.csv``
                        are right, share following the numbers           (one unit per instance)
                        (modality setting); conflict accuracy per
                        setting (Clopper-Pearson over instances)
CONFLICTS               Task 1 type-prediction accuracy per read-out;    ``conflicts_table4.csv``,
                        Task 2 expected behaviour and answer recall      ``conflicts_table5.csv``,
                        per strategy, expected behaviour per category    ``conflicts_table6.csv``
                        and strategy                                     (``source = this run``)
ConflictBank            MR, OAR, CAR per conflict kind (conflicting      ``conflictbank_mr.csv``
                        evidence alone: settings misinformation,
                        temporal, semantic)
======================  ===============================================  ==================================

The arbitration rows read the order-paired table: an instance asked in both
evidence orders is one unit (the mean of its two answers), so its n is the
instances, not the prompts of both orders as if they were independent.

Conventions (README, Statistics): every cell shows its n; an interval is
shown only at n >= 2 (:data:`conflictlab.stats.MIN_N_INTERVAL`), also where
a table carries one below; no cell is marked best, since the columns are
different models and their cells need not stand on the same samples.

Published numbers: the only ones typed into this repository are CONFLICTS'
Tables 4-6 (``conflictlab.conflicts.tables``, ``source = paper`` rows);
:func:`paper_cells` takes those rows of the page's model, found by
:func:`conflictlab.report.paper_models.paper_model_name` (the matcher the
reproduction report uses too).
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from conflictlab import benchmarks, metrics
from conflictlab.report import reproduction
from conflictlab.report.paper_models import paper_model_name  # noqa: F401  (the pages find their paper names through it)
from conflictlab.report.tables import format_estimate
from conflictlab.stats import MIN_N_INTERVAL

# The benchmarks in the report's order (conflictlab.benchmarks): a descriptor's title, what, models_key, its
# profile_sections and its headline (the regular expression that picks the cells each figure panel plots).
BENCHMARKS = benchmarks.REGISTRY
BENCHMARK_BY_KEY = benchmarks.BY_NAME

# Each section of the page: (benchmark, section key) -> (title, source table and how it is read).
SECTIONS = {(b.name, s.key): (s.title, s.source) for b in BENCHMARKS for s in b.profile_sections}

# The cells each figure panel plots (the benchmark's headline), by key.
HEADLINE = {b.name: re.compile(b.headline or "$^").search for b in BENCHMARKS}

ARBITRATION_SETTINGS = {
    "modality": "modality (text vs numbers)",
    "recency": "recency (recent vs stale window)",
    "reliability": "reliability (clean vs unreliable source)",
    "tool": "tool (context vs tool forecast)",
}
CONFLICTBANK_KINDS = ("misinformation", "temporal", "semantic")
CONFLICTBANK_RATES = (("mr", "MR", "n_mr"), ("oar", "OAR", "n_scored"), ("car", "CAR", "n_scored"))

PAPER_TABLES = {"table4": "CONFLICTS Table 4", "table5": "CONFLICTS Table 5", "table6": "CONFLICTS Table 6"}

THIS_RUN, PAPER = "this run", "paper"


# --------------------------------------------------------------------------
# Reading


def read_csv_rows(path) -> list[dict]:
    """A result table's CSV as a list of row dicts; empty cells and ``nan`` are None."""
    return pacsv.read_csv(path).to_pylist()


def read_table_rows(path) -> list[dict]:
    """A result table as a list of row dicts: Parquet (``.parquet``) or CSV (:func:`read_csv_rows`)."""
    if str(path).endswith(".parquet"):
        return pq.read_table(path).to_pylist()
    return read_csv_rows(path)


def _rows(table: pa.Table | Sequence[dict] | None) -> list[dict]:
    if table is None:
        return []
    return table.to_pylist() if isinstance(table, pa.Table) else list(table)


def _number(value) -> float | None:
    """A float, or None for a missing or NaN value."""
    if value is None or value == "":
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _count(value) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def profile_cell(benchmark, section, key, label, model, value, low, high, n, *, paper_key=None) -> dict:
    """One number of the page. Its interval is dropped at n < 2 (also where
    a table carries one), and where it is incomplete."""
    n = _count(n)
    value, low, high = _number(value), _number(low), _number(high)
    if n is None or n < MIN_N_INTERVAL or low is None or high is None:
        low = high = None
    return {
        "benchmark": benchmark,
        "section": section,
        "key": key,
        "paper_key": paper_key or key,
        "label": label,
        "model": model,
        "value": value,
        "low": low,
        "high": high,
        "n": n,
    }


def interval_note(shown: Sequence = BENCHMARKS) -> str:
    """Which interval each metric of the ``shown`` benchmarks' profile sections gets, from the metric
    registry: e.g. "clopper-pearson for accuracy, ...; student-t for balance, faithfulness (none at n < 30)"."""
    by_method: dict[str, list] = {}
    registry = metrics.with_benchmarks(BENCHMARKS)
    for spec in dict.fromkeys(metrics.get(m, registry) for b in shown for s in b.profile_sections for m in s.metrics):
        by_method.setdefault(metrics.method_name(spec) or "no interval", []).append(spec)
    parts = []
    for method, specs in by_method.items():
        floor = max(spec.min_n_interval for spec in specs)
        parts.append(
            f"{method} for {', '.join(spec.name.replace('_', ' ') for spec in specs)}"
            + (f" (none at n < {floor})" if floor > MIN_N_INTERVAL else "")
        )
    return "; ".join(parts)


# --------------------------------------------------------------------------
# Models


def profile_models(model_lists: Mapping[str, Sequence[str]]) -> list[str]:
    """Every model named in any benchmark's model list (``{benchmark key:
    models}``), in order of first mention: the models that get a page."""
    return list(dict.fromkeys(m for key in BENCHMARK_BY_KEY for m in model_lists.get(key, ())))


# --------------------------------------------------------------------------
# Cells per benchmark (from the aggregate tables)


def contextconflict_cells(accuracy=None, balance=None, faithfulness=None, *, models: Sequence[str]) -> list[dict]:
    """Accuracy per reasoning type, Balance per summarization type and
    scorer, Faithfulness per type, of ``models``."""
    cells = []
    for r in _rows(accuracy):
        if r["model"] in models and r["level"] == "type":
            cells.append(
                profile_cell(
                    "contextconflict",
                    "accuracy",
                    f"accuracy/{r['conflict_type']}",
                    r["conflict_type"],
                    r["model"],
                    r["accuracy"],
                    r["ci_low"],
                    r["ci_high"],
                    r["n"],
                )
            )
    for r in _rows(balance):
        if r["model"] in models and r["group"] == "all":
            cells.append(
                profile_cell(
                    "contextconflict",
                    "balance",
                    f"balance/{r['scorer']}/{r['conflict_type']}",
                    f"{r['conflict_type']} (scorer {r['scorer']})",
                    r["model"],
                    r["balance"],
                    r["ci_low"],
                    r["ci_high"],
                    r["n"],
                )
            )
    for r in _rows(faithfulness):
        if r["model"] in models:
            cells.append(
                profile_cell(
                    "contextconflict",
                    "faithfulness",
                    f"faithfulness/{r['conflict_type']}",
                    r["conflict_type"],
                    r["model"],
                    r["faithfulness"],
                    r["ci_low"],
                    r["ci_high"],
                    r["n_scored"],
                )
            )
    return cells


def arbitration_cells(orders=None, *, models: Sequence[str]) -> list[dict]:
    """From the arbitration order-paired table (one unit per instance, both
    evidence orders averaged within it), per model, under conflict: accuracy
    when the numbers are right and when the text is right, and the share of
    answers that follow the numbers (modality setting); accuracy per setting
    over both aligned sources. Each with its table's interval and n = the
    instances (n_pairs), never the prompts of both orders as if independent."""
    rows = [r for r in _rows(orders) if r["model"] in models]
    cells = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = {(r["setting"], r["aligned_source"]): r for r in rows if r["model"] == model}
        if any(setting == "modality" for setting, _ in mine):
            none = {
                "accuracy": None,
                "accuracy_low": None,
                "accuracy_high": None,
                "n_pairs": 0,
            }  # a source not run: n = 0
            for source, label in (
                ("numbers", "accuracy when the numbers are right"),
                ("text", "accuracy when the text is right"),
            ):
                r = mine.get(("modality", source), none)
                cells.append(
                    profile_cell(
                        "arbitration",
                        "modality",
                        f"modality/{source}_right",
                        label,
                        model,
                        r["accuracy"],
                        r["accuracy_low"],
                        r["accuracy_high"],
                        r["n_pairs"],
                    )
                )
            r = mine["modality", "all"]
            cells.append(
                profile_cell(
                    "arbitration",
                    "modality",
                    "modality/follows_numbers",
                    "answers following the numbers",
                    model,
                    r["follows_numbers"],
                    r["follows_numbers_low"],
                    r["follows_numbers_high"],
                    r["n_pairs"],
                )
            )
        for (setting, source), r in mine.items():
            if source == "all":
                cells.append(
                    profile_cell(
                        "arbitration",
                        "settings",
                        f"settings/{setting}",
                        ARBITRATION_SETTINGS.get(setting, setting),
                        model,
                        r["accuracy"],
                        r["accuracy_low"],
                        r["accuracy_high"],
                        r["n_pairs"],
                    )
                )
    return cells


def conflicts_cells(
    table4=None, table5=None, table6=None, *, models: Sequence[str], source: str = THIS_RUN
) -> list[dict]:
    """CONFLICTS Task 1 accuracy per read-out, Task 2 expected behaviour and
    answer recall per strategy, expected behaviour per category and
    strategy: the rows of ``source`` (``this run`` or ``paper``) of
    ``models``, each cell with its ``origin`` (table, row, column). Every
    read-out's Task 1 row compares with the paper's one number
    (``paper_key`` ``task1``)."""
    cells = []
    for r in _rows(table4):
        if r["source"] == source and r["model"] in models:
            readout = r.get("readout") or ""
            cell = profile_cell(
                "conflicts",
                "task1",
                f"task1/{readout}" if readout else "task1",
                f"type-prediction accuracy ({readout})" if readout else "type-prediction accuracy",
                r["model"],
                r["accuracy"],
                r["ci_low"],
                r["ci_high"],
                r["n"],
                paper_key="task1",
            )
            cells.append({**cell, "origin": f"{PAPER_TABLES['table4']}, row '{r['model']}'"})
    for r in _rows(table5):
        if r["source"] == source and r["model"] in models:
            s, origin = r["strategy"], f"{PAPER_TABLES['table5']}, row '{r['model']}', {r['strategy']}"
            cells.append(
                {
                    **profile_cell(
                        "conflicts",
                        "task2",
                        f"behaviour/{s}",
                        f"expected behaviour, {s}",
                        r["model"],
                        r["expected_behaviour"],
                        r["eb_low"],
                        r["eb_high"],
                        r["n_behaviour"],
                    ),
                    "origin": origin,
                }
            )
            cells.append(
                {
                    **profile_cell(
                        "conflicts",
                        "task2",
                        f"recall/{s}",
                        f"answer recall, {s}",
                        r["model"],
                        r["answer_recall"],
                        r["ar_low"],
                        r["ar_high"],
                        r["n_recall"],
                    ),
                    "origin": origin,
                }
            )
    for r in _rows(table6):
        if r["source"] == source and r["model"] in models:
            # the strategy columns: each has its bounds and its n beside it
            for s in [c for c in r if f"{c}_low" in r and f"n_{c}" in r]:
                cell = profile_cell(
                    "conflicts",
                    "categories",
                    f"category/{r['category']}/{s}",
                    f"{r['category']}: {s}",
                    r["model"],
                    r[s],
                    r[f"{s}_low"],
                    r[f"{s}_high"],
                    r[f"n_{s}"],
                )
                cells.append({**cell, "origin": f"{PAPER_TABLES['table6']}, row '{r['model']}', {r['category']}, {s}"})
    return cells


def conflictbank_cells(table=None, *, models: Sequence[str]) -> list[dict]:
    """MR, OAR and CAR per model and conflict kind, with the conflicting
    evidence alone (settings ``misinformation``, ``temporal``, ``semantic``)."""
    rows = [r for r in _rows(table) if r["model"] in models]
    cells = []
    for kind in CONFLICTBANK_KINDS:
        for rate, name, n in CONFLICTBANK_RATES:
            for r in rows:
                if r["setting"] == kind:
                    cells.append(
                        profile_cell(
                            "conflictbank",
                            "kinds",
                            f"{kind}/{rate}",
                            f"{name}, {kind}",
                            r["model"],
                            r[rate],
                            r[f"{rate}_low"],
                            r[f"{rate}_high"],
                            r[n],
                        )
                    )
    return cells


def paper_cells(paper_name: str | None, table4=None, table5=None, table6=None) -> list[dict]:
    """The paper's numbers of ``paper_name``: its rows ``source = paper`` in
    CONFLICTS Tables 4-6, each cell with its ``origin`` (table and row)."""
    if not paper_name:
        return []
    return conflicts_cells(table4, table5, table6, models=[paper_name], source=PAPER)


def paper_names(*tables) -> list[str]:
    """The model names of every ``source = paper`` row of ``tables``."""
    return list(dict.fromkeys(r["model"] for t in tables for r in _rows(t) if r.get("source") == PAPER))


# --------------------------------------------------------------------------
# Figure


def profile_figure(
    model: str, cells: Sequence[dict], model_lists: Mapping[str, Sequence[str]], paper: Sequence[dict] = ()
):
    """One panel per benchmark: its headline cells (:data:`HEADLINE`)
    per model, in %, with their intervals; ``model`` in red with its n, the
    others in grey tones, the paper's numbers (where any) as open stars."""
    from conflictlab.report.figures import panel_grid

    fig, axes = panel_grid(len(BENCHMARKS), width=4.6, height=3.6, ncols=2, sharey=False)
    for ax, bench in zip(axes, BENCHMARKS):
        models = list(model_lists.get(bench.name, ()))
        shown = [
            c for c in cells if c["benchmark"] == bench.name and HEADLINE[bench.name](c["key"]) and c["model"] in models
        ]
        keys = list(dict.fromkeys(c["key"] for c in shown))
        labels = {c["key"]: c["label"] for c in shown}
        paper_keys = {c["key"]: c["paper_key"] for c in shown}
        title = bench.title if model in models else f"{bench.title}\n(not run for this model)"
        ax.set_title(title, fontsize=9, color="black" if model in models else "dimgrey")
        if not keys:
            ax.text(
                0.5,
                0.5,
                "not configured in this run" if not models else "no numbers in its tables",
                ha="center",
                va="center",
                transform=ax.transAxes,
                color="dimgrey",
            )
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        ordered = [m for m in models if m != model] + ([model] if model in models else [])
        width = 0.7 / max(len(ordered) + 1, 2)
        greys = ("0.45", "0.65", "0.3", "0.55", "0.75")
        for i, name in enumerate(ordered):
            offset = (i - (len(ordered) - 1) / 2) * width
            mine = {c["key"]: c for c in shown if c["model"] == name}
            xs = [j + offset for j, k in enumerate(keys) if k in mine and mine[k]["value"] is not None]
            points = [mine[k] for k in keys if k in mine and mine[k]["value"] is not None]
            if not points:
                continue
            ys = [100 * c["value"] for c in points]
            errors = [
                [100 * (c["value"] - c["low"]) if c["low"] is not None else 0.0 for c in points],
                [100 * (c["high"] - c["value"]) if c["high"] is not None else 0.0 for c in points],
            ]
            this = name == model
            ax.errorbar(
                xs,
                ys,
                yerr=errors,
                fmt="o" if this else "s",
                markersize=6 if this else 4,
                capsize=2,
                color="tab:red" if this else greys[i % len(greys)],
                zorder=3 if this else 2,
                label=f"{name} (this page)" if this else name,
            )
            if this:
                for x, y, c in zip(xs, ys, points):
                    ax.annotate(
                        f"n={c['n']}", (x, y), textcoords="offset points", xytext=(5, -2), fontsize=6, color="tab:red"
                    )
        published = {c["paper_key"]: c for c in paper if c["benchmark"] == bench.name and c["value"] is not None}
        stars = [(j, 100 * published[paper_keys[k]]["value"]) for j, k in enumerate(keys) if paper_keys[k] in published]
        if stars:
            ax.scatter(
                [x + 0.3 for x, _ in stars],
                [y for _, y in stars],
                marker="*",
                s=80,
                facecolors="none",
                edgecolors="tab:red",
                zorder=4,
                label=f"paper ({next(iter(published.values()))['model']})",
            )
        ax.set_xticks(range(len(keys)), [_tick(labels[k]) for k in keys], rotation=30, ha="right", fontsize=7)
        ax.set_xlim(-0.6, len(keys) - 0.4)
        ax.set_ylim(-8, 135)  # the band above 100 holds the legend
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("%")
        ax.legend(fontsize=6, loc="upper center", ncol=2, frameon=False)
    fig.suptitle(
        f"Conflict profile of {model}: headline numbers per benchmark, 95% intervals (none at n < 2)", fontsize=10
    )
    fig.tight_layout()
    return fig


def _tick(label: str) -> str:
    """A shorter axis label of a page row."""
    for long, short in (
        ("type-prediction accuracy", "Task 1"),
        ("expected behaviour", "behaviour"),
        ("accuracy when the ", "acc., "),
        (" are right", " right"),
        (" is right", " right"),
        ("answers following the", "follows"),
    ):
        label = label.replace(long, short)
    return label


def figure_png(fig) -> bytes:
    """The figure as PNG bytes (150 dpi, as :func:`conflictlab.report.figures.save`); closes it."""
    from conflictlab.report.figures import plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


# --------------------------------------------------------------------------
# Page


def format_cell(cell: dict | None) -> str:
    """``62.5 [48.1, 75.2] (n=8)`` in %; ``– (n=0)`` without a value; ``–`` without a cell."""
    if cell is None:
        return "–"
    value = format_estimate(cell["value"], cell["low"], cell["high"]) or "–"
    return f"{value} (n={cell['n']})" if cell["n"] is not None else value


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th.this, td.this { background: #fde8e8; font-weight: bold; }
th.paper, td.paper { background: #eef3fb; font-style: italic; }
td.origin { color: #555; font-size: 0.85em; text-align: left; }
.source, .note { color: #555; font-size: 0.85em; margin: 0.2em 0; }
.notrun { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.4em 0.8em; }
img { max-width: 100%; }
"""


def _section_table(model: str, models: Sequence[str], cells: Sequence[dict], paper: Sequence[dict]) -> str:
    keys = list(dict.fromkeys(c["key"] for c in cells))
    labels = {c["key"]: c["label"] for c in cells}
    paper_keys = {c["key"]: c["paper_key"] for c in cells}
    by = {(c["key"], c["model"]): c for c in cells}
    published = {c["paper_key"]: c for c in paper}
    with_paper = any(paper_keys[k] in published for k in keys)
    head = ["<th></th>"] + [
        f'<th class="this">{html.escape(m)} (this page)</th>' if m == model else f"<th>{html.escape(m)}</th>"
        for m in models
    ]
    if with_paper:
        head += [f'<th class="paper">paper: {html.escape(paper[0]["model"])}</th>', "<th>paper's source</th>"]
    lines = ["<table>", "<tr>" + "".join(head) + "</tr>"]
    for key in keys:
        row = [f"<td>{html.escape(labels[key])}</td>"]
        row += [
            ('<td class="this">' if m == model else "<td>") + html.escape(format_cell(by.get((key, m)))) + "</td>"
            for m in models
        ]
        if with_paper:
            mine = published.get(paper_keys[key])
            row += [
                f'<td class="paper">{html.escape(format_cell(mine)) if mine else "–"}</td>',
                f'<td class="origin">{html.escape(mine["origin"]) if mine else ""}</td>',
            ]
        lines.append("<tr>" + "".join(row) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def _methods_section(model: str, methods: Sequence[dict]) -> str:
    """This model's rows of the methods table (``results/tables/methods.csv``
    rows, the cells shown there): methods down, metrics across."""
    mine = [r for r in methods if r["model"] == model and str(r["shown"]).lower() == "true"]
    if not mine:
        return '<p class="notrun">No conflict-resolution method ran for this model (add it to <code>methods.models</code>).</p>'
    columns = list(dict.fromkeys(f"{r['benchmark']} {r['metric']}" for r in mine))
    rows = list(dict.fromkeys(r["method"] for r in mine))
    by = {(r["method"], f"{r['benchmark']} {r['metric']}"): r for r in mine}
    lines = ["<table>", "<tr><th>method</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>"]
    for method in rows:
        cells = [by.get((method, c)) for c in columns]
        shown = [
            format_cell(
                None
                if r is None
                else {
                    "value": _number(r["value"]),
                    "low": _number(r["ci_low"]),
                    "high": _number(r["ci_high"]),
                    "n": _count(r["n"]),
                }
            )
            for r in cells
        ]
        lines.append(
            f"<tr><td>{html.escape(method)}</td>" + "".join(f"<td>{html.escape(v)}</td>" for v in shown) + "</tr>"
        )
    lines.append("</table>")
    return "\n".join(lines)


def _verdict_section(model: str, verdicts: Sequence[dict]) -> list[str]:
    """The reproduction report's rows of ``model`` (``our_model``), with their verdicts, as on results/reproduction.html."""
    mine = [r for r in verdicts if r.get("our_model") == model]
    out = [
        "<h2>Reproduction verdicts</h2>",
        '<p class="source">Source: results/reproduction.csv (results/reproduction.html explains the verdicts).</p>',
    ]
    if not mine:
        return out + [f'<p class="note">No paper row is of {html.escape(model)} in this run.</p>']
    out.append(f"<p><b>{html.escape(reproduction.summary_line(mine))}.</b></p>")
    return out + [reproduction.verdict_table_html(mine)]


def render_page(
    model: str,
    model_lists: Mapping[str, Sequence[str]],
    cells: Sequence[dict],
    paper: Sequence[dict] = (),
    *,
    paper_name: str | None = None,
    paper_models: Sequence[str] = (),
    png: bytes | None = None,
    configured: Mapping[str, bool] | None = None,
    methods: Sequence[dict] | None = None,
    verdicts: Sequence[dict] | None = None,
) -> str:
    """The self-contained HTML page of ``model``.

    ``model_lists``: each benchmark's models (its columns, ``model``'s
    highlighted); ``cells``: every model's numbers (:func:`contextconflict_cells`
    and the others); ``paper``: the paper's numbers of ``model``
    (:func:`paper_cells`), named ``paper_name``; ``paper_models``: every
    model the repository has published numbers of; ``png``: the figure,
    embedded as base64; ``configured``: per benchmark whether its tables
    were read (default: whether any model runs it); ``methods``: the rows of
    the methods table (``results/tables/methods.csv``), None where this run
    has none; ``verdicts``: the rows of ``results/reproduction.csv`` (the
    reproduction report's verdicts; those of ``model`` are shown).
    """
    everyone = profile_models(model_lists)
    if model not in everyone:
        raise ValueError(
            f"{model!r} is in no benchmark's model list ({', '.join(b.models_key for b in BENCHMARKS)}); "
            f"pages exist for: {', '.join(everyone) or 'none'}"
        )
    configured = dict(configured or {b.name: bool(model_lists.get(b.name)) for b in BENCHMARKS})
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Conflict profile: {html.escape(model)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Conflict profile: {html.escape(model)}</h1>",
        f'<p class="note">Every number in % with its 95% interval in brackets and its n: {html.escape(interval_note())}; '
        f"no interval at n &lt; {MIN_N_INTERVAL}. Columns are the models of this run that "
        "take part in each benchmark; this page's model is highlighted. No cell is marked best: the columns are different models, "
        "and the paper's numbers stand on the full release, not on this run's samples. The numbers are those of the tables named "
        "under each section (results/tables/).</p>",
    ]
    ran = [b.title for b in BENCHMARKS if model in model_lists.get(b.name, ())]
    out.append(f"<p><b>Benchmarks run for this model:</b> {html.escape(', '.join(ran))}.</p>")
    if paper:
        origins = sorted({c["origin"].split(", row")[0] for c in paper})
        out.append(
            f"<p><b>Published numbers:</b> the paper's numbers of {html.escape(paper_name or '')} (columns "
            f"“paper”) from {html.escape(', '.join(origins))}, as typed into conflictlab.conflicts.tables. "
            "This repository holds no published numbers of it for the other benchmarks.</p>"
        )
    else:
        known = (
            f" (it holds them for {html.escape(', '.join(paper_models))}, CONFLICTS Tables 4-6)" if paper_models else ""
        )
        out.append(
            f"<p><b>Published numbers:</b> none for this model: this repository holds no published numbers of "
            f"{html.escape(model)} for any of the four benchmarks{known}.</p>"
        )
    if png:
        out.append(
            f'<figure><img alt="conflict profile of {html.escape(model)}" src="data:image/png;base64,'
            f'{base64.b64encode(png).decode("ascii")}"><figcaption class="note">One panel per benchmark: its headline numbers '
            "per model (this page's model in red, with its n), 95% intervals; open stars: the paper's numbers of this model.</figcaption></figure>"
        )
    for bench in BENCHMARKS:
        models = list(model_lists.get(bench.name, ()))
        out.append(f"<h2>{html.escape(bench.title)}</h2>")
        out.append(f'<p class="note">{html.escape(bench.what)}.</p>')
        if model not in models:
            out.append(
                f'<p class="notrun">Not run for this model (add it to <code>{html.escape(bench.models_key)}</code>).</p>'
            )
        if not configured.get(bench.name):
            out.append(
                f'<p class="note">No model runs this benchmark in this configuration (<code>{html.escape(bench.models_key)}</code> is empty).</p>'
            )
            continue
        mine = [c for c in cells if c["benchmark"] == bench.name and c["model"] in models]
        sections = [s for (b, s) in SECTIONS if b == bench.name]
        for section in sections:
            section_cells = [c for c in mine if c["section"] == section]
            if not section_cells:
                continue
            title, source = SECTIONS[(bench.name, section)]
            out.append(f"<h3>{html.escape(title)}</h3>")
            out.append(f'<p class="source">Source: {html.escape(source)}.</p>')
            out.append(
                _section_table(
                    model,
                    models,
                    section_cells,
                    [c for c in paper if c["benchmark"] == bench.name and c["section"] == section],
                )
            )
        if not mine:
            out.append('<p class="note">Its tables hold no numbers of these models.</p>')
        if not any(c["benchmark"] == bench.name for c in paper):
            out.append(
                f'<p class="note">Paper: no published numbers of {html.escape(model)} for {html.escape(bench.title)} in this repository.</p>'
            )
    if verdicts is not None:
        out += _verdict_section(model, verdicts)
    if methods is not None:
        out.append("<h2>Conflict-resolution methods</h2>")
        out.append('<p class="source">Source: results/tables/methods.csv (best marks and the other models there).</p>')
        out.append(_methods_section(model, methods))
    out.append("</body></html>")
    return "\n".join(out) + "\n"

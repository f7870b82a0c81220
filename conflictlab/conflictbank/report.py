"""ConflictBank tables and figures: MR/OAR per model and setting (table and
figure of the three contrasts the paper draws: conflict alone vs with the
correct evidence, correct-first vs conflict-first, without vs with
descriptions) and the embedded-knowledge table and panel (paper Figures 6–7).
Every table shows n per row: n_records, n_scored and MR's own n_mr.

The metric tables are small (a row per model and setting, or per scoring,
ratio, model and setting); cells are looked up by key in them."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from conflictlab.conflictbank.dataset import CONFLICT_KINDS
from conflictlab.conflictbank.metrics import RATES, SCORED_SUBSET
from conflictlab.report.figures import panel_grid
from conflictlab.report.tables import write_markdown_and_csv


def _percent(cells: dict, cell: tuple, column: str) -> tuple[float, float, float]:
    """(point, low, high) of ``column`` in percent from ``cells[cell]`` (a metric row); NaN when absent."""
    row = cells.get(cell, {})
    return tuple(math.nan if row.get(name) is None else 100.0 * row[name] for name in (column, f"{column}_low", f"{column}_high"))


def _error_bars(points: Sequence[tuple[float, float, float]]) -> np.ndarray:
    """(2, k) distances from each point to its interval's ends, 0 where there is no interval."""
    return np.nan_to_num(np.array([[p - low, high - p] for p, low, high in points], dtype=float).reshape(-1, 2).T)


def contrasts(kind: str) -> list[tuple[str, str, str]]:
    """(label, setting A, setting B) pairs of one conflict kind for the three contrasts."""
    pairs = [
        ("alone vs with correct", kind, f"correct_{kind}"),
        ("correct first vs conflict first", f"correct_{kind}", f"correct_{kind}_reversed"),
    ]
    if kind != "misinformation":
        pairs.append(("without vs with description", kind, f"{kind}_description"))
    return pairs


CONTRAST_LABELS = {
    "alone vs with correct": ("conflict evidence only", "with correct evidence"),
    "correct first vs conflict first": ("correct first", "conflict first"),
    "without vs with description": ("without description", "with description"),
}


def memorization_figure(metrics: pa.Table, models: Sequence[str]):
    """One row of three panels per model: MR by conflict kind for each contrast,
    bars with their Wilson interval and n_mr (MR's denominator) under each bar;
    the scored subset size in the title. A bar is missing where n_mr = 0."""
    fig, axes = panel_grid(3 * len(models), width=3.6, height=3.0, ncols=3)
    table = pl.from_arrow(metrics)
    cells = table.rows_by_key(["model", "setting"], named=True, unique=True, include_key=True)
    scored = dict(table.group_by("model").agg(pl.col("n_scored").first()).iter_rows())  # its first setting's, as before
    for m, model in enumerate(models):
        n = scored.get(model, 0)
        for c, contrast in enumerate(CONTRAST_LABELS):
            ax = axes[3 * m + c]
            for side, offset in ((0, -0.2), (1, 0.2)):
                xs, points, counts = [], [], []
                for k, kind in enumerate(CONFLICT_KINDS):
                    pair = next((p for p in contrasts(kind) if p[0] == contrast), None)
                    if pair is None:
                        continue
                    xs.append(k + offset)
                    points.append(_percent(cells, (model, pair[1 + side]), "mr"))
                    counts.append(cells.get((model, pair[1 + side]), {}).get("n_mr", 0))
                ax.bar(xs, [p[0] for p in points], width=0.4, yerr=_error_bars(points) if points else None, capsize=2,
                       label=CONTRAST_LABELS[contrast][side])
                for x, count in zip(xs, counts):
                    ax.text(x, 1.0, f"{count}", ha="center", va="bottom", fontsize=5)
            ax.axhline(50.0, color="grey", lw=0.8, ls="--")
            ax.set_xticks(range(len(CONFLICT_KINDS)), CONFLICT_KINDS, fontsize=8)
            ax.set_xlim(-0.6, len(CONFLICT_KINDS) - 0.4)  # missing (NaN) bars do not widen the axis
            ax.set_ylim(0, 100)
            ax.set_ylabel("MR (%); n_mr at the foot")
            ax.set_title(f"{model} (n={n})\n{contrast}", fontsize=8)
            ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


_INTERVALS = {name: (f"{name}_low", f"{name}_high") for name in (*RATES, "mr", "entropy")}
_DISPLAY = dict(
    intervals=_INTERVALS,
    scale={name: 100 for name in (*RATES, "mr")},
    decimals={"entropy": 3},
)
_NOTES = [
    "Rates in % of the n_scored records with Wilson 95% intervals; MR = OAR/(OAR+CAR) in % of the n_mr scored answers "
    "that are correct or replaced, its Wilson interval over n_mr. No interval at n < 2.",
    "MR is empty where n_mr = 0 (no scored answer is correct or replaced; the authors' evaluate.py reports 0); "
    "'neither' = 1 - OAR - CAR (the uncertain option or the other distractor).",
]
_ENTROPY_NOTE = "Mean entropy (bits) of the A-D probabilities with a percentile-bootstrap interval over the scored records."


def write_metric_table(metrics: pa.Table, md_path, csv_path) -> None:
    """The per model and setting table (``metrics``: ``METRIC_SCHEMA``)."""
    write_markdown_and_csv(
        metrics, md_path, csv_path,
        caption="ConflictBank per model and setting, on the scored subset (records answered correctly without evidence "
        "and with the correct evidence; n_scored of n_records): OAR, CAR, uncertain and neither rates, MR and mean "
        "entropy of the A-D probabilities. '_reversed': conflicting evidence first.",
        notes=[*_NOTES, _ENTROPY_NOTE], **_DISPLAY,
    )


def write_embedded_table(rows: pa.Table, md_path, csv_path) -> None:
    """The embedded-knowledge table (``rows``: ``metrics.EMBEDDED_SCHEMA``)."""
    write_markdown_and_csv(
        rows, md_path, csv_path,
        caption="Embedded knowledge: OAR, CAR, neither rate and MR after continued pre-training on default : conflicting "
        "evidence text at each ratio ('base': the model before training). Every ratio trains for the same optimiser "
        "steps on packed sequences of the same length, so on the same number of tokens (and a larger conflicting share "
        "means fewer passes over each default text); the conflicting texts of a smaller share are a subset of a larger "
        "one's. Headline: scored_on = 'scored subset', the base model's scored "
        "subset at every ratio (as the authors' evaluate.py selects it); companion: 'all records'.",
        columns=["model", "ratio", "scored_on", "setting", "n_records", "n_scored", "oar", "car", "neither", "n_mr", "mr"],
        notes=_NOTES, **_DISPLAY,
    )


def embedded_figure(rows: pa.Table):
    """One row of two panels per model, on the headline rows (the base model's
    scored subset): OAR per ratio for each setting without conflicting evidence
    (left) and MR per ratio for each setting with it (right); one line per
    setting, Wilson intervals as error bars, n in the title."""
    data = pl.from_arrow(rows).filter(pl.col("scored_on") == SCORED_SUBSET)
    models = data["model"].unique(maintain_order=True).to_list()
    fig, axes = panel_grid(2 * max(1, len(models)), width=4.0, height=3.0, ncols=2, sharey=False)
    ratios = data["ratio"].unique(maintain_order=True).to_list()
    for m, model in enumerate(models):
        left, right = axes[2 * m], axes[2 * m + 1]
        cells = data.filter(pl.col("model") == model).rows_by_key(["ratio", "setting"], named=True, unique=True, include_key=True)
        for setting in dict.fromkeys(setting for _, setting in cells):
            ax, column = (left, "oar") if setting in ("default", "correct") else (right, "mr")
            points = [_percent(cells, (ratio, setting), column) for ratio in ratios]
            ax.errorbar(range(len(ratios)), [p[0] for p in points], yerr=_error_bars(points), marker="o", capsize=2, label=setting)
        n = next(iter(cells.values()))["n_scored"]
        for ax, label, title in ((left, "OAR (%)", "no or default evidence"), (right, "MR (%)", "+ retrieved conflicts")):
            ax.set_xticks(range(len(ratios)), ratios)
            ax.set_xlabel("training text, default : conflicting")
            ax.set_ylabel(label)
            ax.set_ylim(0, 100)
            ax.legend(fontsize=7)
            ax.set_title(f"{model}: {title}\n(base model's scored subset, n={n})", fontsize=8)
    fig.tight_layout()
    return fig

"""ConflictBank tables and figures: MR/OAR per model and setting, the three
contrasts the paper draws (conflict alone vs with the correct evidence,
correct-first vs conflict-first, without vs with descriptions) and the
embedded-knowledge panel (paper Figures 6–7)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import CONFLICT_KINDS
from conflictlab.report.figures import panel_grid


def _value(cells: dict, model: str, setting: str, column: str) -> tuple[float, float, float]:
    """(point, low, high) of ``column`` from ``cells`` ({(model, setting): metric row}); NaN when absent."""
    row = cells.get((model, setting), {})
    return tuple(float("nan") if row.get(key) is None else row[key] for key in (column, f"{column}_low", f"{column}_high"))


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
    bars with their bootstrap interval; the scored subset size in the title."""
    fig, axes = panel_grid(3 * len(models), width=3.6, height=3.0, ncols=3)
    cells = {(r["model"], r["setting"]): r for r in metrics.to_pylist()}
    for m, model in enumerate(models):
        n = next((row["n_scored"] for (name, _), row in cells.items() if name == model), 0)
        for c, contrast in enumerate(CONTRAST_LABELS):
            ax = axes[3 * m + c]
            for side, offset in ((0, -0.2), (1, 0.2)):
                xs, ys, errs = [], [], []
                for k, kind in enumerate(CONFLICT_KINDS):
                    pair = next((p for p in contrasts(kind) if p[0] == contrast), None)
                    if pair is None:
                        continue
                    point, low, high = _value(cells, model, pair[1 + side], "mr")
                    xs.append(k + offset)
                    ys.append(point)
                    errs.append([point - low, high - point])
                err = np.array(errs, dtype=float).T if errs else None
                ax.bar(xs, ys, width=0.4, yerr=err, capsize=2, label=CONTRAST_LABELS[contrast][side])
            ax.axhline(50.0, color="grey", lw=0.8, ls="--")
            ax.set_xticks(range(len(CONFLICT_KINDS)), CONFLICT_KINDS, fontsize=8)
            ax.set_ylim(0, 100)
            ax.set_ylabel("MR (%)")
            ax.set_title(f"{model} (n={n})\n{contrast}", fontsize=8)
            ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def embedded_rows(metrics_by_ratio: dict[str, pa.Table], settings: Sequence[str]) -> pa.Table:
    """One row per (model, ratio, setting): OAR, CAR and MR over every record
    (the embedded experiment scores all records, as the paper's Figure 6)."""
    rows = []
    for ratio, metrics in metrics_by_ratio.items():
        for row in metrics.to_pylist():
            if row["setting"] in settings:
                rows.append(
                    {"model": row["model"], "ratio": ratio, "setting": row["setting"], "n_records": row["n_records"], "oar": row["oar"], "car": row["car"], "mr": row["mr"]}
                )
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [("model", pa.string()), ("ratio", pa.string()), ("setting", pa.string()), ("n_records", pa.int64()), ("oar", pa.float64()), ("car", pa.float64()), ("mr", pa.float64())]
        ),
    )


def embedded_figure(rows: pa.Table):
    """OAR per ratio for each setting without conflicting evidence (left) and
    MR per ratio for each setting with it (right); one line per setting."""
    fig, (left, right) = panel_grid(2, width=4.0, height=3.0, ncols=2, sharey=False)
    data = rows.to_pylist()
    ratios = list(dict.fromkeys(r["ratio"] for r in data))
    for setting in dict.fromkeys(r["setting"] for r in data):
        ax, column = (left, "oar") if setting in ("default", "correct") else (right, "mr")
        values = [next((r[column] for r in data if r["ratio"] == ratio and r["setting"] == setting), np.nan) for ratio in ratios]
        ax.plot(range(len(ratios)), values, marker="o", label=setting)
    for ax, label in ((left, "OAR (%)"), (right, "MR (%)")):
        ax.set_xticks(range(len(ratios)), ratios)
        ax.set_xlabel("training text, default : conflicting")
        ax.set_ylabel(label)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7)
    left.set_title("embedded knowledge (no or default evidence)", fontsize=8)
    right.set_title("embedded + retrieved conflicts", fontsize=8)
    fig.tight_layout()
    return fig

"""ConflictBank tables and figures: MR/OAR per model and setting (table and
figure of the three contrasts the paper draws: conflict alone vs with the
correct evidence, correct-first vs conflict-first, without vs with
descriptions), MR against model size, and the embedded-knowledge table,
panel and the paper's Figures 6–8 one by one.
Every table shows n per row: n_records, n_scored and MR's own n_mr.

The metric tables are small (a row per model and setting, or per scoring,
ratio, model and setting); cells are looked up by key in them."""

from __future__ import annotations

import json
import math
import os
import struct
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from conflictlab.conflictbank.dataset import CONFLICT_KINDS
from conflictlab.conflictbank.metrics import RATES, SCORED_SUBSET
from conflictlab.report.figures import panel_grid
from conflictlab.report.tables import write_markdown_and_csv
from conflictlab.stats import MIN_N_MEAN


def _percent(cells: dict, cell: tuple, column: str) -> tuple[float, float, float]:
    """(point, low, high) of ``column`` in percent from ``cells[cell]`` (a metric row); NaN when absent."""
    row = cells.get(cell, {})
    return tuple(
        math.nan if row.get(name) is None else 100.0 * row[name] for name in (column, f"{column}_low", f"{column}_high")
    )


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
                ax.bar(
                    xs,
                    [p[0] for p in points],
                    width=0.4,
                    yerr=_error_bars(points) if points else None,
                    capsize=2,
                    label=CONTRAST_LABELS[contrast][side],
                )
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
    "Rates in % of the n_scored records with Clopper-Pearson 95% intervals; MR = OAR/(OAR+CAR) in % of the n_mr scored "
    "answers that are correct or replaced, its Clopper-Pearson interval over n_mr. No interval at n < 2.",
    "MR is empty where n_mr = 0 (no scored answer is correct or replaced; the authors' evaluate.py reports 0); "
    "'neither' = 1 - OAR - CAR (the uncertain option or the other distractor).",
]
_ENTROPY_NOTE = (
    f"Mean entropy (bits) of the A-D probabilities with a Student-t 95% interval over the scored records "
    f"(none below n = {MIN_N_MEAN} or without spread)."
)


def write_metric_table(metrics: pa.Table, md_path, csv_path) -> None:
    """The per model and setting table (``metrics``: ``METRIC_SCHEMA``)."""
    write_markdown_and_csv(
        metrics,
        md_path,
        csv_path,
        caption="ConflictBank per model and setting, on the scored subset (records answered correctly without evidence "
        "and with the correct evidence; n_scored of n_records): OAR, CAR, uncertain and neither rates, MR and mean "
        "entropy of the A-D probabilities. Scorer: each model's own read-out of options A-D (next-token logits of a "
        "local model, log-probs or a generated letter of a hosted one; column read_out of the predictions). "
        "'_reversed': conflicting evidence first.",
        notes=[*_NOTES, _ENTROPY_NOTE],
        **_DISPLAY,
    )


def write_embedded_table(rows: pa.Table, md_path, csv_path) -> None:
    """The embedded-knowledge table (``rows``: ``metrics.EMBEDDED_SCHEMA``)."""
    write_markdown_and_csv(
        rows,
        md_path,
        csv_path,
        caption="Embedded knowledge: OAR, CAR, neither rate and MR after continued pre-training on default : "
        "conflicting "
        "evidence text at each ratio ('base': the model before training). Every ratio trains for the same optimiser "
        "steps on packed sequences of the same length, so on the same number of tokens (and a larger conflicting share "
        "means fewer passes over each default text); the conflicting texts of a smaller share are a subset of a larger "
        "one's. Headline: scored_on = 'scored subset', the base model's scored "
        "subset at every ratio (as the authors' evaluate.py selects it); companion: 'all records'.",
        columns=[
            "model",
            "ratio",
            "scored_on",
            "setting",
            "n_records",
            "n_scored",
            "oar",
            "car",
            "neither",
            "n_mr",
            "mr",
        ],
        notes=_NOTES,
        **_DISPLAY,
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
        cells = data.filter(pl.col("model") == model).rows_by_key(
            ["ratio", "setting"], named=True, unique=True, include_key=True
        )
        for setting in dict.fromkeys(setting for _, setting in cells):
            ax, column = (left, "oar") if setting in ("default", "correct") else (right, "mr")
            points = [_percent(cells, (ratio, setting), column) for ratio in ratios]
            ax.errorbar(
                range(len(ratios)),
                [p[0] for p in points],
                yerr=_error_bars(points),
                marker="o",
                capsize=2,
                label=setting,
            )
        n = next(iter(cells.values()))["n_scored"]
        for ax, label, title in (
            (left, "OAR (%)", "no or default evidence"),
            (right, "MR (%)", "+ retrieved conflicts"),
        ):
            ax.set_xticks(range(len(ratios)), ratios)
            ax.set_xlabel("training text, default : conflicting")
            ax.set_ylabel(label)
            ax.set_ylim(0, 100)
            ax.legend(fontsize=7)
            ax.set_title(f"{model}: {title}\n(base model's scored subset, n={n})", fontsize=8)
    fig.tight_layout()
    return fig


# The paper's embedded-knowledge figures (§3.3–3.5), drawn from the headline
# rows of the embedded table: key -> (title, column, panel label -> the
# settings that panel compares, one line each, over the training ratios).
EMBEDDED_FIGURES = {
    "fig6": (
        "Figure 6 (§3.3): OAR without evidence and with the default evidence",
        "oar",
        {"no or default evidence": ("default", "correct")},
    ),
    "fig7": (
        "Figure 7 (§3.4): MR with default and conflicting evidence, conflict last vs first",
        "mr",
        {kind: (f"correct_{kind}", f"correct_{kind}_reversed") for kind in CONFLICT_KINDS},
    ),
    "fig8": (
        "Figure 8 (§3.5): MR without vs with a description",
        "mr",
        {
            kind: (kind, f"{kind}_description", f"correct_{kind}", f"correct_{kind}_description")
            for kind in ("temporal", "semantic")
        },
    ),
}


def embedded_settings_figure(rows: pa.Table, figure: str):
    """One of :data:`EMBEDDED_FIGURES`: one panel per (model, panel label),
    one line per setting over the training ratios (``base``: before
    training) with Wilson intervals, on the base model's scored subset
    (n_scored in the title; MR's own n_mr beside each point). A setting the
    embedded read-out did not run (``conflictbank.embedded.settings``) is
    named in its panel instead. ``rows``: ``metrics.EMBEDDED_SCHEMA``."""
    title, column, groups = EMBEDDED_FIGURES[figure]
    data = pl.from_arrow(rows).filter(pl.col("scored_on") == SCORED_SUBSET)
    models = data["model"].unique(maintain_order=True).to_list()
    ratios = data["ratio"].unique(maintain_order=True).to_list()
    fig, axes = panel_grid(max(1, len(models) * len(groups)), width=3.8, height=3.0, ncols=len(groups), sharey=False)
    for m, model in enumerate(models):
        cells = data.filter(pl.col("model") == model).rows_by_key(
            ["ratio", "setting"], named=True, unique=True, include_key=True
        )
        present = {setting for _, setting in cells}
        n = next(iter(cells.values()))["n_scored"]
        for g, (label, settings) in enumerate(groups.items()):
            ax = axes[m * len(groups) + g]
            for setting in (s for s in settings if s in present):
                points = [_percent(cells, (ratio, setting), column) for ratio in ratios]
                ax.errorbar(
                    range(len(ratios)),
                    [p[0] for p in points],
                    yerr=_error_bars(points),
                    marker="o",
                    capsize=2,
                    label=setting,
                )
                if column == "mr":
                    for x, ratio in enumerate(ratios):
                        ax.annotate(
                            str(cells.get((ratio, setting), {}).get("n_mr", 0)), (x, 1.0), fontsize=5, ha="center"
                        )
            missing = [s for s in settings if s not in present]
            if missing:
                ax.text(
                    0.02,
                    0.5,
                    textwrap.fill("not read (conflictbank.embedded.settings): " + ", ".join(missing), 40),
                    transform=ax.transAxes,
                    fontsize=6,
                )
            ax.set_xticks(range(len(ratios)), ratios)
            ax.set_xlabel("training text, default : conflicting")
            ax.set_ylabel(f"{column.upper()} (%)" + ("; n_mr at the foot" if column == "mr" else ""))
            ax.set_ylim(0, 100)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6)
            ax.set_title(f"{model}: {label} (n={n})", fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def model_size(model_dir: str | os.PathLike) -> tuple[int, str]:
    """(parameters, family) of a prepared model folder.

    Parameters: the elements of every tensor in the weight files its
    manifest lists, read from their safetensors headers (tied weights are
    stored once, so counted once). Family: ``model_type`` and vocabulary
    size from config.json (the text config of a multimodal one), since a
    model type alone joins families the paper keeps apart (Llama 2 and
    Llama 3 are both "llama", with 32,000 and 128,256 tokens).
    """
    folder = Path(model_dir)
    manifest = json.loads((folder / "conflictlab_model.json").read_text())
    parameters = 0
    for name in manifest["weights_sha256"]:
        with open(folder / name, "rb") as f:
            header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        parameters += sum(math.prod(t["shape"]) for key, t in header.items() if key != "__metadata__")
    config = json.loads((folder / "config.json").read_text())
    text = config.get("text_config", config)
    return parameters, f"{text.get('model_type', config.get('model_type'))}, vocab {text.get('vocab_size')}"


def scale_figure(metrics: pa.Table, sizes: Mapping[str, tuple[int, str]]):
    """MR against model size (ConflictBank §3.2: within LLaMA2, MR falls as
    size grows): one panel per conflict kind and evidence (the conflicting
    evidence alone, then with the correct evidence), one line per family
    through its models in size order, Wilson intervals, n_mr beside each
    point. ``metrics``: ``metrics.METRIC_SCHEMA``; ``sizes``: model ->
    (parameters, family), from :func:`model_size`. Models without a size
    (hosted) are named in the title."""
    table = pl.from_arrow(metrics)
    cells = table.rows_by_key(["model", "setting"], named=True, unique=True, include_key=True)
    models = [m for m in table["model"].unique(maintain_order=True).to_list() if m in sizes]
    unsized = [m for m in table["model"].unique(maintain_order=True).to_list() if m not in sizes]
    families: dict[str, list[str]] = {}
    for model in sorted(models, key=lambda m: sizes[m][0]):
        families.setdefault(sizes[model][1], []).append(model)
    ticks = sorted({sizes[model][0] for model in models})
    panels = [
        (kind, setting)
        for evidence in ("{}", "correct_{}")
        for kind in CONFLICT_KINDS
        for setting in [evidence.format(kind)]
    ]
    fig, axes = panel_grid(len(panels), width=3.6, height=3.0, ncols=len(CONFLICT_KINDS))
    for ax, (kind, setting) in zip(axes, panels):
        for family, members in families.items():
            points = [_percent(cells, (model, setting), "mr") for model in members]
            x = [sizes[model][0] for model in members]
            ax.errorbar(
                x,
                [p[0] for p in points],
                yerr=_error_bars(points),
                marker="o",
                capsize=2,
                label=f"{family} ({len(members)})",
            )
            for model, xi in zip(members, x):
                ax.annotate(
                    f"{model}\nn_mr={cells.get((model, setting), {}).get('n_mr', 0)}",
                    (xi, 2.0),
                    fontsize=5,
                    ha="center",
                    rotation=90,
                    va="bottom",
                )
        ax.set_xscale("log")
        if ticks:
            ax.set_xticks(ticks, [f"{t / 1e9:.1f}B" if t >= 1e9 else f"{t / 1e6:.0f}M" for t in ticks], fontsize=7)
            ax.minorticks_off()
            ax.set_xlim(ticks[0] / 1.6, ticks[-1] * 1.6)
        ax.set_ylim(0, 100)
        ax.axhline(50.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("parameters (log scale)")
        ax.set_ylabel("MR (%)")
        ax.set_title(
            f"{kind}: {'with correct evidence' if setting.startswith('correct_') else 'conflict evidence only'}",
            fontsize=8,
        )
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, title="family (models)", title_fontsize=6)
    note = f"; no size (hosted): {', '.join(unsized)}" if unsized else ""
    fig.suptitle(f"MR against model size, {len(models)} models in {len(families)} families{note}", fontsize=9)
    fig.tight_layout()
    return fig

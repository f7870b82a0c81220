"""ContextConflict's figures: position shares (Balance; Figures 23–29 over
generators), probes (Figure 2; per subset, Figures 20–21), projections
(Figure 3), spectral energy (Figure 4) and the steering sweep (Figure 31)."""

from __future__ import annotations

import textwrap

import numpy as np
import polars as pl
import pyarrow as pa

from conflictlab.contextconflict.steering import METHOD_LABELS, SWEEP_METHODS
from conflictlab.report.figures import panel_grid, plt


def _frame(table: pa.Table, **empty: pl.DataType) -> pl.DataFrame:
    """``table`` as a polars frame; a table without columns (rows of an empty
    list) as an empty frame with the columns ``empty`` names."""
    return pl.from_arrow(table) if table.num_columns else pl.DataFrame(schema=empty)


def _types(frame: pl.DataFrame) -> list[str]:
    """The conflict types of ``frame``, sorted."""
    return sorted(frame["conflict_type"].unique().to_list())


def _curve(frame: pl.DataFrame, along: str, **where) -> pl.DataFrame:
    """``frame``'s rows whose columns equal ``where``'s values, sorted by
    ``along`` (ties in table order): one plotted line or bar group."""
    return frame.filter(**where).sort(along, maintain_order=True)


def _most_common_n(mine: pl.DataFrame) -> int:
    """The number of pieces with the most samples in a panel (ties: the
    smallest), from its rows' ``n_evidence`` and ``n_samples`` (the last row
    of an n counts)."""
    counts = mine.group_by("n_evidence", maintain_order=True).agg(pl.col("n_samples").last())
    return counts.sort(["n_samples", "n_evidence"], descending=[True, False])["n_evidence"][0]


def position_share_bars(positions: pa.Table, *, title: str):
    """Mean share by input position (bars, 95% CI), one panel per conflict
    type, one bar group per number of pieces n, with the 1/n chance line."""
    frame = _frame(positions, conflict_type=pl.String, model=pl.String)
    types = _types(frame)
    fig, axes = plt.subplots(1, max(len(types), 1), figsize=(4.2 * max(len(types), 1), 3.4), squeeze=False)
    for ax, conflict_type in zip(axes[0], types):
        members = frame.filter(conflict_type=conflict_type)
        ns = sorted(members["n_evidence"].unique().to_list())
        width = 0.8 / len(ns)
        for k, n in enumerate(ns):
            group = _curve(members, "position", n_evidence=n)
            x = group["position"].to_numpy() + (k - (len(ns) - 1) / 2) * width
            mean = group["mean_share"].to_numpy()
            err = np.stack([mean - group["ci_low"].to_numpy(), group["ci_high"].to_numpy() - mean])
            bars = ax.bar(x, mean, width=width, yerr=err, capsize=2, label=f"n={n} ({group['n_samples'][0]} samples)")
            ax.hlines(
                1.0 / n,
                x.min() - width / 2,
                x.max() + width / 2,
                colors=bars.patches[0].get_facecolor(),
                linestyles="dashed",
                linewidth=1,
            )
        ax.set_title(conflict_type)
        ax.set_xlabel("evidence position in the prompt")
        ax.set_ylabel("mean Shapley share")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, title="dashed: chance 1/n", title_fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def position_share_pies(positions: pa.Table, *, title: str, name_rows: bool = False):
    """One pie per generator and conflict type of the mean share by position,
    for that cell's most common number of pieces (pies need one n): one row
    per generator in ``positions`` (the paper's Figures 23–29 are one row
    each, for seven generators), the samples behind each pie in its title,
    and the generator's name there too with ``name_rows`` or more than one."""
    frame = _frame(positions, conflict_type=pl.String, model=pl.String)
    models = frame["model"].unique(maintain_order=True).to_list()
    types = _types(frame)
    fig, axes = plt.subplots(
        max(len(models), 1),
        max(len(types), 1),
        figsize=(3.6 * max(len(types), 1), 3.6 * max(len(models), 1)),
        squeeze=False,
    )
    for axes_row, model in zip(axes, models):
        for ax, conflict_type in zip(axes_row, types):
            members = frame.filter(model=model, conflict_type=conflict_type)
            if members.is_empty():
                ax.set_visible(False)
                continue
            n = _most_common_n(members)
            group = _curve(members, "position", n_evidence=n)
            shares = group["mean_share"].to_numpy()
            ax.pie(
                shares / shares.sum(),
                labels=[f"Evidence {p}" for p in group["position"]],
                autopct="%1.1f%%",
                textprops={"fontsize": 7},
            )
            heading = f"{model}\n" if name_rows or len(models) > 1 else ""
            ax.set_title(
                f"{heading}{conflict_type} (n={n}, {group['n_samples'][0]} samples; chance {100 / n:.1f}% each)",
                fontsize=8,
            )
    fig.suptitle(title, fontsize=10)
    return fig


def probe_curves(probes: pa.Table, *, title: str):
    """Figure 2: probe AUC by layer per conflict type, with the
    difference-of-means direction (dashed), the length-only baseline
    (dotted) and chance (0.5)."""
    frame = _frame(probes, conflict_type=pl.String)
    types = _types(frame)
    fig, axes = panel_grid(len(types))
    for ax, conflict_type in zip(axes, types):
        mine = _curve(frame, "layer", conflict_type=conflict_type)
        layers = mine["layer"].to_list()
        auc = mine["probe_auc"].to_numpy()
        sd = mine["probe_auc_std"].to_numpy()
        ax.plot(layers, auc, label="logistic probe")
        ax.fill_between(layers, auc - sd, auc + sd, alpha=0.2)
        ax.plot(layers, mine["mean_diff_auc"].to_list(), linestyle="dashed", label="difference of means")
        ax.axhline(mine["length_only_auc"][0], color="black", linestyle="dotted", label="length only")
        ax.axhline(0.5, color="grey", linewidth=0.8, label="chance")
        ax.set_title(conflict_type, fontsize=9)
        ax.set_xlabel("layer")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("AUC (grouped CV, mean ± sd)")
    axes[0].legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# The paper's explicit vs implicit comparisons (Appendix D.2): type -> (figure,
# explicit subset, implicit subset). Only these are probed per subset: the 11
# subsets of the demo's types with more than one took 65 s, these 4 took 18 s
# (AMD EPYC Zen 2, other jobs running: load 7 on 2 cores).
SUBSET_FIGURES = {
    "inferential": ("Figure 20", "entailment_bank", "folio"),
    "perspective": ("Figure 21", "perspectrum", "allsides"),
}


def subset_probe_curves(rows: pa.Table, *, skipped: dict[str, dict[str, int]], title: str):
    """Figures 20–21: probe AUC by layer for each subset of a type (in the
    workflow: the subsets of :data:`SUBSET_FIGURES`) fit on that subset's
    pairs alone, explicit (solid) vs implicit (dashed), n pairs in the
    legend, ± 1 s.d. over the CV folds as a band where there are at least 2
    folds (a spread over folds, not a confidence interval).

    ``rows``: :func:`~conflictlab.contextconflict.mechanistic.subset_probe_analysis`
    rows with ``conflict_type``; ``skipped``: type -> subset -> pairs, for
    subsets without a probe (fewer than 2 pairs), named under their panel.
    One panel per type, the paper's two first.
    """
    frame = _frame(rows, conflict_type=pl.String, subset=pl.String)
    types = sorted(set(frame["conflict_type"].to_list()) | set(skipped), key=lambda t: (t not in SUBSET_FIGURES, t))
    fig, axes = panel_grid(max(len(types), 1))
    for ax, conflict_type in zip(axes, types):
        mine = frame.filter(conflict_type=conflict_type)
        for subset in sorted(mine["subset"].unique().to_list()):
            curve = _curve(mine, "layer", subset=subset)
            head = curve.row(0, named=True)
            layers = curve["layer"].to_list()
            auc = curve["probe_auc"].to_numpy()
            kind = "implicit" if head["implicit"] else "explicit"
            line = ax.plot(
                layers,
                auc,
                linestyle="dashed" if head["implicit"] else "solid",
                label=f"{subset} ({kind}, n={head['n_pairs']} pairs, {head['n_folds']} folds)",
            )[0]
            if head["n_folds"] >= 2:
                sd = curve["probe_auc_std"].to_numpy()
                ax.fill_between(layers, auc - sd, auc + sd, alpha=0.15, color=line.get_color())
        left_out = skipped.get(conflict_type, {})
        if left_out:
            note = "no probe (< 2 pairs): " + ", ".join(f"{s} (n={n})" for s, n in sorted(left_out.items()))
            ax.text(0.01, 0.02, textwrap.fill(note, 50), transform=ax.transAxes, fontsize=6)
        ax.axhline(0.5, color="grey", linewidth=0.8)
        figure = SUBSET_FIGURES.get(conflict_type, ("",))[0]
        ax.set_title(f"{conflict_type}" + (f" ({figure})" if figure else ""), fontsize=9)
        ax.set_xlabel("layer")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("probe AUC (grouped CV; band ± 1 sd over folds)", fontsize=7)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def spectral_curves(spectral: pa.Table, *, title: str):
    """Figure 4: ΔER = ER(conflict) − ER(consistent) by layer, one line per
    conflict type (n pairs in the legend), its jackknife 95% interval where
    there is one, zero line; types whose ΔER is 0 by construction are left
    out, and a note names them and the types without an interval."""
    frame = _frame(spectral, conflict_type=pl.String, trivial=pl.Boolean)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    trivial = _types(frame.filter(pl.col("trivial")))
    notes = [f"not shown, k >= n − 1 (ER ≡ 1): {', '.join(trivial)}"] if trivial else []
    no_interval: dict[str, list[str]] = {}
    for conflict_type in sorted(set(_types(frame)) - set(trivial)):
        mine = _curve(frame, "layer", conflict_type=conflict_type)
        layers = mine["layer"].to_list()
        line = ax.plot(layers, mine["delta_er"].to_list(), label=f"{conflict_type} (n={mine['n_pairs'][0]})")[0]
        # NaN bounds leave gaps, so a layer without an interval shows none
        ax.fill_between(layers, mine["ci_low"].to_list(), mine["ci_high"].to_list(), alpha=0.15, color=line.get_color())
        if all(mine["ci_reason"]):
            no_interval.setdefault(mine["ci_reason"][0].split(":")[0], []).append(conflict_type)
    notes += [
        textwrap.fill(f"no interval ({why}): {', '.join(types)}", 70) for why, types in sorted(no_interval.items())
    ]
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("layer")
    ax.set_ylabel(f"ΔER (top-{frame['k'][0]} energy ratio)" if frame.height else "ΔER")
    if notes:
        ax.text(0.01, 0.02, "\n".join(notes), transform=ax.transAxes, fontsize=7)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def projection_curves(projection: pa.Table, *, title: str):
    """Figure 3: mean directional bias b_i by evidence position and layer,
    per conflict type, for each type's most common number of pieces K."""
    frame = _frame(projection, conflict_type=pl.String)
    types = _types(frame)
    fig, axes = panel_grid(len(types))
    for ax, conflict_type in zip(axes, types):
        mine = frame.filter(conflict_type=conflict_type)
        k = _most_common_n(mine)
        for position in range(1, k + 1):
            line = _curve(mine, "layer", n_evidence=k, position=position)
            ax.plot(line["layer"].to_list(), line["mean_b"].to_list(), label=f"evidence {position}")
        ax.axhline(0.0, color="grey", linewidth=0.8)
        note = "; K=2: b1 = -b2 by construction" if k == 2 else ""
        samples = mine.filter(n_evidence=k)["n_samples"][-1]
        ax.set_title(f"{conflict_type} (K={k}, {samples} samples{note})", fontsize=7)
        ax.set_xlabel("layer")
        ax.legend(fontsize=6)
        ax.set_ylabel("mean b_i (cosine to c − μ)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def alpha_sweep_curves(results: pa.Table, *, model: str, columns: list[tuple[str, str]], title: str):
    """Figure 31: one panel per (metric, type); value against alpha per
    schedule with 95% CI bars, the unsteered base as a dashed line and band."""
    rows = pl.from_arrow(results).filter(pl.col("model") == model, pl.col("value").is_not_null())
    fig, axes = panel_grid(len(columns), sharey=False)
    labels = {method: METHOD_LABELS[method] for method in SWEEP_METHODS}
    for ax, (metric, conflict_type) in zip(axes, columns):
        mine = rows.filter(metric=metric, conflict_type=conflict_type)
        for method, label in labels.items():
            curve = _curve(mine, "alpha", method=method)
            if curve.is_empty():
                continue
            y = curve["value"].to_numpy()
            err = np.stack([y - curve["ci_low"].to_numpy(), curve["ci_high"].to_numpy() - y])
            ax.errorbar(curve["alpha"].to_numpy(), y, yerr=err, marker="o", capsize=3, label=label)
        for value, low, high in (
            mine.filter(method="base").select("value", "ci_low", "ci_high").iter_rows()
        ):  # one per base row (one)
            ax.axhline(value, color="grey", linestyle="dashed", linewidth=1, label="base (no steering)")
            ax.axhspan(low, high, color="grey", alpha=0.1)
        better = "higher" if metric == "accuracy" else "lower"
        ax.set_ylim(-0.03, 1.03)  # both metrics live in [0, 1]
        ax.set_title(conflict_type)
        ax.set_xlabel("steering strength α")
        ax.set_ylabel(f"{metric} ({better} is better)")
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig

"""ContextConflict's figures: position shares (Balance; Figures 23–29 over
generators), probes (Figure 2; per subset, Figures 20–21), projections
(Figure 3), spectral energy (Figure 4) and the steering sweep (Figure 31)."""

from __future__ import annotations

import textwrap

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.steering import METHOD_LABELS, SWEEP_METHODS
from conflictlab.report.figures import panel_grid, plt


def position_share_bars(positions: pa.Table, *, title: str):
    """Mean share by input position (bars, 95% CI), one panel per conflict
    type, one bar group per number of pieces n, with the 1/n chance line."""
    rows = positions.to_pylist()
    types = sorted({r["conflict_type"] for r in rows})
    fig, axes = plt.subplots(1, max(len(types), 1), figsize=(4.2 * max(len(types), 1), 3.4), squeeze=False)
    for ax, conflict_type in zip(axes[0], types):
        members = [r for r in rows if r["conflict_type"] == conflict_type]
        ns = sorted({r["n_evidence"] for r in members})
        width = 0.8 / len(ns)
        for k, n in enumerate(ns):
            group = sorted((r for r in members if r["n_evidence"] == n), key=lambda r: r["position"])
            x = np.array([r["position"] for r in group]) + (k - (len(ns) - 1) / 2) * width
            mean = np.array([r["mean_share"] for r in group])
            err = np.array([[r["mean_share"] - r["ci_low"], r["ci_high"] - r["mean_share"]] for r in group]).T
            bars = ax.bar(x, mean, width=width, yerr=err, capsize=2, label=f"n={n} ({group[0]['n_samples']} samples)")
            ax.hlines(1.0 / n, x.min() - width / 2, x.max() + width / 2, colors=bars.patches[0].get_facecolor(), linestyles="dashed", linewidth=1)
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
    rows = positions.to_pylist()
    models = list(dict.fromkeys(r["model"] for r in rows))
    types = sorted({r["conflict_type"] for r in rows})
    fig, axes = plt.subplots(max(len(models), 1), max(len(types), 1), figsize=(3.6 * max(len(types), 1), 3.6 * max(len(models), 1)), squeeze=False)
    for axes_row, model in zip(axes, models):
        for ax, conflict_type in zip(axes_row, types):
            members = [r for r in rows if r["model"] == model and r["conflict_type"] == conflict_type]
            if not members:
                ax.set_visible(False)
                continue
            counts = {r["n_evidence"]: r["n_samples"] for r in members}
            n = max(counts, key=lambda m: (counts[m], -m))
            group = sorted((r for r in members if r["n_evidence"] == n), key=lambda r: r["position"])
            shares = np.array([r["mean_share"] for r in group])
            ax.pie(shares / shares.sum(), labels=[f"Evidence {r['position']}" for r in group], autopct="%1.1f%%", textprops={"fontsize": 7})
            heading = f"{model}\n" if name_rows or len(models) > 1 else ""
            ax.set_title(f"{heading}{conflict_type} (n={n}, {group[0]['n_samples']} samples; chance {100 / n:.1f}% each)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def probe_curves(probes: pa.Table, *, title: str):
    """Figure 2: probe AUC by layer per conflict type, with the
    difference-of-means direction (dashed), the length-only baseline
    (dotted) and chance (0.5)."""
    rows = probes.to_pylist()
    types = sorted({r["conflict_type"] for r in rows})
    fig, axes = panel_grid(len(types))
    for ax, conflict_type in zip(axes, types):
        mine = sorted((r for r in rows if r["conflict_type"] == conflict_type), key=lambda r: r["layer"])
        layers = [r["layer"] for r in mine]
        auc = np.array([r["probe_auc"] for r in mine])
        sd = np.array([r["probe_auc_std"] for r in mine])
        ax.plot(layers, auc, label="logistic probe")
        ax.fill_between(layers, auc - sd, auc + sd, alpha=0.2)
        ax.plot(layers, [r["mean_diff_auc"] for r in mine], linestyle="dashed", label="difference of means")
        ax.axhline(mine[0]["length_only_auc"], color="black", linestyle="dotted", label="length only")
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
SUBSET_FIGURES = {"inferential": ("Figure 20", "entailment_bank", "folio"), "perspective": ("Figure 21", "perspectrum", "allsides")}


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
    data = rows.to_pylist()
    types = sorted({r["conflict_type"] for r in data} | set(skipped), key=lambda t: (t not in SUBSET_FIGURES, t))
    fig, axes = panel_grid(max(len(types), 1))
    for ax, conflict_type in zip(axes, types):
        mine = [r for r in data if r["conflict_type"] == conflict_type]
        for subset in sorted({r["subset"] for r in mine}):
            curve = sorted((r for r in mine if r["subset"] == subset), key=lambda r: r["layer"])
            head = curve[0]
            layers = [r["layer"] for r in curve]
            auc = np.array([r["probe_auc"] for r in curve])
            kind = "implicit" if head["implicit"] else "explicit"
            line = ax.plot(layers, auc, linestyle="dashed" if head["implicit"] else "solid",
                           label=f"{subset} ({kind}, n={head['n_pairs']} pairs, {head['n_folds']} folds)")[0]
            if head["n_folds"] >= 2:
                sd = np.array([r["probe_auc_std"] for r in curve])
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
    rows = spectral.to_pylist()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    trivial = sorted({r["conflict_type"] for r in rows if r["trivial"]})
    notes = [f"not shown, k >= n − 1 (ER ≡ 1): {', '.join(trivial)}"] if trivial else []
    no_interval: dict[str, list[str]] = {}
    for conflict_type in sorted({r["conflict_type"] for r in rows} - set(trivial)):
        mine = sorted((r for r in rows if r["conflict_type"] == conflict_type), key=lambda r: r["layer"])
        layers = [r["layer"] for r in mine]
        line = ax.plot(layers, [r["delta_er"] for r in mine], label=f"{conflict_type} (n={mine[0]['n_pairs']})")[0]
        # NaN bounds leave gaps, so a layer without an interval shows none
        ax.fill_between(layers, [r["ci_low"] for r in mine], [r["ci_high"] for r in mine], alpha=0.15, color=line.get_color())
        if all(r["ci_reason"] for r in mine):
            no_interval.setdefault(mine[0]["ci_reason"].split(":")[0], []).append(conflict_type)
    notes += [textwrap.fill(f"no interval ({why}): {', '.join(types)}", 70) for why, types in sorted(no_interval.items())]
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("layer")
    ax.set_ylabel(f"ΔER (top-{rows[0]['k']} energy ratio)" if rows else "ΔER")
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
    rows = projection.to_pylist()
    types = sorted({r["conflict_type"] for r in rows})
    fig, axes = panel_grid(len(types))
    for ax, conflict_type in zip(axes, types):
        mine = [r for r in rows if r["conflict_type"] == conflict_type]
        counts = {r["n_evidence"]: r["n_samples"] for r in mine}
        k = max(counts, key=lambda m: (counts[m], -m))
        for position in range(1, k + 1):
            line = sorted((r for r in mine if r["n_evidence"] == k and r["position"] == position), key=lambda r: r["layer"])
            ax.plot([r["layer"] for r in line], [r["mean_b"] for r in line], label=f"evidence {position}")
        ax.axhline(0.0, color="grey", linewidth=0.8)
        note = "; K=2: b1 = -b2 by construction" if k == 2 else ""
        ax.set_title(f"{conflict_type} (K={k}, {counts[k]} samples{note})", fontsize=7)
        ax.set_xlabel("layer")
        ax.legend(fontsize=6)
        ax.set_ylabel("mean b_i (cosine to c − μ)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def alpha_sweep_curves(results: pa.Table, *, model: str, columns: list[tuple[str, str]], title: str):
    """Figure 31: one panel per (metric, type); value against alpha per
    schedule with 95% CI bars, the unsteered base as a dashed line and band."""
    rows = [r for r in results.to_pylist() if r["model"] == model]
    fig, axes = panel_grid(len(columns), sharey=False)
    labels = {method: METHOD_LABELS[method] for method in SWEEP_METHODS}
    for ax, (metric, conflict_type) in zip(axes, columns):
        mine = [r for r in rows if r["metric"] == metric and r["conflict_type"] == conflict_type and r["value"] is not None]
        for method, label in labels.items():
            curve = sorted((r for r in mine if r["method"] == method), key=lambda r: r["alpha"])
            if not curve:
                continue
            x = np.array([r["alpha"] for r in curve])
            y = np.array([r["value"] for r in curve])
            err = np.array([[r["value"] - r["ci_low"], r["ci_high"] - r["value"]] for r in curve]).T
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
        for base in (r for r in mine if r["method"] == "base"):
            ax.axhline(base["value"], color="grey", linestyle="dashed", linewidth=1, label="base (no steering)")
            ax.axhspan(base["ci_low"], base["ci_high"], color="grey", alpha=0.1)
        better = "higher" if metric == "accuracy" else "lower"
        ax.set_ylim(-0.03, 1.03)  # both metrics live in [0, 1]
        ax.set_title(conflict_type)
        ax.set_xlabel("steering strength α")
        ax.set_ylabel(f"{metric} ({better} is better)")
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig

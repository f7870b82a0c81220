"""Arbitration aggregates (accuracy per cell, over seeds, sensitivity), Figure 4 A–H
and Figure A1 (example trajectories)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from conflictlab.arbitration.prompts import ORDERS
from conflictlab.arbitration.trajectories import THRESHOLD
from conflictlab.report.figures import plt
from conflictlab.stats import wilson_interval


def calibrated_correct(instances: pa.Table, predictions: pa.Table) -> dict[str, bool]:
    """Correctness after removing each model's answer-letter bias: "A" when
    the margin logit_A − logit_B exceeds that model's median margin over the
    given prompts. Not the paper's protocol (which takes the raw argmax):
    a diagnostic for small models that answer "A" to everything, showing
    whether the evidence still moves their preference."""
    gold = dict(zip(instances.column("instance_id").to_pylist(), instances.column("answer_letter").to_pylist()))
    rows = predictions.to_pylist()
    out = {}
    for model in {r["model"] for r in rows}:
        mine = [r for r in rows if r["model"] == model]
        threshold = float(np.median([r["logit_a"] - r["logit_b"] for r in mine]))
        for r in mine:
            margin = r["logit_a"] - r["logit_b"]
            letter = "A" if margin > threshold else "B" if margin < threshold else "tie"
            out[(model, r["instance_id"])] = letter == gold[r["instance_id"]]
    return out


def accuracy_by_cell(instances: pa.Table, predictions: pa.Table) -> list[dict]:
    """Accuracy (raw and letter-bias calibrated) per (model, setting, order,
    condition, aligned source, seed).

    Unimodal references have no order; they are listed under both orders so
    that each setting × order panel shows its own reference.
    """
    meta = {r["instance_id"]: r for r in instances.select(["instance_id", "setting", "condition", "order", "aligned_source", "seed"]).to_pylist()}
    calibrated = calibrated_correct(instances, predictions)
    cells: dict[tuple, list[tuple[bool, bool]]] = {}
    for p in predictions.to_pylist():
        m = meta[p["instance_id"]]
        orders = [m["order"]] if m["order"] else list(ORDERS)
        for order in orders:
            key = (p["model"], m["setting"], order, m["condition"], m["aligned_source"], m["seed"])
            cells.setdefault(key, []).append((p["correct"], calibrated[(p["model"], p["instance_id"])]))
    return [
        dict(
            zip(("model", "setting", "order", "condition", "aligned_source", "seed"), key),
            n=len(v),
            n_correct=sum(raw for raw, _ in v),
            accuracy=float(np.mean([raw for raw, _ in v])),
            calibrated=float(np.mean([cal for _, cal in v])),
        )
        for key, v in sorted(cells.items())
    ]


def mean_over_seeds(cells: list[dict]) -> pa.Table:
    """Mean and standard deviation of accuracy across seeds (the paper's
    figures), and the Wilson 95% interval of the accuracy over all ``n``
    instances of the seeds pooled (none at n < 2)."""
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["model"], c["setting"], c["order"], c["condition"], c["aligned_source"]), []).append(c)
    rows = []
    for key, members in sorted(groups.items()):
        acc = np.array([m["accuracy"] for m in members])
        cal = np.array([m["calibrated"] for m in members])
        n = sum(m["n"] for m in members)
        _, low, high = wilson_interval(sum(m["n_correct"] for m in members), n)
        rows.append(
            dict(
                zip(("model", "setting", "order", "condition", "aligned_source"), key),
                n_seeds=len(members),
                n_per_seed=members[0]["n"],
                n=n,
                accuracy=float(acc.mean()),
                ci_low=low,
                ci_high=high,
                std=float(acc.std(ddof=1)) if len(acc) > 1 else float("nan"),
                calibrated_accuracy=float(cal.mean()),
            )
        )
    return pa.Table.from_pylist(rows)


def sensitivity_table(instances: pa.Table, predictions: pa.Table) -> pa.Table:
    """Mean ± std of |accuracy(variant) − accuracy(baseline)| per model,
    factor and evidence condition (text only, numbers only, conflict),
    aggregated over the factor's values, seeds and orders.

    Instance ids are ``sens/<factor>=<value>/modality/s<seed>/...`` with the
    baseline under ``sens/baseline``.
    """
    meta = {r["instance_id"]: r for r in instances.select(["instance_id", "condition", "order", "aligned_source", "seed"]).to_pylist()}
    acc: dict[tuple, list[bool]] = {}
    for p in predictions.to_pylist():
        m = meta[p["instance_id"]]
        variant = p["instance_id"].split("/")[1]
        group = "conflict" if m["condition"] == "conflict" else f"{m['aligned_source']} only"
        key = (p["model"], variant, group, m["seed"], m["order"] or "-")
        acc.setdefault(key, []).append(p["correct"])
    means = {k: float(np.mean(v)) for k, v in acc.items()}
    rows = []
    models = sorted({k[0] for k in means})
    factors = sorted({k[1].split("=")[0] for k in means if k[1] != "baseline"})
    for model in models:
        for factor in factors:
            for group in ("text only", "numbers only", "conflict"):
                deltas = [
                    abs(v - means[(model, "baseline", group, seed, order)])
                    for (mo, variant, g, seed, order), v in means.items()
                    if mo == model and g == group and variant.split("=")[0] == factor and (model, "baseline", group, seed, order) in means
                ]
                rows.append(
                    {
                        "model": model,
                        "factor": factor,
                        "condition": group,
                        "n_deltas": len(deltas),
                        "mean_abs_delta": float(np.mean(deltas)) if deltas else float("nan"),
                        "std_abs_delta": float(np.std(deltas, ddof=1)) if len(deltas) > 1 else float("nan"),
                    }
                )
    return pa.Table.from_pylist(rows)


def arbitration_panels(summary: pa.Table, *, settings: list[str], orders: list[str]):
    """Figure 4 A–H: one panel per setting × evidence order; per model, bars
    for each aligned source, conflict solid and unimodal reference hatched,
    error bars = standard deviation over seeds, chance line at 0.5."""
    rows = summary.to_pylist()
    models = sorted({r["model"] for r in rows})
    fig, axes = plt.subplots(len(orders), len(settings), figsize=(3.6 * len(settings), 3.2 * len(orders)), squeeze=False)
    letters = iter("ABCDEFGHIJKLMNOP")
    for col, setting in enumerate(settings):
        for row_i, order in enumerate(orders):
            ax = axes[row_i][col]
            members = [r for r in rows if r["setting"] == setting and r["order"] == order]
            sources = sorted({r["aligned_source"] for r in members})
            bars = [(s, c) for s in sources for c in ("conflict", "unimodal")]
            width = 0.8 / max(len(bars), 1)
            for b, (source, condition) in enumerate(bars):
                xs, ys, es = [], [], []
                for m, model in enumerate(models):
                    cell = next((r for r in members if r["model"] == model and r["aligned_source"] == source and r["condition"] == condition), None)
                    if cell:
                        xs.append(m + (b - (len(bars) - 1) / 2) * width)
                        ys.append(cell["accuracy"])
                        es.append(0.0 if cell["std"] != cell["std"] else cell["std"])
                ax.bar(
                    xs, ys, width=width, yerr=es, capsize=2, color=f"C{sources.index(source)}",
                    alpha=1.0 if condition == "conflict" else 0.35, hatch=None if condition == "conflict" else "//",
                    label=f"{source} aligned, {condition}",
                )
            ax.axhline(0.5, color="grey", linestyle="dashed", linewidth=1)
            ax.set_xticks(range(len(models)))
            ax.set_xticklabels(models, fontsize=7, rotation=10)
            ax.set_ylim(0, 1)
            ax.set_ylabel("accuracy")
            ax.set_title(f"({next(letters)}) {setting}, {order.replace('_', ' ')}", fontsize=9)
            ax.legend(fontsize=6)
    fig.suptitle("Evidence arbitration: conflict (solid) vs unimodal reference (hatched); dashed line: chance", fontsize=10)
    fig.tight_layout()
    return fig


def trajectory_examples(instances: pa.Table, *, horizon: int, per_label: int = 2, setting: str = "modality"):
    """Figure A1: example latent trajectories, ``per_label`` of each label
    (the first instances of ``setting`` in the table's order: by seed, then
    instance), one panel each: the truth series x_1..x_T that the aligned
    source shows (solid), its target y at T + ``horizon`` (marker), the
    opposite-label series the conflicting source shows (dashed, where the
    setting has one) and the 0.5 threshold. ``instances``:
    ``INSTANCE_SCHEMA`` rows; each instance counts once (its unimodal row).
    The suptitle gives how many instances the examples were drawn from.
    """
    rows = [r for r in instances.to_pylist() if r["setting"] == setting and r["condition"] == "unimodal"]
    chosen = [r for label in ("high", "low") for r in [r for r in rows if r["label"] == label][:per_label]]
    fig, axes = plt.subplots(1, max(len(chosen), 1), figsize=(3.4 * max(len(chosen), 1), 2.8), squeeze=False, sharey=True)
    for ax, row in zip(axes[0], chosen):
        latent = json.loads(row["latent"])
        truth = latent["truth"]
        steps = np.arange(1, len(truth["values"]) + 1)
        line = ax.plot(steps, truth["values"], marker=".", label=f"truth: x_1..x_T ({truth['label']})")[0]
        ax.plot([steps[-1] + horizon], [truth["target"]], marker="*", markersize=10, linestyle="none", color=line.get_color(), label=f"target, T+{horizon}")
        if "other" in latent:
            other = latent["other"]
            ax.plot(steps, other["values"], linestyle="dashed", color="grey", label=f"conflicting series ({other['label']})")
        ax.axhline(THRESHOLD, color="black", linewidth=0.8, linestyle="dotted")
        ax.set_ylim(0, 1)
        ax.set_xlabel("time step")
        ax.set_title(f"{row['label']}: margin {truth['margin']:.2f}, slope {truth['slope']:+.3f}", fontsize=8)
    axes[0][0].set_ylabel("risk")
    if chosen:
        axes[0][0].legend(fontsize=6, loc="best")
    fig.suptitle(f"Generated trajectories ({setting} setting): {len(chosen)} of {len(rows)} instances; dotted: threshold 0.5", fontsize=9)
    fig.tight_layout()
    return fig

"""Arbitration aggregates (accuracy per cell, over seeds, sensitivity), Figure 4 A–H
and Figure A1 (example trajectories)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.arbitration.methods import TEXT_VS_NUMBERS
from conflictlab.arbitration.prompts import ORDERS, instance_unit
from conflictlab.arbitration.trajectories import THRESHOLD
from conflictlab.report.figures import plt
from conflictlab.stats import paired_difference, proportion_interval


def calibrated_correct(instances: pa.Table, predictions: pa.Table) -> pl.DataFrame:
    """Correctness after removing each model's answer-letter bias: "A" when
    the margin logit_A − logit_B exceeds that model's median margin over the
    given prompts. Not the paper's protocol (which takes the raw argmax):
    a diagnostic for small models that answer "A" to everything, showing
    whether the evidence still moves their preference.

    Returns ``predictions``' rows in order as (model, instance_id, correct,
    calibrated)."""
    frame = pl.from_arrow(predictions.select(["model", "instance_id", "logit_a", "logit_b", "correct"])).with_columns(
        (pl.col("logit_a") - pl.col("logit_b")).alias("margin")
    )
    # numpy's median per model (a handful): the threshold exactly as before
    thresholds = pl.DataFrame(
        [
            (model, float(np.median(frame.filter(pl.col("model") == model)["margin"].to_numpy())))
            for model in frame["model"].unique().to_list()
        ],
        schema={"model": pl.String, "threshold": pl.Float64},
        orient="row",
    )
    gold = pl.from_arrow(instances.select(["instance_id", "answer_letter"]))
    margin, threshold = pl.col("margin"), pl.col("threshold")
    letter = (
        pl.when(margin > threshold)
        .then(pl.lit("A"))
        .when(margin < threshold)
        .then(pl.lit("B"))
        .otherwise(pl.lit("tie"))
    )
    joined = frame.join(thresholds, on="model", how="left").join(
        gold, on="instance_id", how="left", maintain_order="left"
    )
    if joined["answer_letter"].null_count():
        raise KeyError(joined.filter(pl.col("answer_letter").is_null())["instance_id"][0])
    return joined.select("model", "instance_id", "correct", (letter == pl.col("answer_letter")).alias("calibrated"))


def _with_meta(instances: pa.Table, predictions: pa.Table, columns: list[str]) -> pl.DataFrame:
    """:func:`calibrated_correct`'s rows with ``columns`` of each row's instance."""
    meta = pl.from_arrow(instances.select(["instance_id", *columns]))
    return calibrated_correct(instances, predictions).join(meta, on="instance_id", how="left", maintain_order="left")


def accuracy_by_cell(instances: pa.Table, predictions: pa.Table) -> list[dict]:
    """Accuracy (raw and letter-bias calibrated) per (model, setting, order,
    condition, aligned source, seed).

    Unimodal references have no order; they are listed under both orders so
    that each setting × order panel shows its own reference.
    """
    keys = ["model", "setting", "order", "condition", "aligned_source", "seed"]
    rows = _with_meta(instances, predictions, keys[1:])
    orders = pl.when(pl.col("order").is_null()).then(pl.lit(list(ORDERS))).otherwise(pl.concat_list("order"))
    counts = (
        rows.with_columns(orders.alias("order"))
        .explode("order")
        .group_by(keys)
        .agg(
            pl.len().alias("n"),
            pl.col("correct").sum().alias("n_correct"),
            pl.col("calibrated").sum().alias("n_calibrated"),
        )
    )
    return [  # one per cell
        dict(zip(keys, key), n=n, n_correct=k, accuracy=k / n, calibrated=c / n)
        for *key, n, k, c in sorted(counts.iter_rows(), key=lambda row: tuple(row[: len(keys)]))
    ]


def mean_over_seeds(cells: list[dict]) -> pa.Table:
    """Mean and standard deviation of accuracy across seeds (the paper's
    figures), and the Clopper-Pearson 95% interval of the accuracy over all ``n``
    instances of the seeds pooled (none at n < 2)."""
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["model"], c["setting"], c["order"], c["condition"], c["aligned_source"]), []).append(c)
    rows = []
    for key, members in sorted(groups.items()):
        acc = np.array([m["accuracy"] for m in members])
        cal = np.array([m["calibrated"] for m in members])
        n = sum(m["n"] for m in members)
        _, low, high = proportion_interval(sum(m["n_correct"] for m in members), n)
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
    keys = ["model", "variant", "group", "seed", "order"]
    means = (
        pl.from_arrow(predictions.select(["model", "instance_id", "correct"]))
        .join(
            pl.from_arrow(instances.select(["instance_id", "condition", "order", "aligned_source", "seed"])),
            on="instance_id",
            how="left",
            maintain_order="left",
        )
        .select(
            "model",
            pl.col("instance_id").str.split("/").list.get(1).alias("variant"),
            pl.when(pl.col("condition") == "conflict")
            .then(pl.lit("conflict"))
            .otherwise(pl.col("aligned_source") + " only")
            .alias("group"),
            "seed",
            pl.col("order").fill_null("-"),
            "correct",
        )
        .group_by(keys, maintain_order=True)  # the cells in order of first appearance, as the deltas were taken
        .agg((pl.col("correct").sum() / pl.len()).alias("mean"))
        .with_columns(pl.col("variant").str.split("=").list.first().alias("factor"))
    )
    baseline = means.filter(pl.col("variant") == "baseline").select(
        "model", "group", "seed", "order", pl.col("mean").alias("baseline")
    )
    deltas = (
        means.filter(pl.col("variant") != "baseline")
        .join(baseline, on=["model", "group", "seed", "order"], how="inner", maintain_order="left")
        .group_by("model", "factor", "group")
        .agg((pl.col("mean") - pl.col("baseline")).abs().alias("deltas"))
    )
    found = {
        (model, factor, group): np.asarray(values, dtype=float) for model, factor, group, values in deltas.iter_rows()
    }
    rows = []
    models = sorted(means["model"].unique().to_list())
    factors = sorted(means.filter(pl.col("variant") != "baseline")["factor"].unique().to_list())
    for model in models:  # models x factors x 3 conditions: the table's rows
        for factor in factors:
            for group in ("text only", "numbers only", "conflict"):
                deltas = found.get((model, factor, group), np.empty(0))
                rows.append(
                    {
                        "model": model,
                        "factor": factor,
                        "condition": group,
                        "n_deltas": len(deltas),
                        "mean_abs_delta": float(np.mean(deltas)) if deltas.size else float("nan"),
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
    fig, axes = plt.subplots(
        len(orders), len(settings), figsize=(3.6 * len(settings), 3.2 * len(orders)), squeeze=False
    )
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
                    cell = next(
                        (
                            r
                            for r in members
                            if r["model"] == model and r["aligned_source"] == source and r["condition"] == condition
                        ),
                        None,
                    )
                    if cell:
                        xs.append(m + (b - (len(bars) - 1) / 2) * width)
                        ys.append(cell["accuracy"])
                        es.append(0.0 if cell["std"] != cell["std"] else cell["std"])
                ax.bar(
                    xs,
                    ys,
                    width=width,
                    yerr=es,
                    capsize=2,
                    color=f"C{sources.index(source)}",
                    alpha=1.0 if condition == "conflict" else 0.35,
                    hatch=None if condition == "conflict" else "//",
                    label=f"{source} aligned, {condition}",
                )
            ax.axhline(0.5, color="grey", linestyle="dashed", linewidth=1)
            ax.set_xticks(range(len(models)))
            ax.set_xticklabels(models, fontsize=7, rotation=10)
            ax.set_ylim(0, 1)
            ax.set_ylabel("accuracy")
            ax.set_title(f"({next(letters)}) {setting}, {order.replace('_', ' ')}", fontsize=9)
            ax.legend(fontsize=6)
    fig.suptitle(
        "Evidence arbitration: conflict (solid) vs unimodal reference (hatched); dashed line: chance", fontsize=10
    )
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
    frame = pl.from_arrow(instances.select(["setting", "condition", "label", "latent"]))
    rows = frame.filter((pl.col("setting") == setting) & (pl.col("condition") == "unimodal"))
    chosen = [
        r
        for label in ("high", "low")
        for r in rows.filter(pl.col("label") == label).head(per_label).iter_rows(named=True)
    ]
    fig, axes = plt.subplots(
        1, max(len(chosen), 1), figsize=(3.4 * max(len(chosen), 1), 2.8), squeeze=False, sharey=True
    )
    for ax, row in zip(axes[0], chosen):
        latent = json.loads(row["latent"])
        truth = latent["truth"]
        steps = np.arange(1, len(truth["values"]) + 1)
        line = ax.plot(steps, truth["values"], marker=".", label=f"truth: x_1..x_T ({truth['label']})")[0]
        ax.plot(
            [steps[-1] + horizon],
            [truth["target"]],
            marker="*",
            markersize=10,
            linestyle="none",
            color=line.get_color(),
            label=f"target, T+{horizon}",
        )
        if "other" in latent:
            other = latent["other"]
            ax.plot(
                steps, other["values"], linestyle="dashed", color="grey", label=f"conflicting series ({other['label']})"
            )
        ax.axhline(THRESHOLD, color="black", linewidth=0.8, linestyle="dotted")
        ax.set_ylim(0, 1)
        ax.set_xlabel("time step")
        ax.set_title(f"{row['label']}: margin {truth['margin']:.2f}, slope {truth['slope']:+.3f}", fontsize=8)
    axes[0][0].set_ylabel("risk")
    if chosen:
        axes[0][0].legend(fontsize=6, loc="best")
    fig.suptitle(
        f"Generated trajectories ({setting} setting): {len(chosen)} of {len(rows)} instances; dotted: threshold 0.5",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


ORDER_PAIR_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("aligned_source", pa.string(), nullable=False),  # numbers | text | all (both, distinct instances)
        pa.field("n_pairs", pa.int64(), nullable=False),  # instances read out in both orders, seeds pooled
        pa.field("accuracy", pa.float64()),  # per instance the mean over its two orders, then the mean over instances
        pa.field("accuracy_low", pa.float64()),
        pa.field("accuracy_high", pa.float64()),
        pa.field("aligned_first", pa.float64()),
        pa.field("aligned_first_low", pa.float64()),
        pa.field("aligned_first_high", pa.float64()),
        pa.field("aligned_last", pa.float64()),
        pa.field("aligned_last_low", pa.float64()),
        pa.field("aligned_last_high", pa.float64()),
        pa.field("difference", pa.float64()),  # aligned_first - aligned_last over the same instances
        pa.field("difference_low", pa.float64()),
        pa.field("difference_high", pa.float64()),
        pa.field("p_paired", pa.float64()),  # exact McNemar
        pa.field(
            "follows_numbers", pa.float64()
        ),  # rows "all" of text-vs-numbers settings: answers that follow the numbers
        pa.field("follows_numbers_low", pa.float64()),
        pa.field("follows_numbers_high", pa.float64()),
    ]
)


def order_pairs(instances: pa.Table, predictions: pa.Table) -> pa.Table:
    """Accuracy under conflict with the instance as the unit (issue 50): each
    instance is read out in both evidence orders, which are the same
    evidence and so not independent samples.

    Per (model, setting, aligned source, and both sources as ``all``): the
    n_pairs instances answered in both orders; accuracy = the mean over
    instances of their two orders' mean, with the Clopper-Pearson interval
    over instances (:func:`conflictlab.stats.unit_proportion_interval`);
    each order's accuracy over the same instances (Clopper-Pearson); their
    difference with the Agresti-Min interval and the exact McNemar p
    (:func:`conflictlab.stats.paired_difference`); and, on rows ``all``,
    the share of answers following the numbers (per instance over its two
    orders; the tool setting has no text-vs-numbers conflict, so none). A
    conflict prompt whose other order was not read out is left out and
    logged by the caller through ``n_pairs``. Returns :data:`ORDER_PAIR_SCHEMA` rows.
    """
    rows = (
        _with_meta(instances, predictions, ["setting", "condition", "order", "aligned_source"])
        .filter(pl.col("condition") == "conflict")
        .with_columns(pl.col("instance_id").map_elements(instance_unit, return_dtype=pl.String).alias("unit"))
    )
    paired = (
        rows.group_by("model", "setting", "aligned_source", "unit")
        .agg(*(pl.col("correct").filter(pl.col("order") == order).first().alias(order) for order in ORDERS))
        .drop_nulls(list(ORDERS))
        .sort("model", "setting", "aligned_source", "unit")
    )
    out = []
    for (model, setting), frame in paired.group_by("model", "setting", maintain_order=True):
        for source in (*sorted(frame["aligned_source"].unique().to_list()), "all"):
            mine = frame if source == "all" else frame.filter(pl.col("aligned_source") == source)
            first, last = (mine[order].cast(pl.Float64).to_numpy() for order in ORDERS)
            both = (first + last) / 2
            row = {"model": model, "setting": setting, "aligned_source": source, "n_pairs": int(both.size)}
            row.update(
                zip(
                    ("accuracy", "accuracy_low", "accuracy_high"),
                    metrics.estimate(metrics.get("arbitration_accuracy"), both),
                )
            )
            for order, values in zip(ORDERS, (first, last)):
                row.update(
                    zip(
                        (order, f"{order}_low", f"{order}_high"),
                        proportion_interval(int(values.sum()), int(values.size)),
                    )
                )
            paired_test = paired_difference(first, last)
            row.update(
                difference=paired_test["difference"],
                difference_low=paired_test["low"],
                difference_high=paired_test["high"],
                p_paired=paired_test["p"],
            )
            if source == "all" and setting in TEXT_VS_NUMBERS:
                numbers = (mine["aligned_source"] == "numbers").to_numpy()
                follows = np.where(numbers, both, 1.0 - both)
                row.update(
                    zip(
                        ("follows_numbers", "follows_numbers_low", "follows_numbers_high"),
                        metrics.estimate(metrics.get("follows_numbers"), follows),
                    )
                )
            out.append(row)
    return pa.Table.from_pylist(out, schema=ORDER_PAIR_SCHEMA)

"""MemoTrap's accuracy table: per model, method and file (and all files together), the share of prompts whose
asked-for class scored highest, with its Clopper-Pearson interval and n; each method beside greedy reading of the
same model on the same prompts, paired (:func:`conflictlab.paired.paired_columns`: exact McNemar p, Tango's score
interval of the difference). Beside it, CAD's metric on the same prompts: ``exact_match``, the share whose
generated continuation begins with the asked-for class (:func:`conflictlab.memotrap.scoring.exact_match`), with its
Clopper-Pearson interval."""

from __future__ import annotations

import os

import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.benchmarks.memotrap import BENCHMARK
from conflictlab.lm.methods import GREEDY
from conflictlab.paired import mcnemar_exact, paired_columns, tango_interval
from conflictlab.report.tables import write_markdown_and_csv

ALL_FILES = "all"
# The accuracy metric and its interval, from the metric registry (its spec is in the descriptor).
ACCURACY = metrics.get("memotrap_accuracy", metrics.with_benchmarks([BENCHMARK]))

ACCURACY_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),  # a MemoTrap file, or "all"
        pa.field("n", pa.int64(), nullable=False),
        pa.field("correct", pa.int64(), nullable=False),
        pa.field("accuracy", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        # against greedy reading of the same model on the same prompts (null on greedy's own rows)
        pa.field("difference", pa.float64()),
        pa.field("difference_low", pa.float64()),
        pa.field("difference_high", pa.float64()),
        pa.field("p_paired", pa.float64()),
        pa.field("n_pairs", pa.int64()),
        # CAD's metric: the generated continuation's exact match (same n)
        pa.field("exact_match", pa.float64()),
        pa.field("exact_match_low", pa.float64()),
        pa.field("exact_match_high", pa.float64()),
    ]
)


def accuracy_table(scores: pa.Table) -> pa.Table:
    """:data:`ACCURACY_SCHEMA` rows from :data:`conflictlab.memotrap.scoring.SCORE_SCHEMA` rows: per model (in
    order of appearance), method (greedy first, then as scored) and file (as scored, then "all"). A model without
    greedy rows gets no paired columns."""
    frame = pl.from_arrow(scores.select(["model", "method", "item_id", "file", "correct", "exact_match"]))
    files = frame["file"].unique(maintain_order=True).to_list()
    rows = []
    for (model,), by_model in frame.group_by("model", maintain_order=True):
        methods = by_model["method"].unique(maintain_order=True).to_list()
        methods = [GREEDY] * (GREEDY in methods) + [m for m in methods if m != GREEDY]
        for method in methods:
            for file in [*files, ALL_FILES]:
                cell = by_model.filter(pl.col("method") == method)
                if file != ALL_FILES:
                    cell = cell.filter(pl.col("file") == file)
                if cell.is_empty():
                    continue
                correct, n = int(cell["correct"].sum()), cell.height
                accuracy, low, high = metrics.estimate(ACCURACY, cell["correct"].cast(pl.Float64).to_numpy())
                row = {"model": model, "method": method, "file": file, "n": n, "correct": correct}
                row.update(accuracy=accuracy, ci_low=low, ci_high=high)
                em, em_low, em_high = metrics.estimate(ACCURACY, cell["exact_match"].cast(pl.Float64).to_numpy())
                row.update(exact_match=em, exact_match_low=em_low, exact_match_high=em_high)
                base = by_model.filter(pl.col("method") == GREEDY)
                if method != GREEDY and not base.is_empty():
                    base = base if file == ALL_FILES else base.filter(pl.col("file") == file)
                    paired = paired_columns(
                        (cell["item_id"].to_list(), cell["correct"].cast(pl.Float64).to_numpy()),
                        (base["item_id"].to_list(), base["correct"].cast(pl.Float64).to_numpy()),
                        proportion=True,
                        what=f"MemoTrap {model} {method} against {GREEDY}, {file}",
                    )
                    row.update({k: paired.get(k) for k in ACCURACY_SCHEMA.names if k in paired})
                rows.append(row)
    return pa.Table.from_pylist(rows, schema=ACCURACY_SCHEMA)


def accuracy_caption() -> str:
    """The accuracy table's caption; its method names are those of the functions :func:`accuracy_table` calls."""
    label = metrics.method_label
    return (
        f"MemoTrap: accuracy (%) by the summed log-likelihood of the classes, with its "
        f"{metrics.interval_label(ACCURACY)} 95% interval and n; each method against greedy reading of the same model "
        f"on the same prompts: the difference (points) with {label(tango_interval)} paired 95% interval and the "
        f"{label(mcnemar_exact)} p (each comparison alone, unadjusted). exact_match (%): CAD's metric, the share "
        "whose greedily generated continuation (under the row's method) begins with the asked-for class, with its "
        f"{metrics.interval_label(ACCURACY)} 95% interval; CAD's Table 3 is compared with it."
    )


def write_accuracy_table(table: pa.Table, md_path: str | os.PathLike, csv_path: str | os.PathLike) -> None:
    """The accuracy table as Markdown (percent, intervals in brackets) and CSV (proportions, every column)."""
    write_markdown_and_csv(
        table,
        md_path,
        csv_path,
        caption=accuracy_caption(),
        intervals={
            "accuracy": ("ci_low", "ci_high"),
            "difference": ("difference_low", "difference_high"),
            "exact_match": ("exact_match_low", "exact_match_high"),
        },
        scale={"accuracy": 100, "difference": 100, "exact_match": 100},
    )

"""ContextConflict's columns of the methods table (conflictlab.report.methods).

Every row is a rerun on the steering test split (``model@variant``: the
unsteered ``base``, the steering variants and the conflict-resolution
methods), so all rows of a model answer the same samples. Columns, pooled
over the types of each task family: accuracy on the reasoning types (Wilson),
Balance on the summarization types (the defined shares only; lower is
better; Student-t interval) and judged Faithfulness on every type (scored
responses only; Student-t), as Table 4 computes them per type.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.report.methods import method_cell

BENCHMARK = "ContextConflict"


def method_cells(
    runs: Mapping[str, tuple[str, str]],
    *,
    accuracy: pa.Table | None = None,
    attributions: pa.Table | None = None,
    faithfulness: pa.Table | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """:data:`conflictlab.report.methods.METHOD_CELL_SCHEMA` rows.

    ``runs``: responding model name (``model@variant``) -> (model, method
    label). ``accuracy``: per-sample accuracy rows (``correct``);
    ``attributions``: per-sample Balance under one scorer (``balance``,
    ``undefined``); ``faithfulness``: judged rows (``faithfulness``, null
    when not scored). Rows of other models are ignored; a missing table
    gives no column.
    """
    columns = []
    if accuracy is not None:
        columns.append(("Acc (reasoning)", accuracy, pl.col("correct").cast(pl.Float64), pl.lit(True), "accuracy"))
    if attributions is not None:
        columns.append(("Bal (summarization)", attributions, pl.col("balance"), ~pl.col("undefined"), "balance"))
    if faithfulness is not None:
        columns.append(
            (
                "Fth (all types)",
                faithfulness,
                pl.col("faithfulness"),
                pl.col("faithfulness").is_not_null(),
                "faithfulness",
            )
        )
    cells = []
    for metric, table, value, kept, spec in columns:
        frame = (
            pl.from_arrow(table)
            .filter(pl.col("model").is_in(list(runs)) & kept)
            .select("model", "sample_id", value.alias("value"))
        )
        for name, group in frame.group_by("model", maintain_order=True):
            model, method = runs[name[0]]
            cells.append(
                method_cell(
                    model=model,
                    method=method,
                    benchmark=BENCHMARK,
                    metric=metric,
                    values=group["value"].to_numpy(),
                    sample_ids=group["sample_id"].to_list(),
                    spec=metrics.get(spec),
                    n_resamples=n_resamples,
                    seed=seed,
                )
            )
    return cells

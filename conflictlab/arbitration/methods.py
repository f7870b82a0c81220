"""Arbitration's columns of the methods table (conflictlab.report.methods).

Over the conflict prompts of the main instances, each instance one unit of
analysis (its two evidence orders averaged, so it counts once:
:func:`conflictlab.arbitration.prompts.instance_unit`): accuracy, which a
model that always follows one modality holds at 50% (the aligned modality
alternates with the label), with the registry's interval over instances
(Clopper-Pearson with the summed shares as the count: each instance is 0, ½
or 1, where Student-t undercovered, docs/statistics.md) and marks; and the
text-following rate, the share of the text-vs-numbers
conflicts (settings modality, recency, reliability; the tool setting pits
the context against a forecast, not text against numbers) answered with the
text's label, with no marks: which modality should win is the question the
benchmark asks, not a score. A tie follows neither.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.arbitration.prompts import instance_unit
from conflictlab.report.methods import method_cell

BENCHMARK = "Arbitration"
TEXT_VS_NUMBERS = ("modality", "recency", "reliability")


def method_cells(instances: pa.Table, predictions: pa.Table, runs: Mapping[str, tuple[str, str]]) -> list[dict]:
    """:data:`conflictlab.report.methods.METHOD_CELL_SCHEMA` rows; ``runs``:
    the ``model`` of ``predictions`` rows -> (model, method label)."""
    meta = pl.from_arrow(instances.select(["instance_id", "setting", "condition", "aligned_source", "answer_letter"]))
    rows = (
        pl.from_arrow(predictions.select(["instance_id", "model", "predicted_letter", "correct"]))
        .filter(pl.col("model").is_in(list(runs)))
        .join(meta, on="instance_id", how="inner", validate="m:1")
        .filter(pl.col("condition") == "conflict")
        .with_columns(
            follows_text=(pl.col("predicted_letter") == pl.col("answer_letter"))
            == (pl.col("aligned_source") == "text"),
            tie=pl.col("predicted_letter") == "tie",
        )
        .with_columns(follows_text=pl.col("follows_text") & ~pl.col("tie"))
    )
    cells = []
    for metric, frame, value, spec in (
        ("Acc (conflict)", rows, "correct", "conflict_accuracy"),
        ("Text followed", rows.filter(pl.col("setting").is_in(TEXT_VS_NUMBERS)), "follows_text", "text_followed"),
    ):
        units = (
            frame.with_columns(unit=pl.col("instance_id").map_elements(instance_unit, return_dtype=pl.String))
            .group_by("model", "unit", maintain_order=True)
            .agg(pl.col(value).cast(pl.Float64).mean())
            .sort("model", "unit")
        )
        for name, group in units.group_by("model", maintain_order=True):
            model, method = runs[name[0]]
            cells.append(
                method_cell(
                    model=model,
                    method=method,
                    benchmark=BENCHMARK,
                    metric=metric,
                    values=group[value].to_numpy(),
                    sample_ids=group["unit"].to_list(),
                    spec=metrics.get(spec),
                )
            )
    return cells

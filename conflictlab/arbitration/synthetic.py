"""Planted arbitration read-outs (rule ``arbitration_evaluate``) with known
accuracy, so ``arbitration_report`` can run at the paper's instance counts
without a model (README, Paper scale; ``benchmarks/scale.py run --planted``).
The instances themselves are already synthetic (``arbitration_generate``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA

PLANTED_READ_OUT = "planted"
# The planted letter's logit lead over the other: a constant, so the
# calibrated read-out (median-margin threshold) sees one margin per answer.
PLANTED_MARGIN = 2.0
# Instances of one cell share one planted accuracy: the report's cells.
CELL = ("setting", "condition", "order", "aligned_source", "seed")


def planted_predictions(
    instances: pa.Table, *, model: str, accuracy: float | Mapping[str, float] = 0.6, seed: int = 0
) -> pa.Table:
    """One :data:`~conflictlab.arbitration.evaluation.PREDICTION_SCHEMA` row
    per instance, in ``instances``' order.

    Planted truth: in every cell of :data:`CELL` (the accuracy table's cells
    before seeds are averaged) exactly ``round(share * n)`` instances, chosen
    with ``seed``, predict their ``answer_letter``, the others the other
    letter; ``share`` is ``accuracy`` or ``accuracy[setting]``.
    """
    rng = np.random.default_rng(seed)
    frame = pl.from_arrow(
        instances.select(["setting", "condition", "order", "aligned_source", "seed", "answer_letter"])
    ).with_row_index("row")
    correct = np.zeros(instances.num_rows, dtype=bool)
    for setting, *_, rows in (
        frame.group_by(CELL, maintain_order=True).agg(pl.col("row")).select(*CELL, "row").iter_rows()
    ):
        share = accuracy if isinstance(accuracy, float) else accuracy[setting]
        correct[np.asarray(rows)[rng.permutation(len(rows))[: round(share * len(rows))]]] = True
    answer = np.array(instances.column("answer_letter").to_pylist())
    predicted = np.where(correct, answer, np.where(answer == "A", "B", "A"))
    logit_a = np.where(predicted == "A", PLANTED_MARGIN, 0.0)
    return pa.table(
        {
            "instance_id": instances.column("instance_id"),
            "model": pa.repeat(pa.scalar(model), instances.num_rows),
            "logit_a": logit_a,
            "logit_b": PLANTED_MARGIN - logit_a,
            "predicted_letter": predicted,
            "correct": correct,
            "read_out": pa.repeat(pa.scalar(PLANTED_READ_OUT), instances.num_rows),
        },
        schema=PREDICTION_SCHEMA,
    )


def planted_method_predictions(
    instances: pa.Table, runs: Sequence[str], *, accuracy: float | Mapping[str, float] = 0.6, seed: int = 0
) -> pa.Table:
    """Rule arbitration_methods' read-out, planted: for every run of ``runs``
    (method run names, ``model@method``) one :func:`planted_predictions` row
    per conflict prompt (``condition == "conflict"``, what the rule reads
    out), runs outer. Shape: n_conflict × len(runs) rows of ``PREDICTION_SCHEMA``.

    Planted truth: in every cell of :data:`CELL` run ``runs[k]`` predicts the
    answer for exactly ``round(share · n)`` instances (seed ``seed + k``);
    ``share`` is ``accuracy`` or ``accuracy[run]``, so the methods table's
    "Acc (conflict)" of a run is the sum of those counts over its conflict prompts.
    """
    conflict = instances.filter(pc.equal(instances.column("condition"), "conflict"))
    return pa.concat_tables(
        [
            planted_predictions(
                conflict, model=run, accuracy=accuracy if isinstance(accuracy, float) else accuracy[run], seed=seed + k
            )
            for k, run in enumerate(runs)
        ]
    )

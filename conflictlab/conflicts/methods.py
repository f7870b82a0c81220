"""CONFLICTS' columns of the methods table (conflictlab.report.methods).

A method answers every query under the vanilla strategy (the search results
and the question, no conflict type given), and the judges score it as
Table 5 scores a strategy: expected behaviour over every query and answer
recall over the No conflict, Freshness and Misinformation queries with a
gold answer; a response not generated or not readable scores 0, a verdict
the judge left unreadable is left out (:func:`conflictlab.conflicts.tables.scored_outcome`).
Wilson intervals; higher is better.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.conflicts.tables import RECALL_CATEGORIES, scored_outcome
from conflictlab.report.methods import method_cell

BENCHMARK = "CONFLICTS"
METHOD_STRATEGY = "vanilla"


def method_cells(judged: pa.Table, runs: Mapping[str, tuple[str, str]]) -> list[dict]:
    """:data:`conflictlab.report.methods.METHOD_CELL_SCHEMA` rows from the
    judged vanilla responses whose ``model`` is a run of ``runs`` (run -> (model, method label))."""
    rows = pl.from_arrow(judged).filter(pl.col("model").is_in(list(runs)) & (pl.col("strategy") == METHOD_STRATEGY))
    recall_rows = rows.filter((pl.col("recall_status") != "no_gold") & pl.col("conflict_type").is_in(RECALL_CATEGORIES))
    cells = []
    for metric, frame, verdict, spec in (
        ("Expected behaviour", rows, "adheres", "expected_behaviour"),
        ("Answer recall", recall_rows, "answer_recall", "answer_recall"),
    ):
        scored = frame.with_columns(outcome=scored_outcome(verdict).cast(pl.Float64)).filter(
            pl.col("outcome").is_not_null()
        )
        for name, group in scored.group_by("model", maintain_order=True):
            model, method = runs[name[0]]
            cells.append(
                method_cell(
                    model=model,
                    method=method,
                    benchmark=BENCHMARK,
                    metric=metric,
                    values=group["outcome"].to_numpy(),
                    sample_ids=group["query_id"].to_list(),
                    spec=metrics.get(spec),
                )
            )
    return cells

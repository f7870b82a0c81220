"""ConflictBank's columns of the methods table (conflictlab.report.methods).

A method's read-out (:func:`conflictlab.conflictbank.evaluation.read_out_with_method`)
runs in the three single-evidence conflict settings, one per conflict kind
(misinformation, temporal, semantic), and is scored on the scored subset of
the model's greedy read-out (records answered correctly without evidence and
with the correct evidence): the same records for every method of a model, as
the embedded experiment scores trained models on the base model's subset. A
method changes what a model does with evidence, not what it knew, so the
subset is the greedy one's. Per kind: MR (over the answers that are the
correct or the replaced option), OAR and CAR, Clopper-Pearson intervals; MR
compared with greedy as a ratio over every scored record. No marks:
following the evidence is right for a temporal update and wrong for
misinformation, so neither direction is better.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import pyarrow as pa

from conflictlab.conflictbank.metrics import scored_records, setting_metrics
from conflictlab.conflictbank.prompts import METHOD_SETTINGS
from conflictlab.metrics import get as metric_spec
from conflictlab.metrics import higher_is_better, method_name, paired_comparison
from conflictlab.paired_ratios import ratio_items
from conflictlab.report.methods import COMPARED_AS, ITEMS, samples_key

BENCHMARK = "ConflictBank"
SHOWN = ("mr",)  # in the Markdown table and the figure; OAR and CAR in the CSV
LABELS = {"mr": "MR", "oar": "OAR", "car": "CAR"}


def method_cells(
    predictions: pa.Table, runs: Mapping[str, tuple[str, str]], *, greedy: Mapping[str, str]
) -> list[dict]:
    """:data:`conflictlab.report.methods.METHOD_CELL_SCHEMA` rows (each with
    ``shown``: whether the Markdown table shows it).

    ``predictions``: ``PREDICTION_SCHEMA`` rows whose ``model`` is a run name
    of ``runs`` (run -> (model, method label)), the greedy runs with the
    settings ``default`` and ``correct`` too; ``greedy``: model -> its greedy
    run, whose scored subset every run of the model is scored on.
    """
    frame = pl.from_arrow(predictions)
    subset = scored_records(frame.filter(pl.col("model").is_in(list(greedy.values()))))
    ids = {model: subset.filter(pl.col("model") == run)["record_id"].to_list() for model, run in greedy.items()}
    subsets = {run: ids[model] for run, (model, _) in runs.items()}
    kept = frame.filter(pl.col("model").is_in(list(runs)) & pl.col("setting").is_in(METHOD_SETTINGS))
    # The entropy's interval is not shown here: one resample keeps its cost nil.
    metrics = pl.from_arrow(setting_metrics(kept, subsets=subsets, n_resamples=1))
    items = _per_record(kept, subsets)
    cells = []
    for row in metrics.iter_rows(named=True):  # one row per (run, setting): tens of rows
        model, method = runs[row["model"]]
        for name in ("mr", "oar", "car"):
            cells.append(
                {
                    "model": model,
                    "method": method,
                    "benchmark": BENCHMARK,
                    "metric": f"{LABELS[name]} {row['setting']}",
                    "value": row[name],
                    "ci_low": row[f"{name}_low"],
                    "ci_high": row[f"{name}_high"],
                    "n": row["n_mr"] if name == "mr" else row["n_scored"],
                    "samples": samples_key(ids[model]),
                    "higher_is_better": higher_is_better(metric_spec(name)),
                    "interval": method_name(metric_spec(name)),
                    "shown": name in SHOWN,
                    ITEMS: items.get((row["model"], row["setting"], name), ([], [])),
                    COMPARED_AS: paired_comparison(metric_spec(name)),
                }
            )
    return cells


def _per_record(kept: pl.DataFrame, subsets: Mapping[str, list]) -> dict[tuple[str, str, str], tuple[list, list]]:
    """Per (run, setting, metric), the scored records' ids and per-record
    values, the items the paired comparison with the greedy run joins on: OAR
    and CAR 0/1 over the scored subset; MR (OAR, OAR or CAR) over the same
    records, every one of them, so that the comparison is of two ratios over
    all scored records (:mod:`conflictlab.paired_ratios`), not over the records
    both runs happened to answer with the correct or the replaced option."""
    subset = pl.DataFrame(
        {
            "model": [run for run, ids in subsets.items() for _ in ids],
            "record_id": [i for ids in subsets.values() for i in ids],
        },
        schema={"model": pl.String, "record_id": pl.Int64},
    ).unique()
    scored = kept.join(subset, on=["model", "record_id"], how="semi").select(
        "model",
        "setting",
        "record_id",
        oar=(pl.col("predicted_letter") == pl.col("correct_letter")).cast(pl.Float64),
        car=(pl.col("predicted_letter") == pl.col("replaced_letter")).cast(pl.Float64),
    )
    out = {}
    for (run, setting), group in scored.group_by("model", "setting", maintain_order=True):  # tens of groups
        out[run, setting, "oar"] = (group["record_id"].to_list(), group["oar"].to_numpy())
        out[run, setting, "car"] = (group["record_id"].to_list(), group["car"].to_numpy())
        answered = (group["oar"] + group["car"]).to_numpy()
        out[run, setting, "mr"] = (group["record_id"].to_list(), ratio_items(group["oar"].to_numpy(), answered))
    return out

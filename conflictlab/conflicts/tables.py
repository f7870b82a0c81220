"""CONFLICTS tables (the paper's Tables 4-6) and the Task 1 confusion matrix figure.

Every rate is a percentage with a 95% percentile-bootstrap interval over
queries (Task 1) or responses (Task 2). Rows of this run carry
``source = "this run"``; the paper's own numbers follow with
``source = "paper"`` and no counts, for reference. Expected behaviour and
answer recall are means of binary verdicts over the responses that have one
(not generated and unreadable verdicts are counted beside, never scored 0);
grounding is the mean of per-response grounding scores over responses that
have one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflicts.evaluation import ORDER, confusion_matrix, task1_accuracy
from conflictlab.conflicts.prompts import STRATEGIES, TAXONOMY
from conflictlab.stats import bootstrap_mean_ci

THIS_RUN, PAPER = "this run", "paper"

# Paper Table 4: type-prediction accuracy (%).
PAPER_TABLE4 = {"Gemma 3 27B": 53.9, "Qwen 2.5 72B": 53.1, "GPT-4o": 59.2, "Gemini 2.0 Flash": 60.5, "Gemini 2.5 Flash": 65.3}

# Paper Table 5: (expected behaviour, answer recall, factual grounding) in %,
# per model and strategy (vanilla, pipeline, taxonomy_aware, oracle).
PAPER_TABLE5 = {
    "Gemma 3 27B": ((59.4, 89.0, 94.4), (71.6, 89.9, 91.9), (76.2, 86.0, 92.9), (87.6, 88.6, 93.3)),
    "Qwen 2.5 72B": ((64.2, 87.7, 90.5), (67.5, 89.0, 88.2), (68.3, 88.2, 89.4), (90.6, 87.3, 89.3)),
    "GPT-4o": ((67.2, 87.3, 91.2), (74.9, 87.3, 92.0), (70.0, 88.6, 94.0), (88.6, 87.3, 91.4)),
    "Gemini 2.0 Flash": ((62.0, 90.8, 98.5), (75.3, 89.5, 96.6), (69.4, 89.0, 96.8), (87.8, 90.4, 96.8)),
    "Gemini 2.5 Flash": ((65.7, 92.1, 96.8), (75.1, 90.8, 96.9), (69.9, 94.3, 96.2), (88.0, 91.7, 96.8)),
    "Gemini 2.5 Flash Thinking": ((68.3, 90.8, 96.2), (76.6, 89.0, 96.1), (73.6, 91.7, 97.0), (89.3, 89.9, 96.8)),
}

# Table 6 merges the two categories whose expected behaviour is to select
# the correct answer.
CATEGORY_GROUPS = {
    "No conflict": ("no_conflict",),
    "Complementary information": ("complementary",),
    "Freshness and Misinformation": ("outdated", "misinformation"),
    "Conflicting opinions": ("conflicting_opinions",),
}
# Paper Table 6 (Gemini 2.5 Flash Thinking): expected behaviour (%) per group and strategy.
PAPER_TABLE6_MODEL = "Gemini 2.5 Flash Thinking"
PAPER_TABLE6 = {
    "No conflict": (78.4, 74.7, 71.0, 90.1),
    "Complementary information": (83.3, 83.3, 78.1, 94.7),
    "Freshness and Misinformation": (74.2, 75.8, 78.8, 80.3),
    "Conflicting opinions": (36.2, 73.3, 69.8, 87.9),
}

TABLE4_SCHEMA = pa.schema(
    [
        ("source", pa.string()), ("model", pa.string()), ("readout", pa.string()), ("n", pa.int64()),
        ("accuracy", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("n_unparseable", pa.int64()),
    ]
)
TABLE5_SCHEMA = pa.schema(
    [
        ("source", pa.string()), ("model", pa.string()), ("strategy", pa.string()), ("n", pa.int64()), ("n_not_generated", pa.int64()),
        ("expected_behaviour", pa.float64()), ("eb_low", pa.float64()), ("eb_high", pa.float64()),
        ("n_recall", pa.int64()), ("answer_recall", pa.float64()), ("ar_low", pa.float64()), ("ar_high", pa.float64()),
        ("n_grounding", pa.int64()), ("grounding", pa.float64()), ("gr_low", pa.float64()), ("gr_high", pa.float64()),
        ("cited_sentences", pa.float64()), ("n_invalid_citations", pa.int64()), ("n_unreadable", pa.int64()),
    ]
)
TABLE6_SCHEMA = pa.schema(
    [
        ("source", pa.string()), ("model", pa.string()), ("category", pa.string()),
        *[(f"{s}", pa.float64()) for s in STRATEGIES], *[(f"n_{s}", pa.int64()) for s in STRATEGIES],
    ]
)


def _percent(values: Sequence[float], n_resamples: int, seed: int) -> tuple[float | None, float | None, float | None]:
    if not len(values):
        return None, None, None
    mean, low, high = bootstrap_mean_ci(np.asarray(values, dtype=float), n_resamples=n_resamples, seed=seed)
    return 100 * mean, 100 * low, 100 * high


def table4(predictions: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Type-prediction accuracy per (model, read-out), then the paper's rows."""
    rows = []
    data = predictions.to_pylist()
    for model, readout in dict.fromkeys((r["model"], r["readout"]) for r in data):
        mine = [r for r in data if r["model"] == model and r["readout"] == readout]
        accuracy, low, high = task1_accuracy([r["predicted"] for r in mine], [r["conflict_type"] for r in mine], n_resamples=n_resamples, seed=seed)
        rows.append({
            "source": THIS_RUN, "model": model, "readout": readout, "n": len(mine), "accuracy": 100 * accuracy,
            "ci_low": 100 * low, "ci_high": 100 * high, "n_unparseable": sum(r["predicted"] is None for r in mine),
        })
    rows += [{"source": PAPER, "model": model, "accuracy": value} for model, value in PAPER_TABLE4.items()]
    return pa.Table.from_pylist(rows, schema=TABLE4_SCHEMA)


def table5(judged: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Per (model, strategy): expected behaviour, answer recall, grounding,
    citation quality and counts, then the paper's rows."""
    rows = []
    data = judged.to_pylist()
    for model, strategy in dict.fromkeys((r["model"], r["strategy"]) for r in data):
        mine = [r for r in data if r["model"] == model and r["strategy"] == strategy]
        eb = _percent([r["adheres"] for r in mine if r["adheres"] is not None], n_resamples, seed)
        recall = [r["answer_recall"] for r in mine if r["answer_recall"] is not None]
        grounding = [r["grounding"] for r in mine if r["grounding"] is not None]
        n_sentences = sum(r["n_sentences"] for r in mine)
        rows.append({
            "source": THIS_RUN, "model": model, "strategy": strategy, "n": len(mine),
            "n_not_generated": sum(r["status"] != "ok" for r in mine),
            **dict(zip(("expected_behaviour", "eb_low", "eb_high"), eb)),
            "n_recall": len(recall), **dict(zip(("answer_recall", "ar_low", "ar_high"), _percent(recall, n_resamples, seed))),
            "n_grounding": len(grounding), **dict(zip(("grounding", "gr_low", "gr_high"), _percent(grounding, n_resamples, seed))),
            "cited_sentences": 100 * sum(r["n_cited_sentences"] for r in mine) / n_sentences if n_sentences else None,
            "n_invalid_citations": sum(r["n_invalid_citations"] for r in mine),
            "n_unreadable": sum("unreadable" in (r["behaviour_status"], r["recall_status"], r["grounding_status"]) for r in mine),
        })
    for model, values in PAPER_TABLE5.items():
        for strategy, (eb, recall, grounding) in zip(STRATEGIES, values):
            rows.append({"source": PAPER, "model": model, "strategy": strategy, "expected_behaviour": eb, "answer_recall": recall, "grounding": grounding})
    return pa.Table.from_pylist(rows, schema=TABLE5_SCHEMA)


def table6(judged: pa.Table) -> pa.Table:
    """Expected behaviour (%) per model, category group and strategy (the
    paper's Table 6 groups), with counts, then the paper's rows."""
    rows = []
    data = [r for r in judged.to_pylist() if r["adheres"] is not None]
    for model in dict.fromkeys(r["model"] for r in judged.to_pylist()):
        for group, members in CATEGORY_GROUPS.items():
            row = {"source": THIS_RUN, "model": model, "category": group}
            for strategy in STRATEGIES:
                verdicts = [r["adheres"] for r in data if r["model"] == model and r["strategy"] == strategy and r["conflict_type"] in members]
                row[strategy] = 100 * float(np.mean(verdicts)) if verdicts else None
                row[f"n_{strategy}"] = len(verdicts)
            rows.append(row)
    for group, values in PAPER_TABLE6.items():
        rows.append({"source": PAPER, "model": PAPER_TABLE6_MODEL, "category": group, **dict(zip(STRATEGIES, values))})
    return pa.Table.from_pylist(rows, schema=TABLE6_SCHEMA)


def confusion_figure(predictions: pa.Table):
    """One panel per (model, read-out): gold category (rows) against the
    predicted one (columns, the last one unparseable), counts in the cells."""
    from conflictlab.report.figures import panel_grid

    data = predictions.to_pylist()
    runs = list(dict.fromkeys((r["model"], r["readout"]) for r in data))
    fig, axes = panel_grid(len(runs), width=4.6, height=4.0, ncols=2, sharey=False)
    labels = [TAXONOMY[name].label for name in ORDER]
    for ax, (model, readout) in zip(axes, runs):
        mine = [r for r in data if r["model"] == model and r["readout"] == readout]
        matrix = confusion_matrix([r["predicted"] for r in mine], [r["conflict_type"] for r in mine])
        ax.imshow(matrix, cmap="Blues", vmin=0)
        for (i, j), count in np.ndenumerate(matrix):
            ax.text(j, i, str(count), ha="center", va="center", fontsize=8, color="white" if count > matrix.max() / 2 else "black")
        ax.set_xticks(range(len(labels) + 1), [*labels, "unparseable"], rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_xlabel("predicted type")
        ax.set_ylabel("gold type")
        ax.set_title(f"{model} ({readout})", fontsize=9)
    return fig

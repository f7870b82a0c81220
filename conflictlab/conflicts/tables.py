"""CONFLICTS tables (the paper's Tables 2 and 4-7) and the Task 1 confusion matrix figure.

Tables 2 and 7 count the queries this run read per category and per data
source, beside the paper's counts of the release (no interval: they are
counts of the data, not estimates).

Rates are proportions in [0, 1] (shown as percentages): Task 1 accuracy,
expected behaviour and answer recall with 95% Clopper-Pearson intervals
(:func:`conflictlab.stats.proportion_interval`; none at n < 2), the grounding
mean with the registry's 95% interval over responses
(:func:`conflictlab.metrics.estimate`: the betting interval over [0, 1], none
below its minimum n). Every row carries its n.

Denominators are what a reader assumes, every query (Task 1) or every
(query, strategy) pair (Task 2): a response that was not generated or not
readable (status ``unparseable``, ``no_predicted_type``, ``empty``,
``too_long``, ``no_final_channel``) scores 0 in expected behaviour and
answer recall and is counted in ``n_unparseable``. Only a verdict the
*judge* left unreadable is left out (``n_unreadable``): that failure is the
judge's, not the model's. Grounding is a mean over responses that have
factual sentences (a missing response has no sentence to ground).

Answer recall follows the paper (§4): over the queries of the "No conflict",
"Freshness" and "Misinformation" categories (228 on the release; every one
has a gold answer). The wider figure, over every query with a released gold
(237 on the release: 9 Complementary and Conflicting-opinions queries also
have one), is kept as ``answer_recall_all_gold``.

Rows of this run carry ``source = "this run"``; the paper's own numbers
follow with ``source = "paper"``, for reference, with the number of release
queries each covers as n (no interval: the paper gives none).
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab import metrics
from conflictlab.conflicts.evaluation import ORDER, confusion_matrix
from conflictlab.conflicts.prompts import STRATEGIES, TAXONOMY
from conflictlab.stats import proportion_interval

THIS_RUN, PAPER = "this run", "paper"

# Queries per category in the release (../shared/references/conflicts.md):
# the n of the paper's rows.
RELEASE_COUNTS = {
    "no_conflict": 161,
    "complementary": 115,
    "conflicting_opinions": 115,
    "outdated": 62,
    "misinformation": 5,
}

# Paper §4: "Answer Recall ... applies to instances in the 'No conflict',
# 'Freshness', and 'Misinformation' categories, which comprise 228 queries".
RECALL_CATEGORIES = ("no_conflict", "outdated", "misinformation")

# Paper Table 7: queries per data source of the release. The release's
# ``source`` strings were not observed (../shared/references/conflicts.md), so
# a source is matched to these names case- and punctuation-blind
# ("situatedqa_geo" is "SituatedQA Geo").
PAPER_TABLE7 = {"ConflictingQA": 162, "SituatedQA Geo": 105, "SituatedQA Temp": 41, "FreshQA": 95, "QACC": 55}

# Paper Table 4: type-prediction accuracy (%).
PAPER_TABLE4 = {
    "Gemma 3 27B": 53.9,
    "Qwen 2.5 72B": 53.1,
    "GPT-4o": 59.2,
    "Gemini 2.0 Flash": 60.5,
    "Gemini 2.5 Flash": 65.3,
}

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

COUNT_SCHEMA = {
    "table2": pa.schema([("category", pa.string()), ("n", pa.int64()), ("n_paper", pa.int64())]),
    "table7": pa.schema(
        [("source", pa.string()), ("released_as", pa.string()), ("n", pa.int64()), ("n_paper", pa.int64())]
    ),
}
TABLE4_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("model", pa.string()),
        ("readout", pa.string()),
        ("n", pa.int64()),
        ("accuracy", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("n_unparseable", pa.int64()),
    ]
)
TABLE5_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("model", pa.string()),
        ("strategy", pa.string()),
        ("n", pa.int64()),
        ("n_unparseable", pa.int64()),
        ("n_behaviour", pa.int64()),
        ("expected_behaviour", pa.float64()),
        ("eb_low", pa.float64()),
        ("eb_high", pa.float64()),
        ("n_recall", pa.int64()),
        ("answer_recall", pa.float64()),
        ("ar_low", pa.float64()),
        ("ar_high", pa.float64()),
        ("n_grounding", pa.int64()),
        ("grounding", pa.float64()),
        ("gr_low", pa.float64()),
        ("gr_high", pa.float64()),
        ("n_recall_all_gold", pa.int64()),
        ("answer_recall_all_gold", pa.float64()),
        ("ag_low", pa.float64()),
        ("ag_high", pa.float64()),
        ("n_sentences", pa.int64()),
        ("cited_sentences", pa.float64()),
        ("n_invalid_citations", pa.int64()),
        ("n_unreadable", pa.int64()),
    ]
)
TABLE6_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("model", pa.string()),
        ("category", pa.string()),
        *[
            field
            for s in STRATEGIES
            for field in (
                (s, pa.float64()),
                (f"{s}_low", pa.float64()),
                (f"{s}_high", pa.float64()),
                (f"n_{s}", pa.int64()),
                (f"n_unparseable_{s}", pa.int64()),
            )
        ],
    ]
)

# How each table's estimates show (conflictlab.report.tables.write_markdown_and_csv).
TABLE4_DISPLAY = {"intervals": {"accuracy": ("ci_low", "ci_high")}, "scale": {"accuracy": 100}}
TABLE5_DISPLAY = {
    "intervals": {
        "expected_behaviour": ("eb_low", "eb_high"),
        "answer_recall": ("ar_low", "ar_high"),
        "grounding": ("gr_low", "gr_high"),
        "answer_recall_all_gold": ("ag_low", "ag_high"),
    },
    "scale": dict.fromkeys(
        ("expected_behaviour", "answer_recall", "grounding", "answer_recall_all_gold", "cited_sentences"), 100
    ),
}
TABLE6_DISPLAY = {
    "intervals": {s: (f"{s}_low", f"{s}_high") for s in STRATEGIES},
    "scale": dict.fromkeys(STRATEGIES, 100),
}


def _none_if_nan(values: tuple[float, ...]) -> tuple[float | None, ...]:
    return tuple(None if math.isnan(v) else v for v in values)


def scored_outcome(verdict: str) -> pl.Expr:
    """A Task 2 row's 0/1 outcome under ``verdict`` (``adheres`` or
    ``answer_recall``), as an expression over ``judging.JUDGED_SCHEMA``
    columns: 0 when no response was generated or readable, the judge's
    verdict otherwise, null (left out) when the judge's was unreadable."""
    return pl.when(pl.col("status") != "ok").then(0).otherwise(pl.col(verdict)).cast(pl.Int64)


def _rate_of(count: int, n: int) -> tuple[float | None, float | None, float | None]:
    """(share, Wilson low, high) of ``count`` successes in ``n``; None where undefined."""
    return _none_if_nan(proportion_interval(count, n))


def _outcome_counts(verdict: str, where: pl.Expr, name: str) -> list[pl.Expr]:
    """``n_<name>`` (rows under ``where`` with an outcome) and ``k_<name>`` (their successes)."""
    outcome = scored_outcome(verdict).filter(where)
    return [outcome.count().alias(f"n_{name}"), outcome.sum().alias(f"k_{name}")]


# The columns of ``judging.JUDGED_SCHEMA`` that Table 5 reads.
JUDGED_COLUMNS = [
    "model",
    "strategy",
    "conflict_type",
    "status",
    "adheres",
    "answer_recall",
    "recall_status",
    "behaviour_status",
    "grounding",
    "grounding_status",
    "n_sentences",
    "n_cited_sentences",
    "n_invalid_citations",
]


def _frame(table: pa.Table, columns: list[str]) -> pl.DataFrame:
    """``columns`` of ``table`` as a polars frame; a table without rows may
    lack them (the paper's rows alone: ``table4(pa.table({}))``)."""
    return (
        pl.from_arrow(table.select(columns)) if table.num_rows else pl.DataFrame(schema=dict.fromkeys(columns, pl.Null))
    )


def _value_counts(column: pa.ChunkedArray) -> dict[str, int]:
    counts = pc.value_counts(column)
    return dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))


def table2(queries: pa.Table) -> pa.Table:
    """Queries per category (``QUERY_SCHEMA`` rows), in the taxonomy's order,
    beside the paper's Table 2 (= the release's counts), then the total."""
    read = _value_counts(queries.column("conflict_type"))
    rows = [
        {"category": TAXONOMY[name].label, "n": read.get(name, 0), "n_paper": RELEASE_COUNTS[name]} for name in ORDER
    ]
    rows.append({"category": "Total", "n": sum(read.values()), "n_paper": sum(RELEASE_COUNTS.values())})
    return pa.Table.from_pylist(rows, schema=COUNT_SCHEMA["table2"])


def _source_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


def table7(queries: pa.Table) -> pa.Table:
    """Queries per data source (``QUERY_SCHEMA`` rows) beside the paper's
    Table 7: the paper's five sources first (its names; ``released_as``: the
    strings read that matched, n = 0 where none did), then any other source
    read (no paper count), then the total."""
    read = _value_counts(queries.column("source"))
    by_key: dict[str, list[str]] = {}
    for source in sorted(read):
        by_key.setdefault(_source_key(source), []).append(source)
    rows = []
    for name, count in PAPER_TABLE7.items():
        matched = by_key.pop(_source_key(name), [])
        rows.append(
            {"source": name, "released_as": ", ".join(matched), "n": sum(read[m] for m in matched), "n_paper": count}
        )
    for matched in by_key.values():
        rows.append(
            {
                "source": matched[0],
                "released_as": ", ".join(matched),
                "n": sum(read[m] for m in matched),
                "n_paper": None,
            }
        )
    rows.append({"source": "Total", "released_as": "", "n": sum(read.values()), "n_paper": sum(PAPER_TABLE7.values())})
    return pa.Table.from_pylist(rows, schema=COUNT_SCHEMA["table7"])


def table4(predictions: pa.Table) -> pa.Table:
    """Type-prediction accuracy per (model, read-out) over every query
    (unparseable and too-long counted wrong), then the paper's rows."""
    counts = (
        _frame(predictions, ["model", "readout", "predicted", "conflict_type"])
        .group_by("model", "readout", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            (pl.col("predicted") == pl.col("conflict_type")).fill_null(False).sum().alias("right"),
            pl.col("predicted").is_null().sum().alias("n_unparseable"),
        )
    )
    rows = []
    for model, readout, n, right, unparseable in counts.iter_rows():  # one per (model, read-out)
        accuracy, low, high = _rate_of(right, n)
        rows.append(
            {
                "source": THIS_RUN,
                "model": model,
                "readout": readout,
                "n": n,
                "accuracy": accuracy,
                "ci_low": low,
                "ci_high": high,
                "n_unparseable": unparseable,
            }
        )
    n_release = sum(RELEASE_COUNTS.values())
    rows += [
        {"source": PAPER, "model": model, "n": n_release, "accuracy": value / 100}
        for model, value in PAPER_TABLE4.items()
    ]
    return pa.Table.from_pylist(rows, schema=TABLE4_SCHEMA)


def table5(judged: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Per (model, strategy): expected behaviour and answer recall (Wilson),
    grounding (bootstrap), the wider recall, citation quality and counts,
    then the paper's rows."""
    gold = pl.col("recall_status") != "no_gold"
    unreadable = pl.any_horizontal(
        pl.col(c) == "unreadable" for c in ("behaviour_status", "recall_status", "grounding_status")
    )
    groups = (
        _frame(judged, JUDGED_COLUMNS)
        .group_by("model", "strategy", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            (pl.col("status") != "ok").sum().alias("n_unparseable"),
            *_outcome_counts("adheres", pl.lit(True), "behaviour"),
            *_outcome_counts("answer_recall", gold & pl.col("conflict_type").is_in(list(RECALL_CATEGORIES)), "recall"),
            *_outcome_counts("answer_recall", gold, "recall_all_gold"),
            pl.col("grounding")
            .drop_nulls()
            .alias("grounding"),  # in the table's order: the bootstrap's draws depend on it
            pl.col("n_sentences").cast(pl.Int64).sum().alias("n_sentences"),
            pl.col("n_cited_sentences").cast(pl.Int64).sum().alias("n_cited_sentences"),
            pl.col("n_invalid_citations").cast(pl.Int64).sum().alias("n_invalid_citations"),
            unreadable.sum().alias("n_unreadable"),
        )
    )
    rows = []
    for g in groups.iter_rows(named=True):  # one per (model, strategy)
        grounding = np.array(g["grounding"], dtype=float)
        rows.append(
            {
                "source": THIS_RUN,
                "model": g["model"],
                "strategy": g["strategy"],
                "n": g["n"],
                "n_unparseable": g["n_unparseable"],
                "n_behaviour": g["n_behaviour"],
                **dict(zip(("expected_behaviour", "eb_low", "eb_high"), _rate_of(g["k_behaviour"], g["n_behaviour"]))),
                "n_recall": g["n_recall"],
                **dict(zip(("answer_recall", "ar_low", "ar_high"), _rate_of(g["k_recall"], g["n_recall"]))),
                "n_grounding": grounding.size,
                **dict(
                    zip(
                        ("grounding", "gr_low", "gr_high"),
                        _none_if_nan(metrics.estimate(metrics.get("grounding"), grounding, bounds=(0.0, 1.0))),
                    )
                ),
                "n_recall_all_gold": g["n_recall_all_gold"],
                **dict(
                    zip(
                        ("answer_recall_all_gold", "ag_low", "ag_high"),
                        _rate_of(g["k_recall_all_gold"], g["n_recall_all_gold"]),
                    )
                ),
                "n_sentences": g["n_sentences"],
                "cited_sentences": g["n_cited_sentences"] / g["n_sentences"] if g["n_sentences"] else None,
                "n_invalid_citations": g["n_invalid_citations"],
                "n_unreadable": g["n_unreadable"],
            }
        )
    n_release, n_recall = sum(RELEASE_COUNTS.values()), sum(RELEASE_COUNTS[c] for c in RECALL_CATEGORIES)
    for model, values in PAPER_TABLE5.items():
        for strategy, (eb, recall, grounding) in zip(STRATEGIES, values):
            rows.append(
                {
                    "source": PAPER,
                    "model": model,
                    "strategy": strategy,
                    "n": n_release,
                    "n_behaviour": n_release,
                    "n_recall": n_recall,
                    "expected_behaviour": eb / 100,
                    "answer_recall": recall / 100,
                    "grounding": grounding / 100,
                }
            )
    return pa.Table.from_pylist(rows, schema=TABLE5_SCHEMA)


def table6(judged: pa.Table) -> pa.Table:
    """Expected behaviour per model, category group and strategy (the
    paper's Table 6 groups; Wilson intervals, unparseable counted wrong),
    with counts, then the paper's rows."""
    counts = {
        (model, strategy, category): (n, k, unparseable)
        for model, strategy, category, n, k, unparseable in _frame(
            judged, ["model", "strategy", "conflict_type", "status", "adheres"]
        )
        .group_by("model", "strategy", "conflict_type", maintain_order=True)  # models in order of first appearance
        .agg(
            *_outcome_counts("adheres", pl.lit(True), "behaviour"),
            (pl.col("status") != "ok").sum().alias("n_unparseable"),
        )
        .iter_rows()  # one per (model, strategy, category): at most a few hundred
    }
    rows = []
    for model in dict.fromkeys(model for model, _, _ in counts):
        for group, members in CATEGORY_GROUPS.items():
            row = {"source": THIS_RUN, "model": model, "category": group}
            for strategy in STRATEGIES:
                n, k, unparseable = (
                    sum(counts.get((model, strategy, c), (0, 0, 0))[i] for c in members) for i in range(3)
                )
                row.update(zip((strategy, f"{strategy}_low", f"{strategy}_high"), _rate_of(k, n)))
                row[f"n_{strategy}"], row[f"n_unparseable_{strategy}"] = n, unparseable
            rows.append(row)
    for group, values in PAPER_TABLE6.items():
        n = sum(RELEASE_COUNTS[c] for c in CATEGORY_GROUPS[group])
        rows.append(
            {
                "source": PAPER,
                "model": PAPER_TABLE6_MODEL,
                "category": group,
                **{s: v / 100 for s, v in zip(STRATEGIES, values)},
                **{f"n_{s}": n for s in STRATEGIES},
            }
        )
    return pa.Table.from_pylist(rows, schema=TABLE6_SCHEMA)


def confusion_figure(predictions: pa.Table):
    """One panel per (model, read-out): gold category (rows) against the
    predicted one (columns, the last one unparseable), counts in the cells."""
    from conflictlab.report.figures import panel_grid

    counts = (
        pl.from_arrow(predictions.select(["model", "readout", "conflict_type", "predicted"]))
        .group_by("model", "readout", "conflict_type", "predicted", maintain_order=True)
        .len()
    )
    runs = list(dict.fromkeys(counts.select("model", "readout").iter_rows()))  # one per (model, read-out)
    fig, axes = panel_grid(len(runs), width=4.6, height=4.0, ncols=2, sharey=False)
    labels = [TAXONOMY[name].label for name in ORDER]
    for ax, (model, readout) in zip(axes, runs):
        mine = counts.filter((pl.col("model") == model) & (pl.col("readout") == readout))
        matrix = confusion_matrix(mine["predicted"].to_list(), mine["conflict_type"].to_list(), mine["len"].to_list())
        ax.imshow(matrix, cmap="Blues", vmin=0)
        for (i, j), count in np.ndenumerate(matrix):
            ax.text(
                j,
                i,
                str(count),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if count > matrix.max() / 2 else "black",
            )
        ax.set_xticks(range(len(labels) + 1), [*labels, "unparseable"], rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_xlabel("predicted type")
        ax.set_ylabel("gold type")
        ax.set_title(f"{model} ({readout})", fontsize=9)
    return fig

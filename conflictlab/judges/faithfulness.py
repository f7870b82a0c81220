"""Faithfulness as RAGAS defines it (the paper's Fth columns).

Per response: the judge breaks the response into statements (step 1), then
judges each statement against all evidence pieces joined by newlines
(step 2, verdict 0/1). Faithfulness = statements with verdict 1 / statements;
NaN, never 0, when step 1 yields no statement (``no_statements``), when its
reply is not the required JSON (``unparseable``, counted; RAGAS retries a
parse failure once, which under greedy decoding would repeat the same reply,
so no retry here), or when the response was never generated.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from conflictlab.judges.prompts.ragas import statements_request, verdict_request
from conflictlab.judges.requests import JudgeRequest, read_choices, read_json_object
from conflictlab.stats import bootstrap_mean_ci

STATUSES = ("ok", "no_statements", "unparseable", "not_generated")

FAITHFULNESS_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # one of STATUSES
        pa.field("statements", pa.list_(pa.string())),
        pa.field("verdicts", pa.list_(pa.int8())),
        pa.field("faithfulness", pa.float64()),  # null unless status ok
    ]
)


def parse_statements(reply: str) -> list[str] | None:
    """The statements of a step-1 reply ``{"statements": [str, ...]}``, else None."""
    value = read_json_object(reply)
    if value is None or not isinstance(value.get("statements"), list):
        return None
    statements = value["statements"]
    if not all(isinstance(s, str) for s in statements):
        return None
    return [s.strip() for s in statements if s.strip()]


def faithfulness_score(verdicts: Sequence[int]) -> float:
    """Supported statements / statements; NaN for no verdict."""
    return float(sum(verdicts)) / len(verdicts) if verdicts else math.nan


def faithfulness_rows(
    groups: Sequence[tuple[str, Sequence[dict], Sequence[dict]]],
    ask: Callable[[list[JudgeRequest]], list[str]],
    *,
    judge: str,
    max_statement_tokens: int,
) -> pa.Table:
    """One :data:`FAITHFULNESS_SCHEMA` row per sample of every group.

    ``groups``: (responding model, samples, its responses) triples; every
    sample must have a response. ``ask`` maps requests to replies (a judge
    behind its cache); it is called twice, once per RAGAS step, with the
    requests of every group at once, so the judge batches across them.
    """
    items = []  # (model, sample, response)
    for model, samples, responses in groups:
        by_id = {r["sample_id"]: r for r in responses}
        missing = [s["sample_id"] for s in samples if s["sample_id"] not in by_id]
        if missing:
            raise ValueError(f"responses of {model}: no row for samples {missing[:5]}")
        items += [(model, s, by_id[s["sample_id"]]) for s in samples]
    generated = [i for i, (_, _, response) in enumerate(items) if response["status"] == "ok"]
    step1 = ask([statements_request(items[i][1]["question"], items[i][2]["response"] or "", max_new_tokens=max_statement_tokens) for i in generated])
    statements = {i: parse_statements(reply) for i, reply in zip(generated, step1)}
    judged = [i for i in generated if statements[i]]
    requests = [verdict_request("\n".join(items[i][1]["evidence"]), statements[i]) for i in judged]
    # An unreadable verdict (a guided reply cut short) makes the response's
    # score unknown rather than lower.
    verdicts = {i: [-1 if c is None else int(c) for c in read_choices(r, reply)] for i, r, reply in zip(judged, requests, ask(requests))}
    rows = []
    for i, (model, sample, _) in enumerate(items):
        found = statements.get(i)
        if i not in statements:
            status, score = "not_generated", None
        elif found is None or -1 in verdicts.get(i, []):
            status, score = "unparseable", None
        elif not found:
            status, score = "no_statements", None
        else:
            status, score = "ok", faithfulness_score(verdicts[i])
        rows.append(
            {
                "sample_id": sample["sample_id"],
                "model": model,
                "conflict_type": sample["conflict_type"],
                "judge": judge,
                "status": status,
                "statements": found,
                "verdicts": verdicts.get(i, []) if found is not None else None,
                "faithfulness": score,
            }
        )
    return pa.Table.from_pylist(rows, schema=FAITHFULNESS_SCHEMA)


FAITHFULNESS_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("n_scored", pa.int64(), nullable=False),
        pa.field("nan_rate", pa.float64(), nullable=False),  # share of samples without a score
        pa.field("faithfulness", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
    ]
    + [pa.field(f"n_{status}", pa.int64(), nullable=False) for status in STATUSES if status != "ok"]
)


def summarize_faithfulness(rows: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Mean Faithfulness per (model, type) over the scored samples, with its
    bootstrap 95% CI, the share of samples left NaN and why."""
    data = rows.to_pylist()
    out = []
    for model, conflict_type in dict.fromkeys((r["model"], r["conflict_type"]) for r in data):
        members = [r for r in data if r["model"] == model and r["conflict_type"] == conflict_type]
        scores = np.array([r["faithfulness"] for r in members if r["faithfulness"] is not None], dtype=float)
        mean, low, high = bootstrap_mean_ci(scores, n_resamples=n_resamples, seed=seed)
        out.append(
            {
                "model": model,
                "conflict_type": conflict_type,
                "n": len(members),
                "n_scored": int(scores.size),
                "nan_rate": 1.0 - scores.size / len(members),
                "faithfulness": None if scores.size == 0 else mean,
                "ci_low": None if scores.size == 0 else low,
                "ci_high": None if scores.size == 0 else high,
                **{f"n_{s}": sum(r["status"] == s for r in members) for s in STATUSES if s != "ok"},
            }
        )
    return pa.Table.from_pylist(out, schema=FAITHFULNESS_SUMMARY_SCHEMA)


def first_by_id(samples: Sequence[dict], n: int | None) -> list[dict]:
    """The ``n`` samples with the smallest ids (all for None): a fixed subset,
    the same for a base generator and its steered reruns where they overlap."""
    return list(samples) if n is None else sorted(samples, key=lambda s: s["sample_id"])[:n]


def faithfulness_notes(results: pa.Table) -> list[str]:
    """One line per (model, method) of a steering results table: the
    Faithfulness cells' NaN rates (responses without a score), by type."""
    notes = []
    rows = [r for r in results.to_pylist() if r["metric"] == "faithfulness"]
    for model, variant in dict.fromkeys((r["model"], r["variant"]) for r in rows):
        cells = [f"{r['conflict_type']} {100 * r['nan_rate']:.0f}%" for r in rows if (r["model"], r["variant"]) == (model, variant)]
        notes.append(f"{model}@{variant}, Fth NaN rate (no statement or unparseable): " + ", ".join(cells))
    return notes


def join_faithfulness(table: pa.Table, summary: pa.Table, *, where=lambda row: True) -> pa.Table:
    """``table`` with Faithfulness columns (value, CI, NaN rate) from
    ``summary`` matched on (model, conflict_type), filled where ``where(row)``."""
    found = {(r["model"], r["conflict_type"]): r for r in summary.to_pylist()}
    rows = table.to_pylist()
    matches = [found.get((r["model"], r["conflict_type"])) if where(r) else None for r in rows]
    for name, key in (("faithfulness", "faithfulness"), ("fth_ci_low", "ci_low"), ("fth_ci_high", "ci_high"), ("fth_nan_rate", "nan_rate")):
        table = table.append_column(name, pa.array([None if m is None else m[key] for m in matches], pa.float64()))
    return table

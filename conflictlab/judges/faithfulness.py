"""Faithfulness as RAGAS defines it (the paper's Fth columns, §3.1 footnote 3).

Per response: the judge breaks the response into statements (step 1), then
judges each statement against all evidence pieces joined by newlines
(step 2, verdict 0/1). Faithfulness = statements with verdict 1 / statements.

A response gets NaN, never 0, with its reason (``status``):

* ``not_generated``: the generator produced no response;
* ``empty_response``: the response is empty or blank (not sent to the judge);
* ``refusal``: the response is a short refusal (:func:`is_refusal`; not sent
  to the judge): it makes no claim about the evidence, and a judged refusal
  ("the assistant cannot answer") would score 0 as if it were a hallucination;
* ``truncated``: the step-1 reply is cut short (its JSON ends before it
  closes: the ``max_statement_tokens`` budget ran out, or the judge stopped
  early), counted apart so that a too small budget shows in the tables;
* ``unparseable``: a step-1 reply that is not the required JSON, or an
  unreadable verdict (RAGAS retries a parse failure once, which under greedy
  decoding would repeat the same reply, so no retry here);
* ``no_statements``: step 1 yields no statement.

Deviations from RAGAS (:data:`DEVIATIONS`, for captions): the verdicts are
closed 0/1 choices without RAGAS's free-text ``reason`` before each one; the
verdict prompt shows one of RAGAS's two worked examples (the John example;
the photosynthesis one is dropped, :mod:`conflictlab.judges.prompts.ragas`);
refusals and empty responses are NaN without asking the judge.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab import metrics
from conflictlab.io import group_in_order
from conflictlab.judges.prompts.ragas import statements_request, verdict_request
from conflictlab.judges.requests import JudgeRequest, read_choices, read_json_object
from conflictlab.stats import proportion_interval

STATUSES = ("ok", "no_statements", "unparseable", "truncated", "refusal", "empty_response", "not_generated")
NAN_STATUSES = tuple(s for s in STATUSES if s != "ok")

DEVIATIONS = (
    "Deviations from RAGAS: verdicts are closed 0/1 choices without RAGAS's free-text reason; the verdict prompt "
    "shows one of RAGAS's two worked examples (the photosynthesis example is dropped); refusals and empty "
    "responses are NaN (not sent to the judge), as are truncated statement replies (counted in n_truncated)."
)

# Openers of a refusal, matched at the start of the response (case-insensitive).
REFUSAL_OPENER = re.compile(
    r"""^\W*(
        (i\s*(am|'m|’m)\s+)?(really\s+|very\s+|so\s+)?sorry\b
      | i\s+apologi[sz]e\b
      | my\s+apologies\b
      | i\s*(can\s*not|can't|can’t|won't|won’t|will\s+not)
        \s+(help|assist|answer|provide|comply|fulfil|fulfill|do\s+that|determine|tell|say)\b
      | i\s*(am|'m|’m)\s+(not\s+able|unable)\s+to\b
      | i\s*(do\s+not|don't|don’t)\s+know\b
      | as\s+an?\s+(ai|language\s+model|assistant)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
REFUSAL_MAX_WORDS = 40  # a longer response that opens with an apology goes on to claim something: judge it


def is_refusal(response: str) -> bool:
    """True for a short response (≤ :data:`REFUSAL_MAX_WORDS` words) that
    opens with a refusal ("I'm sorry, …", "I cannot answer …", "As an AI
    …"). Lexical and deliberately narrow: a hedge that goes on to discuss the
    evidence is judged as any response."""
    return len(response.split()) <= REFUSAL_MAX_WORDS and REFUSAL_OPENER.match(response) is not None


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


def cut_short(reply: str) -> bool:
    """True when ``reply`` is JSON that ends before it closes (a string or a
    bracket left open): what a reply cut at its token budget looks like."""
    if not reply or not reply.strip():
        return False
    try:
        json.loads(reply)
    except json.JSONDecodeError as error:
        return error.pos >= len(reply.rstrip()) or error.msg.startswith("Unterminated string")
    return False


def faithfulness_score(verdicts: Sequence[int]) -> float:
    """Supported statements / statements; NaN for no verdict."""
    return float(sum(verdicts)) / len(verdicts) if verdicts else math.nan


def _unjudged_status(response: dict) -> str | None:
    """Why a response is not sent to the judge, or None when it is."""
    if response["status"] != "ok":
        return "not_generated"
    text = response["response"] or ""
    if not text.strip():
        return "empty_response"
    return "refusal" if is_refusal(text) else None


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
    unjudged = {i: _unjudged_status(response) for i, (_, _, response) in enumerate(items)}
    asked = [i for i in range(len(items)) if unjudged[i] is None]
    step1 = ask(
        [
            statements_request(items[i][1]["question"], items[i][2]["response"], max_new_tokens=max_statement_tokens)
            for i in asked
        ]
    )
    replies = dict(zip(asked, step1))
    statements = {i: parse_statements(replies[i]) for i in asked}
    judged = [i for i in asked if statements[i]]
    requests = [verdict_request("\n".join(items[i][1]["evidence"]), statements[i]) for i in judged]
    # An unreadable verdict (a guided reply cut short) makes the response's
    # score unknown rather than lower.
    verdicts = {
        i: [-1 if c is None else int(c) for c in read_choices(r, reply)]
        for i, r, reply in zip(judged, requests, ask(requests))
    }
    rows = []
    for i, (model, sample, _) in enumerate(items):
        found = statements.get(i)
        if unjudged[i] is not None:
            status, score = unjudged[i], None
        elif found is None:
            status, score = ("truncated" if cut_short(replies[i]) else "unparseable"), None
        elif -1 in verdicts.get(i, []):
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
        pa.field("n", pa.int64(), nullable=False),  # samples judged (or left NaN)
        pa.field("n_scored", pa.int64(), nullable=False),  # the n of the Faithfulness mean
        pa.field("faithfulness", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("nan_rate", pa.float64(), nullable=False),  # share of the n samples without a score
        pa.field("nan_ci_low", pa.float64()),  # Wilson 95%
        pa.field("nan_ci_high", pa.float64()),
    ]
    + [pa.field(f"n_{status}", pa.int64(), nullable=False) for status in NAN_STATUSES]
)


def summarize_faithfulness(rows: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Per (model, type): mean Faithfulness over the scored samples with its
    registry's 95% interval (:func:`conflictlab.metrics.estimate`: the betting
    interval over [0, 1], none below its minimum n), the share of samples left NaN with its
    Clopper-Pearson 95% CI, and the count of each reason. ``n_resamples``/``seed`` unused."""
    faithfulness = pc.fill_null(rows.column("faithfulness"), math.nan).to_numpy(zero_copy_only=False)
    scored = pc.is_valid(rows.column("faithfulness")).to_numpy(zero_copy_only=False)
    status = rows.column("status").to_numpy(zero_copy_only=False)
    keys = rows.select(["model", "conflict_type"]).append_column(
        "row", pa.array(np.arange(rows.num_rows, dtype=np.int64))
    )
    groups = group_in_order(keys, ["model", "conflict_type"], [("row", "list")])
    out = []
    for model, conflict_type, members in zip(
        *(groups.column(name).to_pylist() for name in ("model", "conflict_type", "row_list"))
    ):  # per (model, type)
        members = np.asarray(members, dtype=np.int64)
        scores = faithfulness[members[scored[members]]]
        mean, low, high = metrics.estimate(metrics.get("faithfulness"), scores, bounds=(0.0, 1.0))
        nan_rate, nan_low, nan_high = proportion_interval(members.size - int(scores.size), members.size)
        row = {
            "model": model,
            "conflict_type": conflict_type,
            "n": members.size,
            "n_scored": int(scores.size),
            "faithfulness": mean,
            "ci_low": low,
            "ci_high": high,
            "nan_rate": nan_rate,
            "nan_ci_low": nan_low,
            "nan_ci_high": nan_high,
            **{f"n_{s}": int((status[members] == s).sum()) for s in NAN_STATUSES},
        }
        out.append({k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()})
    return pa.Table.from_pylist(out, schema=FAITHFULNESS_SUMMARY_SCHEMA)


SUMMARY_DISPLAY = {
    "intervals": {"faithfulness": ("ci_low", "ci_high"), "nan_rate": ("nan_ci_low", "nan_ci_high")},
    "scale": {"faithfulness": 100, "nan_rate": 100},
}  # keyword arguments of conflictlab.report.tables.markdown for a summary table


def first_by_id(samples: Sequence[dict], n: int | None) -> list[dict]:
    """The ``n`` samples with the smallest ids (all for None): a fixed subset,
    the same for a base generator and its steered reruns where they overlap."""
    return list(samples) if n is None else sorted(samples, key=lambda s: s["sample_id"])[:n]


def faithfulness_notes(results: pa.Table) -> list[str]:
    """One line per (model, method) of a steering results table: the
    Faithfulness cells' NaN rates (responses without a score), by type."""
    notes = []
    faithfulness = results.filter(pc.equal(results.column("metric"), "faithfulness"))
    rows = faithfulness.select(
        ["model", "variant", "conflict_type", "nan_rate"]
    ).to_pylist()  # one per (model, method, type)
    for model, variant in dict.fromkeys((r["model"], r["variant"]) for r in rows):
        cells = [
            f"{r['conflict_type']} {100 * r['nan_rate']:.0f}%"
            for r in rows
            if (r["model"], r["variant"]) == (model, variant)
        ]
        notes.append(
            f"{model}@{variant}, Fth NaN rate (not generated, empty, refusal, truncated, unparseable or no statement): "
            + ", ".join(cells)
        )
    return notes


JOINED_COLUMNS = (
    ("faithfulness", "faithfulness", pa.float64()),
    ("fth_ci_low", "ci_low", pa.float64()),
    ("fth_ci_high", "ci_high", pa.float64()),
    ("fth_n", "n_scored", pa.int64()),  # the Faithfulness mean's own n (not the table's accuracy n)
    ("fth_nan_rate", "nan_rate", pa.float64()),
)


def join_faithfulness(table: pa.Table, summary: pa.Table, *, where=lambda row: True) -> pa.Table:
    """``table`` with the Faithfulness columns of :data:`JOINED_COLUMNS`
    (value, CI, its n, NaN rate) from ``summary`` matched on (model,
    conflict_type), filled where ``where(row)``."""
    found = {(r["model"], r["conflict_type"]): r for r in summary.to_pylist()}
    rows = table.to_pylist()
    matches = [found.get((r["model"], r["conflict_type"])) if where(r) else None for r in rows]
    for name, key, kind in JOINED_COLUMNS:
        table = table.append_column(name, pa.array([None if m is None else m[key] for m in matches], kind))
    return table

"""CONFLICTS response quality: three judges and the citation count, per response.

* Expected behaviour (binary, against the query's *gold* category's template,
  :func:`conflictlab.conflicts.judge_prompts.behaviour_request`).
* Answer recall (binary; only queries with a released gold answer).
* Factual grounding (FACTS labels per sentence,
  :func:`conflictlab.judges.prompts.facts.grounding_request`, with every
  search result rendered as the Task 2 prompt shows it as the context):
  supported / sentences whose label is not ``no_rad``; NaN with status
  ``no_factual_sentences`` when every sentence is ``no_rad``.
* Citation quality, no judge: sentences with a citation and citations of a
  result that does not exist (:func:`conflictlab.conflicts.citations.citation_quality`).

A response that was not generated (any status but ``ok``) gets no verdicts
and keeps its status (the tables score it as wrong:
:func:`conflictlab.conflicts.tables.scored_outcome`); a closed verdict a
guided judge left unreadable is null and counted (``*_status``), never 0.
Answer recall is asked of every query with a gold answer; the tables take
the paper's subset of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pyarrow as pa

from conflictlab.conflicts.citations import citation_quality, sentences
from conflictlab.conflicts.judge_prompts import behaviour_request, recall_request
from conflictlab.conflicts.prompts import render_results
from conflictlab.judges.prompts.facts import grounding_request
from conflictlab.judges.requests import JudgeRequest, read_choices

JUDGED_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.int64(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # gold short name
        pa.field("judge", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # the response's status (responses.RESPONSE_SCHEMA)
        pa.field("adheres", pa.int8()),  # expected behaviour: 1 yes, 0 no, null not judged or unreadable
        pa.field("behaviour_status", pa.string(), nullable=False),  # ok | unreadable | not_generated
        pa.field("answer_recall", pa.int8()),  # null: no gold answer, not generated or unreadable
        pa.field("recall_status", pa.string(), nullable=False),  # ok | unreadable | no_gold | not_generated
        pa.field("sentence_labels", pa.list_(pa.string())),  # FACTS label per sentence (null where unreadable)
        pa.field("grounding", pa.float64()),  # supported / factual sentences
        pa.field(
            "grounding_status", pa.string(), nullable=False
        ),  # ok | unreadable | no_sentences | no_factual_sentences | not_generated
        pa.field("n_sentences", pa.int32(), nullable=False),
        pa.field("n_cited_sentences", pa.int32(), nullable=False),
        pa.field("n_citations", pa.int32(), nullable=False),
        pa.field("n_invalid_citations", pa.int32(), nullable=False),
    ]
)


def grounding_score(labels: Sequence[str]) -> tuple[float, str]:
    """(supported / sentences not labelled ``no_rad``, status) for one response's labels."""
    if not labels:
        return math.nan, "no_sentences"
    if any(label is None for label in labels):
        return math.nan, "unreadable"
    factual = [label for label in labels if label != "no_rad"]
    if not factual:
        return math.nan, "no_factual_sentences"
    return sum(label == "supported" for label in factual) / len(factual), "ok"


def response_grounding_request(question: str, results: Sequence[dict], response: str) -> JudgeRequest:
    """FACTS labels for every sentence of ``response``, the search results
    rendered as the Task 2 prompt shows them as the context (``response``
    must have at least one sentence)."""
    return grounding_request(question, render_results(results), response, sentences(response))


def _binary(choice: str | None) -> tuple[int | None, str]:
    return (None, "unreadable") if choice is None else (int(choice == "yes"), "ok")


def unjudged_row(query: dict, response: dict, *, judge: str) -> tuple[dict, list[str]]:
    """(a :data:`JUDGED_SCHEMA` row of one response before any verdict, the
    response's sentences): its citation quality counted, every verdict null
    and every status ``not_generated`` (``no_gold`` for recall without a gold
    answer). Also the start of a planted row (:mod:`conflictlab.conflicts.synthetic`)."""
    text = response["response"]
    generated = response["status"] == "ok"
    parts = sentences(text) if generated else []
    quality = citation_quality(text, query["n_results"]) if generated else None
    row = {
        "query_id": query["query_id"],
        "model": response["model"],
        "strategy": response["strategy"],
        "conflict_type": query["conflict_type"],
        "judge": judge,
        "status": response["status"],
        "adheres": None,
        "behaviour_status": "not_generated",
        "answer_recall": None,
        "recall_status": "not_generated" if query["correct_answer"] else "no_gold",
        "sentence_labels": None,
        "grounding": None,
        "grounding_status": "not_generated",
        "n_sentences": len(parts),
        "n_cited_sentences": quality.n_cited if quality else 0,
        "n_citations": quality.n_citations if quality else 0,
        "n_invalid_citations": quality.n_invalid if quality else 0,
    }
    return row, parts


def judge_responses(
    queries: Sequence[dict], responses: Sequence[dict], ask: Callable[[list[JudgeRequest]], list[str]], *, judge: str
) -> pa.Table:
    """One :data:`JUDGED_SCHEMA` row per response; every judge request goes
    through ``ask`` in one call."""
    by_id = {query["query_id"]: query for query in queries}
    rows, requests, slots = [], [], []  # slots: (row, kind, request index)
    for response in responses:
        query = by_id[response["query_id"]]
        text = response["response"]
        row, parts = unjudged_row(query, response, judge=judge)
        rows.append(row)
        if response["status"] != "ok":
            continue
        slots.append((row, "behaviour", len(requests)))
        requests.append(behaviour_request(query["conflict_type"], query["question"], text))
        if query["correct_answer"]:
            slots.append((row, "recall", len(requests)))
            requests.append(recall_request(query["question"], query["correct_answer"], text))
        if parts:
            slots.append((row, "grounding", len(requests)))
            requests.append(response_grounding_request(query["question"], query["search_results"], text))
        else:
            row["grounding_status"] = "no_sentences"
    replies = ask(requests) if requests else []
    for row, kind, index in slots:
        choices = read_choices(requests[index], replies[index])
        if kind == "behaviour":
            row["adheres"], row["behaviour_status"] = _binary(choices[0])
        elif kind == "recall":
            row["answer_recall"], row["recall_status"] = _binary(choices[0])
        else:
            row["sentence_labels"] = choices
            score, row["grounding_status"] = grounding_score(choices)
            row["grounding"] = None if math.isnan(score) else score
    return pa.Table.from_pylist(rows, schema=JUDGED_SCHEMA)

"""Synthetic CONFLICTS queries in the release's ``conflicts.jsonl`` layout
(``conflictlab.conflicts.dataset``), at the release's size times a fraction,
for rehearsing the paper configuration's scale (README, Paper scale). Fake
content (``conflictlab.fake_text``); shapes from the paper and what loaders of
the release report (``../shared/references/conflicts.md``): 458 queries,
161/115/115/62/5 per category (``RELEASE_COUNTS``), sources in Table 7's
proportions (``PAPER_TABLE7``), 5-20 search results per query (median 9, mean
9.2), each with a ~20-word snippet, a 512-token segment (median ~300 words),
dates in the release's forms (ISO, written, ``NA``, relative); a gold answer
for every No conflict, Outdated and Misinformation query and for 7 of 115
Complementary and 2 of 115 Conflicting-opinions ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.conflicts.dataset import CATEGORIES, ORDER
from conflictlab.conflicts.judging import JUDGED_SCHEMA, grounding_score, unjudged_row
from conflictlab.conflicts.prompts import STRATEGIES, TAXONOMY, task2_messages
from conflictlab.conflicts.responses import RESPONSE_SCHEMA, TYPE_PREDICTION_SCHEMA, given_type, task2_row
from conflictlab.conflicts.tables import PAPER_TABLE7, RECALL_CATEGORIES, RELEASE_COUNTS
from conflictlab.fake_text import Words, chosen, scaled

RESULTS_PER_QUERY = (5, 20, (9.2, 2.5))  # fewest, most, (mean, sd) of a normal rounded and clipped: median 9
# Words per field (mean, standard deviation); short_text at most ~512 tokens.
WORDS = {
    "question": (9, 3),
    "title": (8, 3),
    "snippet": (20, 6),
    "short_text": (300, 60),
    "response_str": (12, 8),
    "answer": (4, 2),
}
# The share of queries with a gold answer outside RECALL_CATEGORIES (7/115, 2/115).
GOLD_SHARE = {"complementary": 7 / 115, "conflicting_opinions": 2 / 115}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _date(words: Words) -> str:
    rng = words.rng
    year, month, day = rng.randint(2005, 2024), rng.randint(1, 12), rng.randint(1, 28)
    form = rng.random()
    if form < 0.45:
        return f"{year}-{month:02d}-{day:02d}"
    if form < 0.7:
        return "NA"
    if form < 0.9:
        return f"{_MONTHS[month - 1]} {day}, {year}"
    return f"{rng.randint(1, 30)} days ago"


def search_result(words: Words) -> dict:
    return {
        "title": words.sized(WORDS["title"]),
        "url": f"https://{words.text(1)}.example.org/{words.text(1)}",
        "snippet": words.sized(WORDS["snippet"]),
        "date": _date(words),
        "short_text": min(words.sized(WORDS["short_text"], 20), words.text(380), key=len),
        "response_str": words.sized(WORDS["response_str"]) if words.rng.random() < 0.7 else "",
    }


def write_release(path: str | Path, fraction: float, seed: int = 0) -> dict[str, int]:
    """``conflicts.jsonl`` at ``path``: ``scaled(RELEASE_COUNTS, fraction)``
    queries per category under their released names, in a seeded order.
    Returns the queries per category (short names)."""
    words = Words(seed)
    rng = words.rng
    categories = [c for c, n in RELEASE_COUNTS.items() for _ in range(scaled(n, fraction))]
    rng.shuffle(categories)
    sources = [s for s, n in PAPER_TABLE7.items() for _ in range(n)]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for category in categories:
            gold = category in RECALL_CATEGORIES or rng.random() < GOLD_SHARE[category]
            fewest, most, mean_sd = RESULTS_PER_QUERY
            record = {
                "source": rng.choice(sources),
                "question": words.sized(WORDS["question"], 3) + "?",
                "conflict_type": CATEGORIES[category][0],
                "correct_answer": words.sized(WORDS["answer"]) if gold else "",
                "search_results": [search_result(words) for _ in range(min(most, words.count(mean_sd, fewest)))],
            }
            out.write(json.dumps(record) + "\n")
    return {c: categories.count(c) for c in RELEASE_COUNTS}


# --------------------------------------------------------------------------
# Planted model outputs (rules conflicts_respond, conflicts_methods_respond
# and conflicts_judge) with a known truth, so conflicts_tables and the
# methods table's CONFLICTS cells run at full size without a model
# (benchmarks/scale.py run --planted). Read-out, decoding and judge say
# "planted", so a planted table is never mistaken for a model's.

PLANTED = "planted"
# A wrong planted type is the next category in ORDER: a known confusion matrix.
WRONG_TYPE = {name: ORDER[(k + 1) % len(ORDER)] for k, name in enumerate(ORDER)}
_SENTENCE_WORDS = (10, 3)


def _share(share: float | Mapping[str, float], key: str) -> float:
    return share if isinstance(share, (int, float)) else share[key]


def plant_types(
    queries: pa.Table, *, model: str, accuracy: float | Mapping[str, float] = 0.6, seed: int = 0
) -> pa.Table:
    """One :data:`conflictlab.conflicts.responses.TYPE_PREDICTION_SCHEMA` row
    per query (Task 1), in ``queries``' order, read-out ``planted``, every
    status ``ok``.

    Planted truth: of each gold category's n queries exactly
    ``round(share * n)``, chosen with ``seed``, predict their gold type
    (``share``: ``accuracy`` or ``accuracy[category]``); the others predict
    :data:`WRONG_TYPE` of it, so none is unparseable.
    """
    rng = np.random.default_rng(seed)
    gold = np.array(queries.column("conflict_type").to_pylist(), dtype=object)
    right = np.zeros(gold.size, dtype=bool)
    for name in ORDER:
        rows = np.flatnonzero(gold == name)
        right[rows] = chosen(rows.size, _share(accuracy, name), rng)
    predicted = np.where(right, gold, [WRONG_TYPE[name] for name in gold])
    n = queries.num_rows
    return pa.table(
        {
            "query_id": queries.column("query_id"),
            "model": pa.repeat(pa.scalar(model), n),
            "conflict_type": queries.column("conflict_type"),
            "predicted": pa.array(predicted.tolist(), pa.string()),
            "readout": pa.repeat(pa.scalar(PLANTED), n),
            "scores": pa.nulls(n, pa.list_(pa.float64())),
            "reply": pa.array([f" {TAXONOMY[name].label}" for name in predicted], pa.string()),
            "reasoning": pa.nulls(n, pa.string()),
            "status": pa.repeat(pa.scalar("ok"), n),
        },
        schema=TYPE_PREDICTION_SCHEMA,
    )


def _cited_text(words: Words, n_sentences: int, n_results: int) -> str:
    """``n_sentences`` capitalised pseudo-sentences, each closed by one valid
    citation ``[k]`` (1 <= k <= n_results), which
    :func:`conflictlab.conflicts.citations.sentences` splits back into exactly
    ``n_sentences``."""
    parts = []
    for _ in range(n_sentences):
        text = words.sized(_SENTENCE_WORDS, 3)
        parts.append(f"{text[0].upper()}{text[1:]} [{words.rng.randint(1, n_results)}].")
    return " ".join(parts)


def plant_responses(
    queries: pa.Table,
    types: pa.Table | None,
    *,
    model: str,
    strategies: Sequence[str] = STRATEGIES,
    n_sentences: int = 4,
    seed: int = 0,
) -> pa.Table:
    """One :data:`conflictlab.conflicts.responses.RESPONSE_SCHEMA` row per
    (strategy, query), strategies outer as :func:`~conflictlab.conflicts.responses.respond`
    orders them (Task 2; ``types``: :func:`plant_types`' table of the same
    ``model``, needed by Pipeline and Taxonomy-aware; None for the
    methods' Vanilla runs).

    Planted truth: every response has ``n_sentences`` sentences with one
    valid citation each (every sentence cited, no invalid citation); the
    type a prompt names is what :func:`~conflictlab.conflicts.responses.given_type`
    gives (a Pipeline query without a predicted type has status
    ``no_predicted_type`` and no response, as in the real rule); a
    Taxonomy-aware reply names the planted Task 1 type in the form
    :func:`~conflictlab.conflicts.prompts.parse_taxonomy_aware` reads. Prompt
    lengths are the Task 2 prompts' whitespace words.
    """
    words = Words(seed)
    predicted = {} if types is None else dict(zip(*(types.column(c).to_pylist() for c in ("query_id", "predicted"))))
    decoding = json.dumps({PLANTED: True})
    rows = []
    for strategy in strategies:
        for query in queries.select(
            ["query_id", "conflict_type", "question", "search_results", "n_results"]
        ).to_pylist():
            named = given_type(strategy, query, predicted)
            row = task2_row(query["query_id"], model, strategy, named, "no_predicted_type", decoding)
            rows.append(row)
            if strategy == "pipeline" and named is None:
                continue
            messages = task2_messages(strategy, query["question"], query["search_results"], conflict_type=named)
            text = _cited_text(words, n_sentences, query["n_results"])
            row.update(
                n_prompt_tokens=sum(len(m["content"].split()) for m in messages),
                reply=text,
                response=text,
                finish_reason="stop",
                status="ok",
            )
            if strategy == "taxonomy_aware":
                # the reply after the prefilled "Type:", as the real rule keeps it
                row["predicted_type"] = predicted.get(query["query_id"])
                label = TAXONOMY[row["predicted_type"]].label if row["predicted_type"] else words.text(2)
                row["reply"] = f" {label}\nExplanation: {words.sized(_SENTENCE_WORDS, 3)}.\nResponse: {text}"
    return pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA)


def plant_judged(
    queries: pa.Table,
    responses: pa.Table,
    *,
    judge: str,
    adherence: float | Mapping[str, float] = 0.7,
    recall: float = 0.8,
    grounding: float = 0.75,
    seed: int = 0,
) -> pa.Table:
    """One :data:`conflictlab.conflicts.judging.JUDGED_SCHEMA` row per
    response, in ``responses``' order (rule ``conflicts_judge``); citation
    counts are the real ones of each response
    (:func:`~conflictlab.conflicts.judging.unjudged_row`), and a response
    not generated keeps its status and no verdict, as the real rule does.

    Planted truth, among the generated responses of each (model, strategy,
    gold category) cell of n: exactly ``round(share * n)`` adhere
    (``share``: ``adherence`` or ``adherence[strategy]``) and, of its m
    queries with a gold answer, exactly ``round(recall * m)`` recall it;
    each response with k sentences has ``round(grounding * k)`` of them
    ``supported``, the others ``unsupported`` (so its grounding is that share
    of k: exactly ``grounding`` for :func:`plant_responses`' 4 sentences at
    0.75). All chosen with ``seed``.
    """
    rng = np.random.default_rng(seed)
    by_id = {
        query["query_id"]: query
        for query in queries.select(["query_id", "conflict_type", "correct_answer", "n_results"]).to_pylist()
    }
    rows, cells = [], {}
    for response in responses.select(["query_id", "model", "strategy", "response", "status"]).to_pylist():
        query = by_id[response["query_id"]]
        row, parts = unjudged_row(query, response, judge=judge)
        rows.append(row)
        if response["status"] == "ok":
            cells.setdefault((row["model"], row["strategy"], row["conflict_type"]), []).append(row)
            labels = np.where(chosen(len(parts), grounding, rng), "supported", "unsupported").tolist()
            score, row["grounding_status"] = grounding_score(labels)
            row["sentence_labels"], row["grounding"] = labels or None, None if math.isnan(score) else score
    for (_, strategy, _), members in cells.items():
        for row, adheres in zip(members, chosen(len(members), _share(adherence, strategy), rng)):
            row["adheres"], row["behaviour_status"] = int(adheres), "ok"
        gold = [row for row in members if row["recall_status"] != "no_gold"]
        for row, recalled in zip(gold, chosen(len(gold), recall, rng)):
            row["answer_recall"], row["recall_status"] = int(recalled), "ok"
    return pa.Table.from_pylist(rows, schema=JUDGED_SCHEMA)

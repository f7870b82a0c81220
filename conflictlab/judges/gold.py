"""How good is the judge? Its agreement with a team-written gold set.

``resources/judges/gold.jsonl``, one JSON object a line, three kinds:

* ``verdict``: ``context``, ``statement``, ``verdict`` (0/1) — the RAGAS
  verdict step;
* ``rating``: ``question``, ``evidence`` (list), ``response``, ``ratings``
  (1–5 per piece) — the evidence-contribution rating;
* ``equivalence``: ``question``, ``references`` (list), ``candidate``,
  ``equivalent`` (yes/no) — the semantic answer match;
* ``conflicts_behaviour``: ``category`` (a CONFLICTS short name),
  ``question``, ``response``, ``adheres`` (yes/no) — CONFLICTS' expected
  behaviour judge;
* ``conflicts_recall``: ``question``, ``answer``, ``response``,
  ``includes_answer`` (yes/no) — CONFLICTS' answer recall judge (a hedge
  that includes the answer is yes, paper §4);
* ``conflicts_grounding``: ``question``, ``results`` (search results as the
  release holds them: ``url``, ``title``, ``snippet``, ``date``,
  ``short_text``), ``response``, ``labels`` (one FACTS label per sentence of
  :func:`conflictlab.conflicts.citations.sentences`) — CONFLICTS' grounding judge.

Every item has an ``id``. The items are written so that the answer is clear
to a careful reader; the judge's agreement on them bounds what its verdicts
in the tables are worth. Every item is invented here (no dataset query: a
judge measured on the data it judges, or on its own few-shot examples, is
measured on what it has seen).
"""

from __future__ import annotations

import json
import math
import os
from typing import Callable

import numpy as np
import pyarrow as pa

from conflictlab.conflicts.citations import sentences
from conflictlab.conflicts.judging import response_grounding_request
from conflictlab.conflicts.prompts import TAXONOMY
from conflictlab.judges.prompts.conflicts import behaviour_request, recall_request
from conflictlab.judges.prompts.equivalence import equivalence_request
from conflictlab.judges.prompts.facts import LABELS as FACTS_LABELS
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.prompts.ragas import verdict_request
from conflictlab.judges.ratings import cohen_kappa, rating_balance
from conflictlab.judges.requests import JudgeRequest, read_choices

FIELDS = {
    "verdict": {"context": str, "statement": str, "verdict": int},
    "rating": {"question": str, "evidence": list, "response": str, "ratings": list},
    "equivalence": {"question": str, "references": list, "candidate": str, "equivalent": str},
    "conflicts_behaviour": {"category": str, "question": str, "response": str, "adheres": str},
    "conflicts_recall": {"question": str, "answer": str, "response": str, "includes_answer": str},
    "conflicts_grounding": {"question": str, "results": list, "response": str, "labels": list},
}
YES_NO_FIELDS = {"equivalence": "equivalent", "conflicts_behaviour": "adheres", "conflicts_recall": "includes_answer"}
RESULT_FIELDS = ("url", "title", "snippet", "date", "short_text")


def read_gold(path: str | os.PathLike) -> list[dict]:
    """The gold items, each checked; a bad line is an error naming the file, line and field."""
    items, seen = [], set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                item = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{where}: not JSON ({err.msg})") from None
            kind = item.get("kind")
            if kind not in FIELDS:
                raise ValueError(f"{where}: field 'kind' is {kind!r}, expected one of {sorted(FIELDS)}")
            for field, kind_type in {"id": str, **FIELDS[kind]}.items():
                if not isinstance(item.get(field), kind_type):
                    raise ValueError(f"{where}: field {field!r} missing or not {kind_type.__name__}")
            if item["id"] in seen:
                raise ValueError(f"{where}: field 'id' {item['id']!r} repeats an earlier item")
            seen.add(item["id"])
            if kind == "verdict" and item["verdict"] not in (0, 1):
                raise ValueError(f"{where}: field 'verdict' must be 0 or 1")
            if kind == "rating" and (len(item["ratings"]) != len(item["evidence"]) or len(item["evidence"]) < 2 or not all(r in (1, 2, 3, 4, 5) for r in item["ratings"])):
                raise ValueError(f"{where}: field 'ratings' must hold one 1-5 rating per evidence piece (at least two pieces)")
            if kind in YES_NO_FIELDS and item[YES_NO_FIELDS[kind]] not in ("yes", "no"):
                raise ValueError(f"{where}: field {YES_NO_FIELDS[kind]!r} must be 'yes' or 'no'")
            if kind == "conflicts_behaviour" and item["category"] not in TAXONOMY:
                raise ValueError(f"{where}: field 'category' must be one of {sorted(TAXONOMY)}")
            if kind == "conflicts_grounding":
                _check_grounding(item, where)
            items.append(item)
    return items


def _check_grounding(item: dict, where: str) -> None:
    results = item["results"]
    if not results or not all(isinstance(r, dict) and all(isinstance(r.get(f), str) for f in RESULT_FIELDS) for r in results):
        raise ValueError(f"{where}: field 'results' must hold search results with string fields {', '.join(RESULT_FIELDS)}")
    n = len(sentences(item["response"]))
    if len(item["labels"]) != n or not all(label in FACTS_LABELS for label in item["labels"]):
        raise ValueError(f"{where}: field 'labels' must hold one of {', '.join(FACTS_LABELS)} per sentence of the response ({n})")


def _request(item: dict) -> JudgeRequest:
    kind = item["kind"]
    if kind == "verdict":
        return verdict_request(item["context"], [item["statement"]])
    if kind == "rating":
        return rating_request(item["question"], item["evidence"], item["response"])
    if kind == "conflicts_behaviour":
        return behaviour_request(item["category"], item["question"], item["response"])
    if kind == "conflicts_recall":
        return recall_request(item["question"], item["answer"], item["response"])
    if kind == "conflicts_grounding":
        return response_grounding_request(item["question"], item["results"], item["response"])
    return equivalence_request(item["question"], item["references"], item["candidate"])


def _gold_labels(item: dict) -> list[str]:
    kind = item["kind"]
    if kind == "verdict":
        return [str(item["verdict"])]
    if kind == "rating":
        return [str(r) for r in item["ratings"]]
    if kind == "conflicts_grounding":
        return list(item["labels"])
    return [item[YES_NO_FIELDS[kind]]]


GOLD_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("gold", pa.list_(pa.string()), nullable=False),
        pa.field("judged", pa.list_(pa.string())),  # null entries: unparseable replies
    ]
)


def judge_gold(items: list[dict], ask: Callable[[list[JudgeRequest]], list[str]], *, judge: str) -> pa.Table:
    """The judge's label for every gold label (one per verdict, rated piece, equivalence, CONFLICTS
    behaviour or recall verdict, or grounded sentence)."""
    requests = [_request(item) for item in items]
    rows = [
        {"id": item["id"], "kind": item["kind"], "judge": judge, "gold": _gold_labels(item), "judged": read_choices(request, reply)}
        for item, request, reply in zip(items, requests, ask(requests))
    ]
    return pa.Table.from_pylist(rows, schema=GOLD_SCHEMA)


GOLD_AGREEMENT_SCHEMA = pa.schema(
    [
        pa.field("judge", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("n_items", pa.int64(), nullable=False),
        pa.field("n_labels", pa.int64(), nullable=False),
        pa.field("n_unparseable", pa.int64(), nullable=False),
        pa.field("agreement", pa.float64()),  # share of labels equal to gold
        pa.field("kappa", pa.float64()),
        pa.field("balance_mae", pa.float64()),  # ratings: mean |judge Balance - gold Balance|, percent points
    ]
)


def gold_agreement(judged: pa.Table) -> pa.Table:
    """Per kind: exact agreement, Cohen's κ with the gold labels, and for
    ratings the mean absolute Balance difference."""
    data = judged.to_pylist()
    rows = []
    for kind in dict.fromkeys(r["kind"] for r in data):
        members = [r for r in data if r["kind"] == kind]
        pairs = [(g, j) for r in members for g, j in zip(r["gold"], r["judged"])]
        readable = [(g, j) for g, j in pairs if j is not None]
        kappa = cohen_kappa([g for g, _ in readable], [j for _, j in readable]) if readable else float("nan")
        mae = None
        if kind == "rating":
            gaps = [
                abs(rating_balance([int(x) for x in r["judged"]])[1] - rating_balance([int(x) for x in r["gold"]])[1])
                for r in members
                if None not in r["judged"]
            ]
            gaps = [g for g in gaps if not math.isnan(g)]  # every rating 1 on either side: Balance undefined
            mae = 100 * float(np.mean(gaps)) if gaps else None
        rows.append(
            {
                "judge": members[0]["judge"],
                "kind": kind,
                "n_items": len(members),
                "n_labels": len(pairs),
                "n_unparseable": len(pairs) - len(readable),
                "agreement": sum(g == j for g, j in readable) / len(pairs) if pairs else None,
                "kappa": None if np.isnan(kappa) else kappa,
                "balance_mae": mae,
            }
        )
    return pa.Table.from_pylist(rows, schema=GOLD_AGREEMENT_SCHEMA)

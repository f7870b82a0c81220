"""How good is the judge? Its agreement with a team-written gold set.

``resources/judges/gold.jsonl``, one JSON object a line, three kinds:

* ``verdict``: ``context``, ``statement``, ``verdict`` (0/1) — the RAGAS
  verdict step;
* ``rating``: ``question``, ``evidence`` (list), ``response``, ``ratings``
  (1–5 per piece) — the evidence-contribution rating;
* ``equivalence``: ``question``, ``references`` (list), ``candidate``,
  ``equivalent`` (yes/no) — the semantic answer match.

Every item has an ``id``. The items are written so that the answer is clear
to a careful reader; the judge's agreement on them bounds what its verdicts
in the tables are worth.
"""

from __future__ import annotations

import json
import os
from typing import Callable

import numpy as np
import pyarrow as pa

from conflictlab.judges.prompts.equivalence import equivalence_request
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.prompts.ragas import verdict_request
from conflictlab.judges.ratings import cohen_kappa, rating_balance
from conflictlab.judges.requests import JudgeRequest, read_choices

FIELDS = {
    "verdict": {"context": str, "statement": str, "verdict": int},
    "rating": {"question": str, "evidence": list, "response": str, "ratings": list},
    "equivalence": {"question": str, "references": list, "candidate": str, "equivalent": str},
}


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
            if kind == "equivalence" and item["equivalent"] not in ("yes", "no"):
                raise ValueError(f"{where}: field 'equivalent' must be 'yes' or 'no'")
            items.append(item)
    return items


def _request(item: dict) -> JudgeRequest:
    if item["kind"] == "verdict":
        return verdict_request(item["context"], [item["statement"]])
    if item["kind"] == "rating":
        return rating_request(item["question"], item["evidence"], item["response"])
    return equivalence_request(item["question"], item["references"], item["candidate"])


def _gold_labels(item: dict) -> list[str]:
    if item["kind"] == "verdict":
        return [str(item["verdict"])]
    if item["kind"] == "rating":
        return [str(r) for r in item["ratings"]]
    return [item["equivalent"]]


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
    """The judge's label for every gold label (one per verdict, rated piece, or equivalence)."""
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

"""How good is the judge? Its agreement with a team-written gold set.

``resources/judges/gold.jsonl``, one JSON object a line, each with an ``id``
and a ``kind``. What an item of a kind holds, which judge request measures
it and what its gold labels are is a :class:`GoldKind`; the generic judges'
kinds are here (:data:`GOLD_KINDS`):

* ``verdict``: ``context``, ``statement``, ``verdict`` (0/1) — the RAGAS
  verdict step;
* ``rating``: ``question``, ``evidence`` (list), ``response``, ``ratings``
  (1–5 per piece) — the evidence-contribution rating;
* ``equivalence``: ``question``, ``references`` (list), ``candidate``,
  ``equivalent`` (yes/no) — the semantic answer match.

A benchmark's own judges bring their kinds from its package (CONFLICTS':
:data:`conflictlab.conflicts.judging.GOLD_KINDS`); the caller passes every
kind the file holds.

The items are written so that the answer is clear to a careful reader; the
judge's agreement on them bounds what its verdicts in the tables are worth.
Every item is invented here (no dataset query: a judge measured on the data
it judges, or on its own few-shot examples, is measured on what it has seen).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab import metrics
from conflictlab.judges.prompts.equivalence import equivalence_request
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.prompts.ragas import verdict_request
from conflictlab.judges.ratings import cohen_kappa_interval, rating_balance
from conflictlab.judges.requests import JudgeRequest, read_choices
from conflictlab.stats import cluster_bootstrap_weights, percentile_interval, proportion_interval


def _no_error(item: dict) -> str | None:
    return None


@dataclass(frozen=True)
class GoldKind:
    """One kind of gold item."""

    fields: Mapping[str, type]  # the fields an item holds besides id and kind, and their JSON types
    request: Callable[[dict], JudgeRequest]  # the very request the tables send for such an input
    labels: Callable[[dict], list[str]]  # the gold labels, one per choice the reply holds
    error: Callable[[dict], str | None] = _no_error  # what else is wrong with an item ("field 'x' must ..."), or None


def yes_no_error(item: dict, field: str) -> str | None:
    """The error of a yes/no gold ``field`` holding something else."""
    return None if item[field] in ("yes", "no") else f"field {field!r} must be 'yes' or 'no'"


def _rating_error(item: dict) -> str | None:
    ratings, evidence = item["ratings"], item["evidence"]
    if len(ratings) != len(evidence) or len(evidence) < 2 or not all(r in (1, 2, 3, 4, 5) for r in ratings):
        return "field 'ratings' must hold one 1-5 rating per evidence piece (at least two pieces)"
    return None


GOLD_KINDS: dict[str, GoldKind] = {
    "verdict": GoldKind(
        fields={"context": str, "statement": str, "verdict": int},
        request=lambda item: verdict_request(item["context"], [item["statement"]]),
        labels=lambda item: [str(item["verdict"])],
        error=lambda item: None if item["verdict"] in (0, 1) else "field 'verdict' must be 0 or 1",
    ),
    "rating": GoldKind(
        fields={"question": str, "evidence": list, "response": str, "ratings": list},
        request=lambda item: rating_request(item["question"], item["evidence"], item["response"]),
        labels=lambda item: [str(r) for r in item["ratings"]],
        error=_rating_error,
    ),
    "equivalence": GoldKind(
        fields={"question": str, "references": list, "candidate": str, "equivalent": str},
        request=lambda item: equivalence_request(item["question"], item["references"], item["candidate"]),
        labels=lambda item: [item["equivalent"]],
        error=lambda item: yes_no_error(item, "equivalent"),
    ),
}


def _field_error(item, kinds: Mapping[str, GoldKind] | None) -> str | None:
    if not isinstance(item, dict):
        return "not a JSON object"
    kind = item.get("kind")
    if kinds is not None and kind not in kinds:
        return f"field 'kind' is {kind!r}, expected one of {sorted(kinds)}"
    fields = {"id": str, "kind": str} if kinds is None else {"id": str, **kinds[kind].fields}
    for field, field_type in fields.items():
        if not isinstance(item.get(field), field_type):
            return f"field {field!r} missing or not {field_type.__name__}"
    return None


def read_gold(path: str | os.PathLike, kinds: Mapping[str, GoldKind] | None = None) -> list[dict]:
    """The gold items in file order, each checked; a bad line is an error
    naming the file, line and field.

    Every item needs a string ``id`` no earlier item has and a string
    ``kind``. With ``kinds``, every item is checked against its kind, and a
    kind not among them is an error; without, only that envelope is read
    (for a caller that picks the items of a kind it knows;
    :func:`judge_gold` checks what it judges).
    """
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
            error = _field_error(item, kinds)
            if error is None and item["id"] in seen:
                error = f"field 'id' {item['id']!r} repeats an earlier item"
            if error is None and kinds is not None:
                error = kinds[item["kind"]].error(item)
            if error is not None:
                raise ValueError(f"{where}: {error}")
            seen.add(item["id"])
            items.append(item)
    return items


GOLD_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("gold", pa.list_(pa.string()), nullable=False),
        pa.field("judged", pa.list_(pa.string())),  # null entries: unparseable replies
    ]
)


def judge_gold(
    items: list[dict], ask: Callable[[list[JudgeRequest]], list[str]], *, judge: str, kinds: Mapping[str, GoldKind]
) -> pa.Table:
    """The judge's label for every gold label (one per verdict, rated piece,
    yes/no answer or grounded sentence), every item asked with its kind's
    request (``kinds`` as for :func:`read_gold`)."""
    for item in items:
        error = _field_error(item, kinds) or kinds[item["kind"]].error(item)
        if error is not None:
            raise ValueError(f"gold item {item.get('id')!r}: {error}")
    requests = [kinds[item["kind"]].request(item) for item in items]
    rows = [
        {
            "id": item["id"],
            "kind": item["kind"],
            "judge": judge,
            "gold": kinds[item["kind"]].labels(item),
            "judged": read_choices(request, reply),
        }
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
        pa.field("agreement_low", pa.float64()),  # 95%: Clopper-Pearson (one label an item), else an item bootstrap
        pa.field("agreement_high", pa.float64()),
        pa.field("kappa", pa.float64()),
        pa.field("kappa_low", pa.float64()),  # 95% bootstrap over items; none below MIN_N_KAPPA items
        pa.field("kappa_high", pa.float64()),
        pa.field("balance_mae", pa.float64()),  # ratings: mean |judge Balance - gold Balance|, percent points
    ]
)


# The fewest items whose bootstrap gives agreement over several labels an item
# an interval (the metric registry's gold_agreement): at 30 items it covers 92.6% in tests/test_coverage.py.
MIN_N_ITEMS_BOOTSTRAP = metrics.get("gold_agreement").min_n_interval


def gold_agreement(judged: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Per kind: exact agreement (share of labels equal to gold, an
    unreadable label counting as disagreement) with its 95% interval, Cohen's
    κ over the readable labels with its 95% bootstrap interval
    (:func:`conflictlab.judges.ratings.cohen_kappa_interval`), and for ratings
    the mean absolute Balance difference.

    The unit is the item: where each item has one label, agreement gets the
    Clopper-Pearson interval; where items have several (a rating per
    evidence piece), labels of one item are not independent, so the
    interval resamples items (:func:`conflictlab.stats.cluster_bootstrap_weights`,
    none below :data:`MIN_N_ITEMS_BOOTSTRAP` items) and so does κ's.
    """
    rows = []
    for kind in pc.unique(judged.column("kind")).to_pylist():  # one per kind, in order of first appearance
        members = judged.filter(pc.equal(judged.column("kind"), kind))
        gold, answer, items = _paired_labels(members)
        readable = pc.is_valid(answer)
        n_labels, n_readable = len(gold), pc.sum(readable).as_py() or 0
        agrees = pc.fill_null(pc.equal(gold, answer), False).to_numpy(zero_copy_only=False).astype(float)
        if n_labels == members.num_rows:  # one label an item
            agreement = proportion_interval(int(agrees.sum()), n_labels)
        elif members.num_rows >= MIN_N_ITEMS_BOOTSTRAP:
            counts = cluster_bootstrap_weights(items.tolist(), n_resamples=n_resamples, seed=seed)  # (R, n_labels)
            agreement = (float(agrees.mean()), *percentile_interval((counts @ agrees) / counts.sum(axis=1)))
        else:
            agreement = (float(agrees.mean()) if n_labels else math.nan, math.nan, math.nan)
        kept = readable.to_numpy(zero_copy_only=False)
        kappa = (
            cohen_kappa_interval(
                gold.filter(readable).to_pylist(),
                answer.filter(readable).to_pylist(),
                clusters=items[kept].tolist(),
                n_resamples=n_resamples,
                seed=seed,
            )
            if n_readable
            else (math.nan,) * 3
        )
        mae = None
        if kind == "rating":
            # items the judge rated in full: per item, its Balance against the gold ratings' (tens of items)
            complete = members.filter(pa.array(_unparseable_per_item(members.column("judged")) == 0))
            gaps = [
                abs(
                    rating_balance([int(x) for x in judge_ratings])[1]
                    - rating_balance([int(x) for x in gold_ratings])[1]
                )
                for judge_ratings, gold_ratings in zip(
                    complete.column("judged").to_pylist(), complete.column("gold").to_pylist()
                )
            ]
            gaps = [g for g in gaps if not math.isnan(g)]  # every rating 1 on either side: Balance undefined
            mae = 100 * float(np.mean(gaps)) if gaps else None
        rows.append(
            {
                "judge": members.column("judge")[0].as_py(),
                "kind": kind,
                "n_items": members.num_rows,
                "n_labels": n_labels,
                "n_unparseable": n_labels - n_readable,
                **{
                    name: None if math.isnan(v) else v
                    for name, v in zip(("agreement", "agreement_low", "agreement_high"), agreement)
                },
                **{name: None if math.isnan(v) else v for name, v in zip(("kappa", "kappa_low", "kappa_high"), kappa)},
                "balance_mae": mae,
            }
        )
    return pa.Table.from_pylist(rows, schema=GOLD_AGREEMENT_SCHEMA)


def _unparseable_per_item(lists: pa.ChunkedArray) -> np.ndarray:
    """Per list of labels, its null entries. Shape (len(lists),)."""
    lists = lists.combine_chunks()
    parents = pc.list_parent_indices(lists).to_numpy()
    return np.bincount(parents[pc.is_null(pc.list_flatten(lists)).to_numpy(zero_copy_only=False)], minlength=len(lists))


def _paired_labels(judged: pa.Table) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """(gold, judge) labels, one pair per label, item by item: each item's
    first min(len(gold), len(judged)) labels of each; and each pair's item
    (row of ``judged``), shape (pairs,)."""
    gold, answer = (judged.column(name).combine_chunks() for name in ("gold", "judged"))
    kept = np.minimum(
        pc.list_value_length(gold).to_numpy(zero_copy_only=False),
        pc.list_value_length(answer).to_numpy(zero_copy_only=False),
    )

    def first_kept(lists: pa.Array) -> pa.Array:
        parents = pc.list_parent_indices(lists).to_numpy()
        starts = (
            lists.offsets.to_numpy()[:-1] - lists.offsets[0].as_py()
        )  # each list's first entry in the flattened values
        position = np.arange(parents.size) - starts[parents]
        return pc.list_flatten(lists).filter(pa.array(position < kept[parents]))

    items = np.repeat(np.arange(len(kept)), kept)
    return first_kept(gold), first_kept(answer), items

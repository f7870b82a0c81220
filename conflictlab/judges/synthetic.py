"""Planted judge labels (rules ``judge_gold`` and ``judge_ratings``) with
known agreement and Balance, so ``judge_tables`` can run at full size without
a judge model (README, Paper scale; ``benchmarks/scale.py run --planted``).

Both planters answer through the writers' own code (:func:`~conflictlab.judges.gold.judge_gold`,
:func:`~conflictlab.judges.ratings.judge_rating_rows`) with a planted ``ask``
that replies with the closed JSON a judge would send, so the replies are
parsed, and the rows built, exactly as a real judge's are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from conflictlab.fake_text import chosen
from conflictlab.judges.gold import GoldKind, judge_gold
from conflictlab.judges.ratings import judge_rating_rows
from conflictlab.judges.requests import JudgeRequest

PLANTED = "planted"
# Ratings of a sample the planted judge rates evenly (every piece "Moderate":
# judge Balance 0) and of one it puts on its first piece (5, then 1s:
# all the mass on one piece, judge Balance 1).
EVEN_RATING = "3"
ONE_PIECE_RATINGS = ("5", "1")


def _reply(request: JudgeRequest, labels: Sequence[str]) -> str:
    """The closed reply giving ``labels`` to ``request``'s fields, in order."""
    return json.dumps(dict(zip(request.fields, labels)))


def _wrong(request: JudgeRequest, label: str) -> str:
    """Another of the request's options than ``label``: the next one, cyclically."""
    options = list(request.options)
    return options[(options.index(label) + 1) % len(options)]


def plant_gold(
    items: list[dict],
    *,
    kinds: Mapping[str, GoldKind],
    judge: str = PLANTED,
    agreement: float | Mapping[str, float] = 0.8,
    seed: int = 0,
) -> pa.Table:
    """Rule judge_gold's table (``GOLD_SCHEMA``, one row per item in order)
    for the gold ``items`` (as :func:`~conflictlab.judges.gold.read_gold`
    gives them), every label judged.

    Planted truth: of each kind's gold labels (all its items' labels, flattened
    in item order), exactly ``round(share · n_labels)`` chosen with ``seed``
    are judged as the gold says and the rest as the request's next option,
    ``share`` being ``agreement`` or ``agreement[kind]``: so
    :func:`~conflictlab.judges.gold.gold_agreement`'s agreement per kind is
    that count over n_labels, none unparseable, and kappa is 1 at share 1.
    """
    rng = np.random.default_rng(seed)
    labels = [kinds[item["kind"]].labels(item) for item in items]
    agrees: dict[int, list[bool]] = {}
    for kind in dict.fromkeys(item["kind"] for item in items):  # kinds in order of first appearance
        members = [k for k, item in enumerate(items) if item["kind"] == kind]
        share = agreement if isinstance(agreement, float) else agreement[kind]
        mask = chosen(sum(len(labels[k]) for k in members), share, rng)
        offsets = np.cumsum([0, *(len(labels[k]) for k in members)])
        agrees.update({k: mask[start:end].tolist() for k, start, end in zip(members, offsets, offsets[1:])})

    def ask(requests: list[JudgeRequest]) -> list[str]:
        return [
            _reply(request, [gold if agree else _wrong(request, gold) for gold, agree in zip(labels[k], agrees[k])])
            for k, request in enumerate(requests)
        ]

    return judge_gold(items, ask, judge=judge, kinds=kinds)


def plant_ratings(
    samples: pa.Table, responses: pa.Table, *, model: str, judge: str = PLANTED, even_share: float = 0.5, seed: int = 0
) -> tuple[pa.Table, np.ndarray]:
    """Rule judge_ratings' rows of one (model, type) (``RATING_SCHEMA``, one
    per sample in order) and the planted mask (shape (samples,)): True where
    the sample is rated evenly.

    Planted truth: of the samples whose response is ``ok``, exactly
    ``round(even_share · n_ok)`` (chosen with ``seed``) have every piece
    rated :data:`EVEN_RATING` (judge Balance 0) and the rest their first
    piece 5 and the others 1 (judge Balance 1); the others are
    ``not_generated``. So Table 7's judge Balance of any set of those samples
    is 100 × its share of one-piece samples.
    """
    ok = np.array([status == "ok" for status in responses.column("status").to_pylist()], dtype=bool)
    by_id = dict(zip(responses.column("sample_id").to_pylist(), ok))
    rated = np.array([by_id.get(sid, False) for sid in samples.column("sample_id").to_pylist()], dtype=bool)
    even = np.zeros(samples.num_rows, dtype=bool)
    even[rated] = chosen(int(rated.sum()), even_share, np.random.default_rng(seed))
    replies = iter(even[rated].tolist())

    def ask(requests: list[JudgeRequest]) -> list[str]:
        # one request per rated sample, in sample order (judge_rating_rows)
        return [
            _reply(
                request,
                [EVEN_RATING] * len(request.fields)
                if next(replies)
                else [ONE_PIECE_RATINGS[0], *[ONE_PIECE_RATINGS[1]] * (len(request.fields) - 1)],
            )
            for request in requests
        ]

    return judge_rating_rows(samples.to_pylist(), responses.to_pylist(), ask, model=model, judge=judge), even

"""Coalition values of ContextConflict responses: each (sample, response)
becomes a :class:`conflictlab.lm.subsets.Game` under the scorer rendering of
:mod:`conflictlab.contextconflict.prompts` and is scored by the model layer's
prefix-sharing :class:`~conflictlab.lm.subsets.SubsetScorer`.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.prompts import SCORER_EVIDENCE, SCORER_QUESTION, SCORER_SUFFIX
from conflictlab.contextconflict.shapley import antithetic_permutations, permutation_masks, sample_seed
from conflictlab.lm.subsets import Game, SubsetScorer

log = logging.getLogger(__name__)

VALUE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("response_sha256", pa.string(), nullable=False),
        pa.field("mask", pa.int64(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
        pa.field("n_response_tokens", pa.int32(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        # A sampled game's permutations (on its empty-coalition row, null
        # elsewhere and for exact games): the attributions use these very
        # orders instead of redrawing them from the seed.
        pa.field("permutations", pa.list_(pa.list_(pa.int16()))),
    ]
)

SKIP_SCHEMA = pa.schema([pa.field("sample_id", pa.string()), pa.field("reason", pa.string())])


def response_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_game(tokenizer, question: str, evidence: Sequence[str], response: str, *, renumber: bool = True) -> Game:
    """Tokenise the segments of one game, rendered as :mod:`conflictlab.contextconflict.prompts` says (``SCORER_*``)."""

    def ids(text: str, special: bool = False) -> list[int]:
        return list(tokenizer(text, add_special_tokens=special)["input_ids"])

    n = len(evidence)
    pieces = []
    for i, text in enumerate(evidence):
        numbers = range(1, n + 1) if renumber else [i + 1] * n
        cache: dict[int, list[int]] = {}
        pieces.append([cache.setdefault(k, ids(SCORER_EVIDENCE.format(k=k, text=text))) for k in numbers])
    return Game(ids(SCORER_QUESTION.format(question=question), special=True), pieces, ids(SCORER_SUFFIX), ids(response))


def coalitions(n: int, *, exact_max_n: int, n_permutations: int, seed: int, sample_id: str) -> tuple[list[int], np.ndarray | None]:
    """Masks to score for an n-piece game: all of them up to ``exact_max_n``,
    else those visited by antithetic permutations drawn from the sample's own
    seed (:func:`~conflictlab.contextconflict.shapley.sample_seed`; returned too)."""
    if n <= exact_max_n:
        return list(range(1 << n)), None
    permutations = antithetic_permutations(n, n_permutations, sample_seed(seed, sample_id))
    return sorted(permutation_masks(permutations)), permutations


def score_games(
    scorer: SubsetScorer,
    tokenizer,
    samples: pa.Table,
    responses: pa.Table,
    *,
    scorer_name: str,
    renumber: bool = True,
    exact_max_n: int = 10,
    n_permutations: int = 64,
    seed: int = 0,
) -> tuple[pa.Table, list[dict]]:
    """Coalition values of every (sample, response) pair, longest games first.

    Returns the value table (VALUE_SCHEMA) and one skip record per response
    that could not be scored (not generated, empty, or a single piece).
    """
    by_id = {row["sample_id"]: row for row in samples.to_pylist()}
    games, skipped = [], []
    for response in responses.to_pylist():
        sample = by_id.get(response["sample_id"])
        if sample is None:
            raise ValueError(f"response for unknown sample {response['sample_id']!r}")
        text = response["response"]
        reason = None
        if response["status"] != "ok":
            reason = f"response status {response['status']}"
        elif not text or not text.strip():
            reason = "empty response"
        elif sample["n_evidence"] < 2:
            reason = "fewer than two evidence pieces"
        if reason:
            skipped.append({"sample_id": sample["sample_id"], "reason": reason})
            continue
        game = build_game(tokenizer, sample["question"], sample["evidence"], text, renumber=renumber)
        games.append((sample, text, game))
    games.sort(key=lambda item: -len(item[2].sequence((1 << item[2].n) - 1)))

    rows = []
    for index, (sample, text, game) in enumerate(games):
        masks, permutations = coalitions(
            game.n, exact_max_n=exact_max_n, n_permutations=n_permutations, seed=seed, sample_id=sample["sample_id"]
        )
        values = scorer.values(game, masks)
        digest = response_sha256(text)
        for mask, value in values.items():
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "response_sha256": digest,
                    "mask": mask,
                    "n_evidence": game.n,
                    "value": value,
                    "n_response_tokens": len(game.response),
                    "scorer": scorer_name,
                    "permutations": permutations.tolist() if permutations is not None and mask == 0 else None,
                }
            )
        log.info("game %d/%d %s: n=%d, %d coalitions", index + 1, len(games), sample["sample_id"], game.n, len(masks))
    rows.sort(key=lambda r: (r["sample_id"], r["mask"]))
    return pa.Table.from_pylist(rows, schema=VALUE_SCHEMA), skipped



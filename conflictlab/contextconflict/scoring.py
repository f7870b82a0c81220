"""Coalition values of ContextConflict responses: each (sample, response)
becomes a :class:`conflictlab.lm.subsets.Game` under the scorer rendering of
:mod:`conflictlab.contextconflict.prompts` and is scored by the model layer's
prefix-sharing :class:`~conflictlab.lm.subsets.SubsetScorer`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

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


def coalitions(
    n: int, *, exact_max_n: int, n_permutations: int, seed: int, sample_id: str
) -> tuple[list[int], np.ndarray | None]:
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
    return score_response_sets(
        scorer,
        tokenizer,
        samples,
        [responses],
        scorer_name=scorer_name,
        renumber=renumber,
        exact_max_n=exact_max_n,
        n_permutations=n_permutations,
        seed=seed,
    )[0]


def _skip_reason(sample: dict, response: dict) -> str | None:
    text = response["response"]
    if response["status"] != "ok":
        return f"response status {response['status']}"
    if not text or not text.strip():
        return "empty response"
    if sample["n_evidence"] < 2:
        return "fewer than two evidence pieces"
    return None


def score_response_sets(
    scorer: SubsetScorer,
    tokenizer,
    samples: pa.Table,
    response_sets: Sequence[pa.Table],
    *,
    scorer_name: str,
    renumber: bool = True,
    exact_max_n: int = 10,
    n_permutations: int = 64,
    seed: int = 0,
) -> list[tuple[pa.Table, list[dict]]]:
    """:func:`score_games` of several response tables to the same samples
    (the steering variants' responses to one test split), one result per
    table. A sample's responses from every table are scored together
    (:meth:`~conflictlab.lm.subsets.SubsetScorer.values_shared`: each evidence
    subset forwarded once for all of them; identical responses once); with
    one table this is the single-response path. Every sample goes to
    :meth:`~conflictlab.lm.subsets.SubsetScorer.score` in one call, longest
    first."""
    # One game per (sample, response) is built and tokenised below, so the rows
    # are read one by one; only the columns a game needs become Python objects
    # (not, e.g., the responses' token ids).
    by_id = {
        row["sample_id"]: row for row in samples.select(["sample_id", "question", "evidence", "n_evidence"]).to_pylist()
    }
    per_sample: dict[str, list[tuple[int, str]]] = {}
    skipped: list[list[dict]] = [[] for _ in response_sets]
    for t, responses in enumerate(response_sets):
        for response in responses.select(["sample_id", "status", "response"]).to_pylist():
            sample = by_id.get(response["sample_id"])
            if sample is None:
                raise ValueError(f"response for unknown sample {response['sample_id']!r}")
            reason = _skip_reason(sample, response)
            if reason:
                skipped[t].append({"sample_id": sample["sample_id"], "reason": reason})
                continue
            per_sample.setdefault(sample["sample_id"], []).append((t, response["response"]))
    sets = []
    for sample_id, answers in per_sample.items():
        sample = by_id[sample_id]
        texts = list(dict.fromkeys(text for _, text in answers))
        games = [
            build_game(tokenizer, sample["question"], sample["evidence"], text, renumber=renumber) for text in texts
        ]
        sets.append((sample, answers, texts, games))
    sets.sort(key=lambda item: -len(item[3][0].sequence((1 << item[3][0].n) - 1)))

    rows: list[list[dict]] = [[] for _ in response_sets]
    plans = [
        coalitions(
            games[0].n, exact_max_n=exact_max_n, n_permutations=n_permutations, seed=seed, sample_id=sample["sample_id"]
        )
        for sample, _, _, games in sets
    ]
    # All samples in one call: the packed path fills its forwards across them.
    scored = scorer.score([(games, masks) for (_, _, _, games), (masks, _) in zip(sets, plans)])
    for index, ((sample, answers, texts, games), (masks, permutations), job_values) in enumerate(
        zip(sets, plans, scored)
    ):
        values_of = dict(zip(texts, job_values))
        game_of = dict(zip(texts, games))
        for t, text in answers:
            digest = response_sha256(text)
            for mask, value in values_of[text].items():
                rows[t].append(
                    {
                        "sample_id": sample["sample_id"],
                        "response_sha256": digest,
                        "mask": mask,
                        "n_evidence": games[0].n,
                        "value": value,
                        "n_response_tokens": len(game_of[text].response),
                        "scorer": scorer_name,
                        "permutations": permutations.tolist() if permutations is not None and mask == 0 else None,
                    }
                )
        log.info(
            "game %d/%d %s: n=%d, %d coalitions, %d distinct responses",
            index + 1,
            len(sets),
            sample["sample_id"],
            games[0].n,
            len(masks),
            len(games),
        )
    results = []
    for table_rows, table_skipped in zip(rows, skipped):
        table_rows.sort(key=lambda r: (r["sample_id"], r["mask"]))
        results.append((pa.Table.from_pylist(table_rows, schema=VALUE_SCHEMA), table_skipped))
    return results

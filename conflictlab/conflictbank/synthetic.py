"""Synthetic ConflictBank QA records in the hub's JSON Lines layout
(``conflictlab.conflictbank.dataset``), at the paper's size times a fraction,
for rehearsing the paper configuration's scale (README, Paper scale). Fake
content (``conflictlab.fake_text``); shapes: 553,117 QA pairs (abstract) over
the 100 relations of §2.2, each with its default evidence and the three
conflict kinds' (misinformation, temporal, semantic) claims and evidence in
the three styles; evidence lengths from the shared hub record
(``../shared/conflictbank_sample``: 208, 378, 335 and 383 words), ±25%.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import LETTERS
from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA
from conflictlab.conflictbank.prompts import METHOD_SETTINGS, SUBSET_SETTINGS
from conflictlab.fake_text import Words, scaled

QA_PAIRS = 553_117
RELATIONS = 100
EVIDENCE_WORDS = {"default": 208, "misinformation": 378, "temporal": 335, "semantic": 383}
_HUB_STYLES = ("wikipedia", "new", "book")  # the hub spells news "new"
_HUB_EVIDENCE = {
    "default": "default_evidence",
    "misinformation": "misinformation_conflict_evidence_evidence",
    "temporal": "temporal_conflict_evidence",
    "semantic": "semantic_conflict_evidence",
}


def record(words: Words, relation: str) -> dict:
    """One hub QA record (the hub's field names) of ``relation``."""
    rng = words.rng
    correct, replaced = rng.sample("ABC", 2)
    raw = {
        "relation": relation,
        "subject": words.text(2),
        "object": words.text(2),
        "replaced_object": words.text(2),
        "question": words.sized((7, 2), 3) + "?",
        "options": [words.text(2), words.text(3), words.text(2), "uncertain"],
        "correct_option": correct,
        "replace_option": replaced,
        "uncertain_option": "D",
        "temporal_conflict_time_span": [f"{rng.randint(1, 28)} April, {rng.randint(2025, 2040)}" for _ in range(2)],
    }
    for key in ("subject_description", "semantic_description", "object_description", "replaced_description"):
        raw[key] = words.sized((6, 2))
    for kind, field in _HUB_EVIDENCE.items():
        claim = "default_claim" if kind == "default" else f"{kind}_conflict_claim"
        raw[claim] = words.sized((7, 2), 3)
        raw[f"{'default' if kind == 'default' else kind + '_conflict'}_evidence_category"] = rng.choice(_HUB_STYLES)
        raw[field] = words.sized((EVIDENCE_WORDS[kind], EVIDENCE_WORDS[kind] / 4), 20)
    return raw


def write_release(path: str | Path, fraction: float, seed: int = 0) -> int:
    """The hub's QA JSON Lines at ``path``: ``scaled(553,117, fraction)``
    records, relations P1..P100 in turn. Returns the record count."""
    words = Words(seed)
    count = scaled(QA_PAIRS, fraction)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for k in range(count):
            out.write(json.dumps(record(words, f"P{k % RELATIONS + 1}")) + "\n")
    return count


# --------------------------------------------------------------------------
# Planted read-outs (rules conflictbank_evaluate and
# conflictbank_embedded_evaluate) with known metrics, so conflictbank_report
# can run at full size without a model (benchmarks/scale.py run --planted).

PLANTED_READ_OUT = "planted"
# The planted answer's probability; the other three letters share the rest.
PLANTED_CONFIDENCE = 0.7
# The answers a planted read-out gives, in the order of planted_predictions' ``answers``.
ANSWERS = ("correct", "replaced", "uncertain", "other")


def planted_counts(shares: Sequence[float], n: int) -> list[int]:
    """``n`` cut by ``shares`` (summing to 1): answer j for the records from
    round(n · Σ_{i<j} share_i) to round(n · Σ_{i<=j} share_i), so the counts
    always add up to ``n`` (rounding each share alone may not)."""
    bounds = np.round(np.cumsum([0.0, *shares]) * n).astype(int)
    bounds[-1] = n
    return np.diff(bounds).tolist()


def planted_predictions(
    records: pa.Table,
    settings: Sequence[str],
    *,
    model: str,
    scored_share: float = 0.6,
    answers: Mapping[str, Sequence[float]] | None = None,
    seed: int = 0,
) -> pa.Table:
    """One :data:`conflictlab.conflictbank.evaluation.PREDICTION_SCHEMA` row per
    (setting, record), settings outer as the real read-out orders them.

    Planted truth: exactly ``round(scored_share * n)`` records (chosen with
    ``seed``) answer correctly under ``default`` and ``correct``, the rest
    give the replaced option there, so they are the scored subset. In every
    other setting, of the scored records exactly :func:`planted_counts` give
    each answer of :data:`ANSWERS`, ``answers[setting]`` its four shares
    (default: (0.5, 0.3, 0.1, 0.1));
    records outside the subset answer at random. The planted answer has
    probability :data:`PLANTED_CONFIDENCE`, the other letters a third of the
    rest each, so every entropy is the same known value.
    """
    rng = np.random.default_rng(seed)
    n = records.num_rows
    letters = {
        key: np.array(records.column(f"{key}_letter").to_pylist()) for key in ("correct", "replaced", "uncertain")
    }
    # the fourth letter: the one of A-D that none of the three names
    taken = np.stack([np.array([LETTERS.index(x) for x in column]) for column in letters.values()], axis=1)
    letters["other"] = np.array(LETTERS)[6 - taken.sum(axis=1)]
    scored = np.zeros(n, dtype=bool)
    scored[rng.permutation(n)[: round(scored_share * n)]] = True
    parts = []
    for setting in settings:
        if setting in ("default", "correct"):
            answer = np.where(scored, 0, 1)
        else:
            shares = (answers or {}).get(setting, (0.5, 0.3, 0.1, 0.1))
            planted = np.repeat(np.arange(len(ANSWERS)), planted_counts(shares, int(scored.sum())))
            answer = rng.integers(len(ANSWERS), size=n)
            answer[scored] = rng.permutation(planted)
        predicted = np.choose(answer, [letters[key] for key in ANSWERS])
        probabilities = np.full((n, len(LETTERS)), (1 - PLANTED_CONFIDENCE) / 3)
        probabilities[np.arange(n), [LETTERS.index(x) for x in predicted]] = PLANTED_CONFIDENCE
        parts.append(
            pa.table(
                {
                    "record_id": records.column("record_id"),
                    "setting": pa.repeat(pa.scalar(setting), n),
                    "model": pa.repeat(pa.scalar(model), n),
                    "probabilities": pa.FixedSizeListArray.from_arrays(pa.array(probabilities.ravel()), len(LETTERS)),
                    "predicted_letter": pa.array(predicted),
                    **{
                        f"{key}_letter": records.column(f"{key}_letter") for key in ("correct", "replaced", "uncertain")
                    },
                    "read_out": pa.repeat(pa.scalar(PLANTED_READ_OUT), n),
                }
            )
        )
    return pa.concat_tables(parts).cast(PREDICTION_SCHEMA)


def planted_method_predictions(
    records: pa.Table,
    runs: Sequence[str],
    *,
    greedy: str,
    scored_share: float = 0.6,
    answers: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
    seed: int = 0,
) -> pa.Table:
    """Rule conflictbank_methods' read-out, planted: for every run of
    ``runs`` (method run names, ``model@method``) the :func:`planted_predictions`
    rows of the single-evidence conflict settings
    (:data:`~conflictlab.conflictbank.prompts.METHOD_SETTINGS`), and for the
    ``greedy`` run also those of ``default`` and ``correct``, which fix the
    scored subset. Shape: records × (3 · len(runs) + 2) rows of ``PREDICTION_SCHEMA``.

    Planted truth: every run draws its scored records with the same ``seed``,
    so the greedy run's scored subset (the one
    :func:`conflictlab.conflictbank.methods.method_cells` scores every run on)
    is each run's planted subset, and in each conflict setting exactly
    :func:`planted_counts` of those records give each answer of
    :data:`ANSWERS` (``answers[run][setting]``, default (0.5, 0.3, 0.1, 0.1)):
    MR = OAR / (OAR + CAR) of those counts per run and kind.
    """
    return pa.concat_tables(
        [
            planted_predictions(
                records,
                [*METHOD_SETTINGS, *(SUBSET_SETTINGS if run == greedy else ())],
                model=run,
                scored_share=scored_share,
                answers=(answers or {}).get(run),
                seed=seed,
            )
            for run in runs
        ]
    )

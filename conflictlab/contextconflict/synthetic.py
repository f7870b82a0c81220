"""Synthetic ContextConflict samples in the released folder layout
(``conflictlab.contextconflict.dataset``), at the release's size times a
fraction, for rehearsing the paper configuration's scale (README, Paper
scale). Fake content (``conflictlab.fake_text``); shapes from:

- files per subset: the release's listing (``RELEASE_FILES``: 5,770; the paper
  reports 5,781, and its Table 1 lost its per-type cells in the text copy);
- evidence pieces per sample, words per piece and per question, the answer's
  form and the extra fields: the four files per subset of the shared release
  sample (``../shared/contextconflict_sample``), as :data:`SUBSET_SHAPES`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from conflictlab.contextconflict.conflict_types import RELEASE_FILES, ROOT_SUBSET, SUBSETS, TASK_FAMILY, Subset
from conflictlab.fake_text import Words, scaled


@dataclass(frozen=True)
class SubsetShape:
    """One subset's sample shape: ``evidence_counts`` {pieces: weight},
    words per piece and per question as (mean, standard deviation), and the
    answer's form: ``none`` (summarization), ``text`` (one short string),
    ``choice`` (one of ``choices``), ``list`` (one short string per piece) or
    ``list_one`` (a list of one); ``labels``: per-piece accuracy labels;
    ``extras``: the release's extra field names."""

    evidence_counts: dict
    evidence_words: tuple[float, float]
    question_words: tuple[float, float]
    answer: str
    choices: tuple[str, ...] = ()
    labels: bool = False
    extras: tuple[str, ...] = ()


# The shared sample's counts as seen (4 files per subset), its lengths' mean and spread.
SUBSET_SHAPES: dict[tuple[str, str], SubsetShape] = {
    ("ambiguity", ROOT_SUBSET): SubsetShape({2: 3, 3: 1}, (100, 5), (6, 2), "list", extras=("ambiguous_entity", "content_pid", "qid")),
    ("granularity", "ROAST-ABSA"): SubsetShape({5: 1, 6: 3}, (87, 14), (7, 1), "none"),
    ("granularity", "medical_qa"): SubsetShape({2: 2, 3: 2}, (230, 50), (173, 38), "none"),
    ("inferential", "entailment_bank"): SubsetShape({5: 1, 6: 3}, (30, 12), (12, 3), "text"),
    ("inferential", "folio"): SubsetShape({5: 1, 7: 1, 8: 2}, (14, 6), (51, 10), "choice", choices=("True", "False", "Uncertain")),
    ("inferential", "medical_qa"): SubsetShape({2: 1, 4: 3}, (150, 60), (174, 60), "list_one", labels=True),
    ("misinformation", "cb_claim_evidence"): SubsetShape({2: 1}, (320, 90), (6, 1), "text", labels=True),
    ("misinformation", "sci_data"): SubsetShape({3: 1, 4: 3}, (27, 6), (33, 8), "choice", choices=("Yes", "No"), labels=True),
    ("perspective", "allsides"): SubsetShape({3: 1}, (750, 350), (35, 5), "none"),
    ("perspective", "perspectrum"): SubsetShape({6: 1}, (60, 15), (8, 4), "none"),
    ("temporal", ROOT_SUBSET): SubsetShape({6: 1}, (220, 110), (8, 2), "text"),
    ("temporal", "cb_claim_evidence_tmp"): SubsetShape({2: 1}, (360, 60), (28, 1), "text"),
}


def sample(words: Words, subset: Subset, number: int) -> dict:
    """One released sample file's JSON object for ``subset``."""
    shape = SUBSET_SHAPES[(subset.conflict_type, subset.name)]
    n = words.weighted(shape.evidence_counts)
    raw = {
        "question": words.sized(shape.question_words, 2) + "?",
        "content": {f"source_{i}": words.sized(shape.evidence_words, 3) for i in range(1, n + 1)},
    }
    if shape.answer == "text":
        raw["answer"] = words.sized((3, 2))
    elif shape.answer == "choice":
        raw["answer"] = words.rng.choice(shape.choices)
    elif shape.answer in ("list", "list_one"):
        raw["answer"] = [words.sized((3, 2)) for _ in range(n if shape.answer == "list" else 1)]
    if shape.labels:
        raw["accuracy_labels"] = [words.rng.random() < 0.5 for _ in range(n)]
    for key in shape.extras:
        raw[key] = words.text(2) if key == "ambiguous_entity" else f"{key}-{number}"
    return raw


def write_release(root: str | Path, fraction: float, seed: int = 0) -> dict[tuple[str, str], int]:
    """The release's ``data/`` folder at ``root``: every subset of every type,
    ``scaled(RELEASE_FILES, fraction)`` files each (1.json, 2.json, ...).
    Returns the files written per (type, subset)."""
    words = Words(seed)
    written = {}
    for conflict_type in TASK_FAMILY:
        for subset in SUBSETS[conflict_type]:
            folder = Path(root) / subset.folder
            folder.mkdir(parents=True, exist_ok=True)
            count = scaled(RELEASE_FILES[(conflict_type, subset.name)], fraction)
            for number in range(1, count + 1):
                (folder / f"{number}.json").write_text(json.dumps(sample(words, subset, number)), encoding="utf-8")
            written[(conflict_type, subset.name)] = count
    return written

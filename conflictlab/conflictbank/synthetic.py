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
from pathlib import Path

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

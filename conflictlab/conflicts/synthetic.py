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
from pathlib import Path

from conflictlab.conflicts.dataset import CATEGORIES
from conflictlab.conflicts.tables import PAPER_TABLE7, RECALL_CATEGORIES, RELEASE_COUNTS
from conflictlab.fake_text import Words, scaled

RESULTS_PER_QUERY = (5, 20, (9.2, 2.5))  # fewest, most, (mean, sd) of a normal rounded and clipped: median 9
# Words per field (mean, standard deviation); short_text at most ~512 tokens.
WORDS = {"question": (9, 3), "title": (8, 3), "snippet": (20, 6), "short_text": (300, 60), "response_str": (12, 8), "answer": (4, 2)}
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

"""Inline citations of a CONFLICTS response and their quality, without a judge.

Task 2 asks for a citation ``[k]`` (1-based search-result index) on every
sentence. A citation group is a bracket holding numbers, commas and ranges:
``[2]``, ``[1][3]``, ``[1, 3]``, ``[1-3]`` (also with an en dash). Sentences
are split after ., ! or ? followed by whitespace and a capital letter, digit,
quote or bracket, with the citation groups that close a sentence kept on it
("... in 2017 [2]. Next ..." or "... in 2017. [2] Next ..." both give the
citation to the first sentence).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_GROUP = re.compile(r"\[\s*(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\s*\]")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_LEADING_GROUPS = re.compile(r"^((?:\[[\d,\s\-–]+\]\s*)+)")


def citations(text: str) -> list[int]:
    """Every result index cited in ``text``, in order, ranges expanded."""
    found = []
    for group in _GROUP.finditer(text):
        for part in group.group(1).split(","):
            bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part.strip())]
            found += list(range(bounds[0], bounds[-1] + 1)) if len(bounds) == 2 else bounds
    return found


def sentences(text: str) -> list[str]:
    """The response's sentences; citation groups that open a piece after a
    boundary belong to the sentence before it."""
    pieces = [p.strip() for p in _BOUNDARY.split(text.strip()) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_GROUPS.match(piece)
        if lead and out and _GROUP.match(piece):
            out[-1] = f"{out[-1]} {lead.group(1).strip()}"
            piece = piece[lead.end() :].strip()
        if piece:
            out.append(piece)
    return out


@dataclass(frozen=True)
class CitationQuality:
    n_sentences: int
    n_cited: int  # sentences with at least one citation
    n_citations: int
    n_invalid: int  # citations of a result index that does not exist

    @property
    def cited_share(self) -> float:
        return self.n_cited / self.n_sentences if self.n_sentences else float("nan")


def citation_quality(response: str, n_results: int) -> CitationQuality:
    """Share of cited sentences and citations pointing outside 1..n_results."""
    parts: Sequence[str] = sentences(response)
    cited = [citations(s) for s in parts]
    flat = [k for ks in cited for k in ks]
    return CitationQuality(
        n_sentences=len(parts),
        n_cited=sum(bool(ks) for ks in cited),
        n_citations=len(flat),
        n_invalid=sum(not 1 <= k <= n_results for k in flat),
    )

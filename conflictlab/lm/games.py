"""The attribution game and the scorer's counters, shared by both scoring paths.

:class:`Game` is what :class:`conflictlab.lm.subsets.SubsetScorer` (the trie
walk) and :mod:`conflictlab.lm.packed_subsets` (the packed path) score;
:class:`ScoreStats` counts their work. They live below both modules so that
the packed path needs nothing from the walk's module, which calls it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Game:
    """Token segments of one (sample, response) attribution game."""

    prefix: list[int]
    pieces: list[list[list[int]]]  # pieces[i][k - 1]: piece i rendered as the k-th of its subset
    suffix: list[int]
    response: list[int]

    @property
    def n(self) -> int:
        return len(self.pieces)

    def piece(self, i: int, k: int) -> list[int]:
        return self.pieces[i][k - 1]

    def sequence(self, mask: int) -> list[int]:
        """The full token sequence of subset ``mask`` (the plain, unshared form)."""
        ids = list(self.prefix)
        k = 0
        for i in range(self.n):
            if mask >> i & 1:
                k += 1
                ids += self.piece(i, k)
        return ids + self.suffix + self.response

    def naive_tokens(self, masks: Iterable[int]) -> int:
        """Tokens of :meth:`sequence` summed over ``masks``, counted from the
        segments' lengths (the scheduler of :meth:`SubsetScorer._walk_jobs`
        asks for it beside the stats)."""
        fixed = len(self.prefix) + len(self.suffix) + len(self.response)
        total = 0
        for mask in masks:
            total += fixed
            rank = 0
            for i in range(self.n):
                if mask >> i & 1:
                    rank += 1
                    total += len(self.pieces[i][rank - 1])
        return total


@dataclass
class ScoreStats:
    tokens_forwarded: int = 0  # real (unpadded) tokens through the model
    tokens_padded: int = 0  # padding added to batch rows
    naive_tokens: int = 0  # what one full forward per subset would process
    forwards: int = 0
    head_positions: int = 0  # positions where the LM head ran (those predicting response tokens)

"""Seeded subsampling of input rows (demo and smoke sizes).

Kept apart from :mod:`conflictlab.stats` so that data rules, which only
subsample, do not need scipy in their environment.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def sample_per_group(rows: Sequence[T], group_of: Callable[[T], Hashable], limit: int, *, seed: int) -> list[T]:
    """At most ``limit`` rows per group, drawn with ``seed``, input order kept.

    Groups are visited in sorted order and each draws a permutation from one
    generator, so the draw depends only on the rows, ``limit`` and ``seed``.
    """
    rng = np.random.default_rng(seed)
    keep: set[int] = set()
    groups = [group_of(row) for row in rows]
    for group in sorted(set(groups)):
        positions = [i for i, g in enumerate(groups) if g == group]
        keep.update(positions[i] for i in rng.permutation(len(positions))[:limit])
    return [row for i, row in enumerate(rows) if i in keep]

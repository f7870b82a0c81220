"""Building new conflict data the papers' way: ConflictBank's Wikidata pipeline
(:mod:`~conflictlab.construction.conflictbank`) and ContextConflict's
semi-synthesis and audit (:mod:`~conflictlab.construction.contextconflict`,
:mod:`~conflictlab.construction.audit`)."""

from __future__ import annotations

import os

from conflictlab.io import atomic_path


def write_frame(frame, path: str | os.PathLike) -> None:
    """A polars DataFrame written to Parquet atomically (its own schema: an intermediate of this package)."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp)

"""Atomic writers: an output either exists whole or not at all.

A job killed half-way must never leave a file that a later run (or Snakemake's
timestamp logic) mistakes for a finished result, so every writer goes through a
temporary name in the same folder and ``os.replace``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

PARQUET_COMPRESSION = "zstd"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, directory: bool = False):
    """Yield a temporary sibling path; rename it onto ``path`` on success.

    On any exception the temporary file or folder is removed and ``path`` is
    left untouched.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    target = tmp if directory else tmp / final.name
    try:
        yield target
        # mkdtemp creates 0700 folders; give the result the usual umask mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(target, (0o777 if directory else 0o666) & ~umask)
        if directory and final.exists():
            shutil.rmtree(final)
        os.replace(target, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_parquet(table: pa.Table, path: str | os.PathLike, schema: pa.Schema) -> None:
    """Write ``table`` cast to ``schema`` (zstd) atomically.

    The explicit schema makes the bytes independent of how the table was
    built (empty tables included), so reruns give identical files.
    """
    table = table.cast(schema) if table.schema != schema else table
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression=PARQUET_COMPRESSION)


def write_json(obj, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

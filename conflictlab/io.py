"""Reading and writing the workflow's files.

Writers are atomic: an output either exists whole or not at all. A job killed
half-way must never leave a file that a later run (or Snakemake's timestamp
logic) mistakes for a finished result, so every writer goes through a
temporary name in the same folder and ``os.replace``.

One reader, :func:`read_tables`, gives a list of Parquet files as one table.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PARQUET_COMPRESSION = "zstd"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, directory: bool = False):
    """Yield a temporary sibling path; rename it onto ``path`` on success.

    On any exception the temporary file or folder is removed and ``path`` is
    left untouched. A process killed outright (SIGKILL, a node lost) cannot
    clean up: its hidden ``.<name>.<random>.tmp`` folder stays beside the
    output, which Snakemake and every reader here ignore. It is not removed
    by a later write, which cannot tell it from a live writer's on a shared
    file system.
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


def _schema_difference(expected: pa.Schema, found: pa.Schema) -> str:
    """The first way ``found`` differs from ``expected``, in words."""
    for field in expected:
        if field.name not in found.names:
            return f"field {field.name!r} is missing"
        other = found.field(field.name)
        if other.type != field.type:
            return f"field {field.name!r} is {other.type}, expected {field.type}"
        if other.nullable != field.nullable:
            return (
                f"field {field.name!r} is {'' if other.nullable else 'not '}nullable, expected "
                f"{'' if field.nullable else 'not '}nullable"
            )
    extra = [name for name in found.names if name not in expected.names]
    if extra:
        return f"field {extra[0]!r} is not expected"
    return f"fields are in the order {found.names}, expected {expected.names}"


def read_tables(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    columns: Sequence[str] | None = None,
    schema: pa.Schema | None = None,
) -> pa.Table:
    """The Parquet files ``paths`` (one path, or several in order) as one table:
    each file's rows in turn, in the file's order.

    Every file must hold the same schema, ``schema`` when given, else the
    first file's (field metadata aside); a file that differs is an error
    naming it and the field. ``columns`` reads only those columns, in that
    order. No paths give ``schema``'s empty table, or an error without one.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if schema is not None and columns is not None:
        schema = pa.schema([schema.field(name) for name in columns])
    tables, expected, against = [], schema, "the expected schema"
    for path in paths:
        table = pq.read_table(path, columns=None if columns is None else list(columns))
        if expected is None:
            expected, against = table.schema, f"the first file's ({path})"
        elif not table.schema.equals(expected):
            raise ValueError(f"{path}: schema differs from {against}: {_schema_difference(expected, table.schema)}")
        tables.append(table)
    if not tables:
        if schema is None:
            raise ValueError("read_tables: no Parquet files given (pass schema= to read none as an empty table)")
        return schema.empty_table()
    return pa.concat_tables(tables)


def group_in_order(table: pa.Table, keys: list[str], aggregations: list[tuple]) -> pa.Table:
    """``table.group_by(keys).aggregate(aggregations)`` with the groups in
    order of their first row in ``table``: pyarrow's group-by promises no
    order, not even single-threaded (groups "8", "3", "2" come out as 8, 2, 3),
    and a table's row order reaches the rendered tables."""
    order = "__first_row"
    indexed = table.append_column(order, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    grouped = indexed.group_by(keys, use_threads=False).aggregate([*aggregations, (order, "min")])
    return grouped.take(pc.sort_indices(grouped.column(f"{order}_min"))).drop_columns([f"{order}_min"])

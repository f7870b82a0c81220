"""conflictlab.io.read_tables: several Parquet files as one table."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conflictlab.io import group_in_order, read_tables, write_parquet

SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("score", pa.float64()),
        pa.field("pieces", pa.list_(pa.int8())),
    ]
)


def _write(path: Path, ids, schema=SCHEMA) -> Path:
    rows = [{"sample_id": i, "score": float(n), "pieces": [n % 3] * (n % 4)} for n, i in enumerate(ids)]
    write_parquet(pa.Table.from_pylist(rows, schema=schema), path, schema)
    return path


def test_files_are_read_in_the_given_order_each_in_its_own_order(tmp_path):
    b = _write(tmp_path / "b.parquet", ["b3", "b1", "b2"])
    a = _write(tmp_path / "a.parquet", ["a2", "a1"])
    table = read_tables([b, a])
    assert table.column("sample_id").to_pylist() == ["b3", "b1", "b2", "a2", "a1"]
    assert table.schema.equals(SCHEMA)
    # what every caller did before: the same table, column chunks included
    assert table.equals(pa.concat_tables(pq.read_table(p) for p in [b, a]))
    assert [c.num_chunks for c in table.columns] == [2, 2, 2]
    assert read_tables(str(a)).equals(pq.read_table(a))  # one path, not its characters
    assert read_tables(iter([a])).equals(pq.read_table(a))


def test_a_file_with_another_schema_is_an_error_naming_it_and_the_field(tmp_path):
    first = _write(tmp_path / "first.parquet", ["x"])
    narrow = pa.schema([SCHEMA.field("sample_id"), pa.field("score", pa.float32()), SCHEMA.field("pieces")])
    other = _write(tmp_path / "other.parquet", ["y"], schema=narrow)
    with pytest.raises(
        ValueError,
        match=r"other\.parquet: schema differs from the first file's \(.*first\.parquet\): field 'score' is float, "
        r"expected double",
    ):
        read_tables([first, other])
    missing = _write(
        tmp_path / "missing.parquet", ["y"], schema=pa.schema([SCHEMA.field("sample_id"), SCHEMA.field("score")])
    )
    with pytest.raises(ValueError, match=r"missing\.parquet: .*field 'pieces' is missing"):
        read_tables([first, missing])
    extra_schema = SCHEMA.append(pa.field("extra", pa.int64()))
    extra = _write(tmp_path / "extra.parquet", ["y"], schema=extra_schema)
    with pytest.raises(ValueError, match=r"extra\.parquet: .*field 'extra' is not expected"):
        read_tables([first, extra])
    nullable = pa.schema([pa.field("sample_id", pa.string()), SCHEMA.field("score"), SCHEMA.field("pieces")])
    with pytest.raises(
        ValueError, match=r"first\.parquet: schema differs from the expected schema: field 'sample_id' is not nullable"
    ):
        read_tables([first], schema=nullable)
    # a columns selection compares only what it reads
    assert read_tables([first, other], columns=["sample_id", "pieces"]).column("sample_id").to_pylist() == ["x", "y"]


def test_no_files_is_an_error_or_the_given_schemas_empty_table(tmp_path):
    with pytest.raises(ValueError, match="no Parquet files"):
        read_tables([])
    empty = read_tables([], schema=SCHEMA)
    assert empty.num_rows == 0 and empty.schema.equals(SCHEMA)
    assert read_tables([], schema=SCHEMA, columns=["pieces", "sample_id"]).schema.names == ["pieces", "sample_id"]


def test_columns_are_read_in_the_order_asked(tmp_path):
    a = _write(tmp_path / "a.parquet", ["a1", "a2"])
    b = _write(tmp_path / "b.parquet", ["b1"])
    table = read_tables([a, b], columns=["score", "sample_id"])
    assert table.schema.names == ["score", "sample_id"]
    assert table.column("sample_id").to_pylist() == ["a1", "a2", "b1"]
    assert table.column("score").to_pylist() == [0.0, 1.0, 0.0]
    assert read_tables([a, b], columns=["sample_id"], schema=SCHEMA).schema.equals(
        pa.schema([SCHEMA.field("sample_id")])
    )
    with pytest.raises(Exception, match="nope"):
        read_tables([a], columns=["nope"])


def test_group_in_order_keeps_first_appearance_where_pyarrows_group_by_does_not():
    table = pa.table({"key": ["8", "3", "2", "3", "8", "10"], "x": [1, 2, 3, 4, 5, 6]})
    grouped = group_in_order(table, ["key"], [("x", "sum"), ("x", "list")])
    assert grouped.column_names == ["key", "x_sum", "x_list"]
    assert grouped.column("key").to_pylist() == ["8", "3", "2", "10"]
    assert grouped.column("x_sum").to_pylist() == [6, 6, 3, 6]
    assert grouped.column("x_list").to_pylist() == [[1, 5], [2, 4], [3], [6]]

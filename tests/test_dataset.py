import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conflictlab.contextconflict.dataset import (
    CONFLICT_TYPES,
    SAMPLE_SCHEMA,
    SUBSETS,
    SampleError,
    choose_stratum,
    load_released,
    natural_key,
)
from conflictlab.io import write_parquet

from .conftest import DEMO


def write_sample(root, rel, payload):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(payload, bytes):
        path.write_bytes(payload)
    elif isinstance(payload, str):
        path.write_text(payload, encoding="utf-8")
    else:
        path.write_text(json.dumps(payload), encoding="utf-8")
    return path


GOOD = {"question": "Q?", "content": {"source_1": "a", "source_2": "b"}, "answer": "x"}


@pytest.mark.parametrize("conflict_type", CONFLICT_TYPES)
def test_every_real_sample_file_loads(shared_sample, conflict_type):
    build = load_released(shared_sample, conflict_type)
    table, rejected = build.tables()
    assert table.schema == SAMPLE_SCHEMA
    assert rejected.num_rows == 0
    files = sorted((shared_sample / f"{conflict_type}_conflict").rglob("*.json"))
    assert table.num_rows == len(files) == build.files_seen
    by_id = {row["sample_id"]: row for row in table.to_pylist()}
    for path in files:
        raw = json.loads(path.read_text(encoding="utf-8"))
        subset = path.parent.name if path.parent.name != f"{conflict_type}_conflict" else "root"
        row = by_id[f"{conflict_type}/{subset}/{path.stem}"]
        keys = sorted(raw["content"], key=lambda k: int(k.split("_")[1]))
        assert row["evidence"] == [raw["content"][k] for k in keys]
        assert row["n_evidence"] == len(keys)
        assert row["question"] == raw["question"]
        if "answer" in raw:
            expected = raw["answer"] if isinstance(raw["answer"], list) else [raw["answer"]]
            assert row["answer"] == expected
        else:
            assert row["answer"] is None
        assert row["accuracy_labels"] == raw.get("accuracy_labels")
        extras = json.loads(row["extras"])
        assert set(extras) == set(raw) - {"question", "content", "answer", "accuracy_labels"}


def test_real_summarization_subsets_without_gold_have_null_answers(shared_sample):
    # Granularity and perspective files carry no answer; ambiguity files carry
    # one reference answer per entity, which is kept (as a list), not dropped.
    for conflict_type in ("granularity", "perspective"):
        table, _ = load_released(shared_sample, conflict_type).tables()
        assert table.column("answer").null_count == table.num_rows
        assert set(table.column("task_family").to_pylist()) == {"summarization"}
    ambiguity, _ = load_released(shared_sample, "ambiguity").tables()
    assert all(isinstance(a, list) and len(a) >= 2 for a in ambiguity.column("answer").to_pylist())
    assert "ambiguous_entity" in json.loads(ambiguity.column("extras")[0].as_py())


def test_implicit_flag_and_task_family(shared_sample):
    table, _ = load_released(shared_sample, "temporal").tables()
    flags = dict(zip(table.column("subset").to_pylist(), table.column("implicit").to_pylist()))
    assert flags == {"root": True, "cb_claim_evidence_tmp": False}
    folio, _ = load_released(shared_sample, "inferential").tables()
    implicit = {s for s, i in zip(folio.column("subset").to_pylist(), folio.column("implicit").to_pylist()) if i}
    assert implicit == {"folio"}
    assert set(folio.column("task_family").to_pylist()) == {"reasoning"}


def test_evidence_in_natural_key_order(tmp_path):
    content = {f"source_{i}": f"piece {i}" for i in (10, 2, 1, 11, 9, 3, 4, 5, 6, 7, 8)}
    write_sample(tmp_path, "ambiguity_conflict/1.json", {"question": "Q?", "content": content})
    table, _ = load_released(tmp_path, "ambiguity").tables()
    assert table.column("evidence")[0].as_py() == [f"piece {i}" for i in range(1, 12)]


def test_files_in_natural_order_and_ids_stable(tmp_path):
    for stem in ("10", "2", "1"):
        write_sample(tmp_path, f"perspective_conflict/allsides/{stem}.json", GOOD)
    table, _ = load_released(tmp_path, "perspective", subsets=["allsides"]).tables()
    assert table.column("sample_id").to_pylist() == [
        "perspective/allsides/1",
        "perspective/allsides/2",
        "perspective/allsides/10",
    ]
    assert table.column("source_path")[0].as_py() == "perspective_conflict/allsides/1.json"


def test_text_is_kept_exactly(tmp_path):
    odd = "  Caf\u00e9 \u2014 \u00a0non-breaking\tand trailing space \n"
    write_sample(tmp_path, "ambiguity_conflict/1.json", {"question": "Q?", "content": {"source_1": odd}})
    table, _ = load_released(tmp_path, "ambiguity").tables()
    assert table.column("evidence")[0].as_py() == [odd]


BAD_CASES = {
    "malformed": ('{"question": "Q?", "content": {', "malformed JSON"),
    "no_question": ({"content": {"source_1": "a"}}, "field 'question'"),
    "no_content": ({"question": "Q?"}, "field 'content'"),
    "content_list": ({"question": "Q?", "content": ["a", "b"]}, "field 'content' must be a mapping"),
    "empty_evidence": ({"question": "Q?", "content": {"source_1": "a", "source_2": "   "}}, "field 'content.source_2'"),
    "labels_length": (
        {"question": "Q?", "content": {"source_1": "a", "source_2": "b"}, "answer": "x", "accuracy_labels": [True]},
        "has 1 entries for 2 evidence pieces",
    ),
    "bad_utf8": (b'{"question": "Q\xff?", "content": {"source_1": "a"}}', "invalid UTF-8 at byte 15"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_fails_naming_file_and_problem(tmp_path, case):
    payload, message = BAD_CASES[case]
    write_sample(tmp_path, "misinformation_conflict/sci_data/1.json", GOOD)
    write_sample(tmp_path, "misinformation_conflict/sci_data/7.json", payload)
    with pytest.raises(SampleError) as err:
        load_released(tmp_path, "misinformation", subsets=["sci_data"])
    assert "misinformation_conflict/sci_data/7.json" in str(err.value)
    assert message in str(err.value)


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_rejected_with_reason(tmp_path, case):
    payload, message = BAD_CASES[case]
    write_sample(tmp_path, "misinformation_conflict/sci_data/1.json", GOOD)
    write_sample(tmp_path, "misinformation_conflict/sci_data/7.json", payload)
    build = load_released(tmp_path, "misinformation", subsets=["sci_data"], on_error="reject")
    table, rejected = build.tables()
    assert table.column("sample_id").to_pylist() == ["misinformation/sci_data/1"]
    assert rejected.num_rows == 1
    row = rejected.to_pylist()[0]
    assert row["sample_id"] == "misinformation/sci_data/7"
    assert row["source_path"] == "misinformation_conflict/sci_data/7.json"
    assert message in row["reason"]
    assert build.files_seen == table.num_rows + rejected.num_rows


def test_missing_type_folder_is_an_error(tmp_path):
    with pytest.raises(SampleError, match="temporal_conflict: no folder for conflict type 'temporal'"):
        load_released(tmp_path, "temporal")


def test_demo_covers_every_subset_with_three_samples():
    for conflict_type, subsets in SUBSETS.items():
        table, rejected = load_released(DEMO, conflict_type).tables()
        assert rejected.num_rows == 0
        counts = {s.name: table.column("subset").to_pylist().count(s.name) for s in subsets}
        assert all(n >= 3 for n in counts.values()), counts
    misinformation, _ = load_released(DEMO, "misinformation").tables()
    assert misinformation.column("accuracy_labels").null_count == 0


def test_stratified_sample_is_seeded_and_per_subset(tmp_path):
    for subset in ("allsides", "perspectrum"):
        for i in range(1, 9):
            write_sample(tmp_path, f"perspective_conflict/{subset}/{i}.json", GOOD)
    first, _ = load_released(tmp_path, "perspective", max_per_subset=3, seed=7).tables()
    again, _ = load_released(tmp_path, "perspective", max_per_subset=3, seed=7).tables()
    other, _ = load_released(tmp_path, "perspective", max_per_subset=3, seed=8).tables()
    ids = first.column("sample_id").to_pylist()
    assert ids == again.column("sample_id").to_pylist()
    assert ids != other.column("sample_id").to_pylist()
    assert [s.split("/")[1] for s in ids].count("allsides") == 3
    assert [s.split("/")[1] for s in ids].count("perspectrum") == 3
    assert ids == sorted(ids, key=natural_key)


def test_choose_stratum_keeps_everything_under_the_cap():
    assert choose_stratum([3, 1, 2], 5, seed=0, stratum="x") == [3, 1, 2]
    assert choose_stratum([3, 1, 2], None, seed=0, stratum="x") == [3, 1, 2]
    assert len(choose_stratum(list(range(100)), 10, seed=0, stratum="x")) == 10


def test_parquet_bytes_are_reproducible(tmp_path):
    table, _ = load_released(DEMO, "inferential").tables()
    write_parquet(table, tmp_path / "a.parquet", SAMPLE_SCHEMA)
    write_parquet(table, tmp_path / "b.parquet", SAMPLE_SCHEMA)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert pq.read_table(tmp_path / "a.parquet").equals(table)


def test_shuffle_evidence_stores_a_reproducible_permutation():
    from conflictlab.contextconflict.dataset import shuffle_evidence

    table, _ = load_released(DEMO, "misinformation").tables()
    once, again = shuffle_evidence(table, seed=3), shuffle_evidence(table, seed=3)
    assert once.equals(again)
    moved = 0
    for before, after in zip(table.to_pylist(), once.to_pylist()):
        perm = json.loads(after["extras"])["shuffle_permutation"]
        assert sorted(perm) == list(range(before["n_evidence"]))
        assert after["evidence"] == [before["evidence"][i] for i in perm]
        assert after["accuracy_labels"] == [before["accuracy_labels"][i] for i in perm]
        assert after["sample_id"] == before["sample_id"]
        moved += perm != sorted(perm)
    assert moved > 0


def test_table1_statistics_on_hand_made_rows():
    from conflictlab.contextconflict.dataset import dataset_statistics

    base = {
        "task_family": "reasoning",
        "question": "q",
        "answer": ["a"],
        "accuracy_labels": None,
        "extras": "{}",
        "source_path": "x",
    }
    rows = [
        {
            **base,
            "sample_id": "1",
            "conflict_type": "inferential",
            "subset": "folio",
            "implicit": True,
            "evidence": ["a"] * 3,
            "n_evidence": 3,
        },
        {
            **base,
            "sample_id": "2",
            "conflict_type": "inferential",
            "subset": "medical_qa",
            "implicit": False,
            "evidence": ["a"] * 5,
            "n_evidence": 5,
        },
        {
            **base,
            "sample_id": "3",
            "conflict_type": "inferential",
            "subset": "medical_qa",
            "implicit": False,
            "evidence": ["a"] * 4,
            "n_evidence": 4,
        },
    ]
    row = dataset_statistics(pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)).to_pylist()[0]
    assert (row["size"], row["mean_evidence"], row["base_sources"]) == (3, 4.0, "folio, medical_qa")
    assert row["implicit_proportion"] == pytest.approx(1 / 3)
    assert row["release_size"] == 776 and row["release_implicit_proportion"] == pytest.approx(200 / 776)


def test_table1_lists_base_sources_in_order_of_first_appearance():
    """pyarrow's group_by (even single-threaded) can return groups out of
    that order ("8", "3", "2" comes back as 8, 2, 3); the base sources must not."""
    from conflictlab.contextconflict.dataset import dataset_statistics

    base = {
        "task_family": "reasoning",
        "question": "q",
        "answer": ["a"],
        "accuracy_labels": None,
        "extras": "{}",
        "source_path": "x",
        "implicit": False,
        "evidence": ["a"],
        "n_evidence": 1,
    }
    subsets = ["8", "3", "8", "2"]
    rows = [{**base, "sample_id": str(i), "conflict_type": "temporal", "subset": s} for i, s in enumerate(subsets)]
    row = dataset_statistics(pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)).to_pylist()[0]
    assert (row["size"], row["base_sources"]) == (4, "8, 3, 2")


def test_table5_lists_the_ten_base_datasets_with_the_samples_read_from_their_subsets():
    from conflictlab.contextconflict.conflict_types import BASE_DATASETS, RELEASE_FILES
    from conflictlab.contextconflict.dataset import base_dataset_table

    base = {
        "task_family": "reasoning",
        "question": "q",
        "answer": ["a"],
        "accuracy_labels": None,
        "extras": "{}",
        "source_path": "x",
        "implicit": False,
        "evidence": ["a"],
        "n_evidence": 1,
    }
    read = [
        ("inferential", "medical_qa"),
        ("granularity", "medical_qa"),
        ("granularity", "medical_qa"),
        ("temporal", "root"),
        ("temporal", "cb_claim_evidence_tmp"),
        ("misinformation", "cb_claim_evidence"),
    ]
    rows = [{**base, "sample_id": str(i), "conflict_type": t, "subset": s} for i, (t, s) in enumerate(read)]
    table = {r["dataset"]: r for r in base_dataset_table(pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)).to_pylist()}
    assert len(table) == 10
    assert (table["NEJM-MedQA"]["n"], table["NEJM-MedQA"]["release_files"]) == (3, 176 + 75)  # both types' medical_qa
    assert (table["ConflictBank"]["n"], table["ConflictBank"]["release_files"]) == (2, 898 + 632)
    assert (table["CONFLICTS"]["n"], table["CONFLICTS"]["release_files"]) == (1, 62)
    assert table["FOLIO"]["n"] == 0 and table["SciFact"]["licence_release"] == "CC BY-NC 2.0"
    # every subset of the release belongs to exactly one base dataset, and the files add up to the release's 5,770
    covered = [key for d in BASE_DATASETS for key in d.subsets]
    assert sorted(covered) == sorted(RELEASE_FILES) and sum(r["release_files"] for r in table.values()) == 5770
    assert all(r["licence_source"] for r in table.values() if r["licence_release"])

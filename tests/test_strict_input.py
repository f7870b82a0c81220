"""Nothing passes silently: hand-broken copies of the demo data, each case
an error naming the file and the field under ``fail`` and a recorded
rejection under ``reject``."""

import json
import os
import shutil

import pytest

from conflictlab.contextconflict.dataset import SampleError, load_released, released_files

from .conftest import DEMO

TARGET = "inferential_conflict/folio/2.json"


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    return root


def edit_sample(root, change):
    path = root / TARGET
    sample = json.loads(path.read_text())
    change(sample)
    path.write_text(json.dumps(sample))


def rename_source(old, new):
    def change(sample):
        content = sample["content"]
        sample["content"] = {(new if key == old else key): text for key, text in content.items()}

    return change


def add_source(key, text):
    return lambda sample: sample["content"].update({key: text})


def raw_text(text):
    return lambda root: (root / TARGET).write_text(text)


FOLIO_2 = json.loads((DEMO / TARGET).read_text())

SAMPLE_CASES = {
    "evidence number gap": (
        lambda root: edit_sample(root, rename_source("source_2", "source_9")),
        "evidence numbers skip source_2",
    ),
    "zero-padded key": (
        lambda root: edit_sample(root, rename_source("source_1", "source_01")),
        "field 'content.source_01': zero-padded",
    ),
    "same number twice": (
        lambda root: edit_sample(root, add_source("source_01", "another text")),
        "field 'content.source_01': zero-padded",
    ),
    "duplicate JSON key": (
        raw_text(json.dumps(FOLIO_2)[:-1] + ', "question": "a second question"}'),
        "malformed JSON: duplicate key 'question'",
    ),
    "NaN literal": (raw_text(json.dumps(FOLIO_2)[:-1] + ', "score": NaN}'), "malformed JSON: non-standard literal NaN"),
    "Infinity literal": (
        raw_text(json.dumps(FOLIO_2)[:-1] + ', "score": -Infinity}'),
        "non-standard literal -Infinity",
    ),
    "empty gold list": (lambda root: edit_sample(root, lambda s: s.update(answer=[])), "field 'answer' is empty"),
    "empty gold string": (lambda root: edit_sample(root, lambda s: s.update(answer="")), "field 'answer' is empty"),
    "missing gold": (lambda root: edit_sample(root, lambda s: s.pop("answer")), "field 'answer' is missing"),
}


@pytest.mark.parametrize("case", sorted(SAMPLE_CASES))
def test_bad_sample_fails_or_is_rejected(data, case):
    breaks, message = SAMPLE_CASES[case]
    breaks(data)
    with pytest.raises(SampleError) as err:
        load_released(data, "inferential")
    assert TARGET in str(err.value) and message in str(err.value)
    table, rejected = load_released(data, "inferential", on_error="reject").tables()
    assert rejected.column("source_path").to_pylist() == [TARGET]
    assert message in rejected.column("reason")[0].as_py()
    assert "inferential/folio/2" not in table.column("sample_id").to_pylist() and table.num_rows == 8


def make_loop(root):
    folder = root / "inferential_conflict" / "folio"
    os.symlink(folder / "9.json", folder / "8.json")
    os.symlink(folder / "8.json", folder / "9.json")


FILE_CASES = {
    "upper-case extension": (
        lambda root: shutil.copy(root / TARGET, root / "inferential_conflict/folio/4.JSON"),
        "inferential_conflict/folio/4.JSON",
        "not a sample file",
    ),
    "backup file": (
        lambda root: shutil.copy(root / TARGET, root / "inferential_conflict/folio/5.json.bak"),
        "inferential_conflict/folio/5.json.bak",
        "not a sample file",
    ),
    "misspelt subset folder": (
        lambda root: shutil.copytree(root / "inferential_conflict/folio", root / "inferential_conflict/Folio2"),
        "inferential_conflict/Folio2",
        "unknown folder (known subsets of inferential",
    ),
    "folder inside a subset": (
        lambda root: (root / "inferential_conflict/folio/old").mkdir(),
        "inferential_conflict/folio/old",
        "unknown folder",
    ),
    "symlink loop": (
        make_loop,
        "inferential_conflict/folio/8.json",
        "cannot be read (Too many levels of symbolic links)",
    ),
    "dangling link": (
        lambda root: os.symlink(root / "nowhere.json", root / "inferential_conflict/folio/7.json"),
        "inferential_conflict/folio/7.json",
        "cannot be read (No such file or directory)",
    ),
}


@pytest.mark.parametrize("case", sorted(FILE_CASES))
def test_every_entry_is_accounted_for(data, case):
    breaks, path, message = FILE_CASES[case]
    breaks(data)
    with pytest.raises(SampleError) as err:
        load_released(data, "inferential")
    assert str(err.value).startswith(path) and message in str(err.value)
    build = load_released(data, "inferential", on_error="reject")
    table, rejected = build.tables()
    assert table.num_rows == 9
    assert path in rejected.column("source_path").to_pylist()
    assert any(message in reason for reason in rejected.column("reason").to_pylist())


def test_ignorable_files_are_listed_not_read(data):
    (data / "inferential_conflict" / "README.md").write_text("notes")
    (data / "inferential_conflict" / "folio" / ".DS_Store").write_bytes(b"\0")
    build = load_released(data, "inferential")
    assert build.ignored == ["inferential_conflict/README.md", "inferential_conflict/folio/.DS_Store"]
    assert build.tables()[1].num_rows == 0


@pytest.mark.parametrize("on_error", ["fail", "reject"])
def test_a_missing_or_empty_subset_is_an_error_unless_subsets_are_named(data, on_error):
    shutil.rmtree(data / "inferential_conflict" / "folio")
    with pytest.raises(SampleError, match="known subset 'folio' is missing"):
        load_released(data, "inferential", on_error=on_error)
    (data / "inferential_conflict" / "folio").mkdir()
    with pytest.raises(SampleError, match="known subset 'folio' has no sample files"):
        load_released(data, "inferential", on_error=on_error)
    table, _ = load_released(data, "inferential", subsets=["entailment_bank", "medical_qa"], on_error=on_error).tables()
    assert set(table.column("subset").to_pylist()) == {"entailment_bank", "medical_qa"}
    with pytest.raises(ValueError, match="has no subset"):
        load_released(data, "inferential", subsets=["folio2"])


def test_subsets_not_named_are_listed_as_ignored(data):
    found = released_files(data, "inferential", subsets=["folio"])
    assert [p.name for p in found.files["folio"]] == ["1.json", "2.json", "3.json"]
    assert "inferential_conflict/medical_qa/ (subset not in data.subsets)" in found.ignored
    assert found.problems == []

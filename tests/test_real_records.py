"""Real released records read through the code a run uses (the data check, conflictlab.validate_data, calls
the same readers), and the hub paths fed tables in the hub's column names and types.

Where the real records come from, and why none of these benchmarks has them committed, is in
tests/fixtures/real/<benchmark>/README.md.
"""

import json
from pathlib import Path

import pytest

from conflictlab import validate_data
from conflictlab.conflictbank.dataset import HUB_FIELDS, build_records, read_jsonl
from conflictlab.conflictbank.source import configured_records
from conflictlab.contextconflict.dataset import SUBSETS, load_hub, load_released

from .conftest import REPO

datasets = pytest.importorskip("datasets", reason="the hub paths need the datasets package (requirements)")

SHARED = REPO.parent / "shared"
CONFLICTBANK_SAMPLE = SHARED / "conflictbank_sample" / "QA_dataset.sample.jsonl"
CONFLICTBANK_DEMO = REPO / "resources" / "demo" / "conflictbank" / "QA_dataset.jsonl"
CONTEXTCONFLICT_DEMO = REPO / "resources" / "demo" / "data"

# ConflictBank's hub file (Warrieryes/CB_qa, QA_dataset.json, split train) as `datasets` types it: every field a
# string but the two lists. Its dataset card was not reachable from here; the names are the released records'
# (the one real record in ../shared/conflictbank_sample/ and the authors' repository's loaders).
CONFLICTBANK_FEATURES = datasets.Features(
    {
        name: datasets.Sequence(datasets.Value("string"))
        if name in ("options", "temporal_conflict_time_span")
        else datasets.Value("string")
        for name in HUB_FIELDS
    }
)


def hub_returning(monkeypatch, table_by_config: dict):
    """``datasets.load_dataset`` answering with the given datasets (by config name, or None), recording the calls."""
    calls = []

    def load_dataset(name, config=None, *, revision=None, split=None):
        calls.append((name, config, revision, split))
        return table_by_config[config]

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return calls


def real_conflictbank_record() -> dict:
    if not CONFLICTBANK_SAMPLE.is_file():
        pytest.skip(f"the real ConflictBank record is not present at {CONFLICTBANK_SAMPLE}")
    # The third-party copy lost its "subject"; the record's text names it.
    return {**json.loads(CONFLICTBANK_SAMPLE.read_text().splitlines()[0]), "subject": "Kim Kardashian"}


def test_conflictbank_hub_rows_map_to_the_rows_of_the_same_records_read_locally(monkeypatch, tmp_path):
    records = [json.loads(line) for line in CONFLICTBANK_DEMO.read_text().splitlines()]
    hub = datasets.Dataset.from_list(
        [{name: r[name] for name in HUB_FIELDS} for r in records], features=CONFLICTBANK_FEATURES
    )
    calls = hub_returning(monkeypatch, {None: hub})
    section = {"source": "huggingface", "hf_dataset": "Warrieryes/CB_qa", "hf_revision": "abc123"}
    source, rows = configured_records(section)
    from_hub = build_records(rows, source="hub").rows
    assert calls == [("Warrieryes/CB_qa", None, "abc123", "train")] and source == "Warrieryes/CB_qa@abc123"
    local = build_records(read_jsonl(CONFLICTBANK_DEMO), source="hub").rows
    assert from_hub == local and len(from_hub) == len(records)


def test_conflictbank_real_record_through_the_hub_path_keeps_its_quirks(monkeypatch):
    record = real_conflictbank_record()
    hub = datasets.Dataset.from_list([{name: record[name] for name in HUB_FIELDS}], features=CONFLICTBANK_FEATURES)
    hub_returning(monkeypatch, {None: hub})
    source, rows = configured_records({"source": "huggingface", "hf_dataset": "Warrieryes/CB_qa", "hf_revision": None})
    [row] = build_records(rows, source=source).rows
    assert source == "Warrieryes/CB_qa@main"
    assert row["relation"] == "P69" and row["object"] == "Marymount High School"
    assert row["replaced_object"] == "Centre national d'études agronomiques des régions chaudes"
    # a literal backslash before each slash, as released; the authors' typo "form" for "from", as released
    assert "Holmby Hills\\/Bel Air" in row["object_description"]
    assert row["temporal_claim"].endswith("form 10 April, 2028 to 21 July, 2036.")
    assert row["options"] == [
        "Marymount High School",
        "Pasteur Institute of Iran",
        "Centre national d'études agronomiques des régions chaudes",
        "uncertain",
    ]
    assert (row["correct_letter"], row["replaced_letter"], row["uncertain_letter"]) == ("A", "C", "D")
    assert (row["default_style"], row["misinformation_style"], row["semantic_style"]) == ("wikipedia", "news", "news")


def contextconflict_hub(root: Path, conflict_type: str):
    """The released files of one type as one hub config: the sample fields, ``content`` a struct of every
    ``source_N`` the config has (absent ones null), and ``subset`` (the release folder). The card was not
    reachable from here: this is the table `datasets` builds from the released files with the subset beside
    each, which is what ``load_hub`` expects."""
    rows = []
    for subset in SUBSETS[conflict_type]:
        for path in sorted((root / subset.folder).glob("*.json")):
            rows.append({**json.loads(path.read_text(encoding="utf-8")), "subset": subset.name})
    width = max(len(r["content"]) for r in rows)
    for r in rows:
        r["content"] = {f"source_{i}": r["content"].get(f"source_{i}") for i in range(1, width + 1)}
    return datasets.Dataset.from_list(rows)


@pytest.mark.parametrize("conflict_type", ["misinformation", "temporal", "perspective"])
def test_contextconflict_hub_rows_are_validated_as_the_released_files_are(monkeypatch, conflict_type):
    hub = contextconflict_hub(CONTEXTCONFLICT_DEMO, conflict_type)
    hub_returning(monkeypatch, {f"{conflict_type}_conflict": hub})
    from_hub = load_hub("AsherYang/ContextConflict", conflict_type).records
    released = load_released(CONTEXTCONFLICT_DEMO, conflict_type).records
    assert len(from_hub) == len(released) == hub.num_rows
    # the same samples, field for field, but where each was read from (a hub row's id is its index)
    assert fields(from_hub) == fields(released)


def fields(rows: list[dict]) -> list[dict]:
    """The rows without where they were read from, in a fixed order."""
    kept = [{k: v for k, v in r.items() if k not in ("sample_id", "source_path")} for r in rows]
    return sorted(kept, key=lambda r: (r["subset"], r["question"]))


def test_the_real_contextconflict_files_pass_the_data_check_with_their_field_values(monkeypatch):
    root = SHARED / "contextconflict_sample" / "data"
    if not root.is_dir():
        pytest.skip(f"the real ContextConflict files are not present at {root}")
    config = {"data": {"source": "released", "root": str(root), "on_error": "fail"}, "conflict_types": list(SUBSETS)}
    checks = validate_data.check(config, ["contextconflict"])["contextconflict"]
    assert [(Path(c.path).relative_to(root).as_posix(), c.read, len(c.problems)) for c in checks] == [
        (subset.folder, 4, 0) for conflict_type in SUBSETS for subset in SUBSETS[conflict_type]
    ]
    by_id = {
        r["sample_id"]: r
        for conflict_type in ("ambiguity", "inferential", "misinformation", "temporal")
        for r in load_released(root, conflict_type).records
    }
    ambiguity = by_id["ambiguity/root/7"]
    assert ambiguity["question"] == "What is the genre of Scorched Earth?"
    assert ambiguity["answer"] == ["Post-apocalyptic western", "Police procedural television series", "Artillery game"]
    assert json.loads(ambiguity["extras"])["ambiguous_entity"] == "Scorched Earth (disambiguation)"
    medical = by_id["inferential/medical_qa/1"]
    assert medical["answer"] == ["Cholesterol embolization syndrome"] and medical["accuracy_labels"] == [True, False]
    sci = by_id["misinformation/sci_data/7"]
    assert (sci["answer"], sci["accuracy_labels"], sci["n_evidence"]) == (["Yes"], [True, False, False], 3)
    temporal = by_id["temporal/cb_claim_evidence_tmp/12"]
    assert temporal["answer"] == ["Minister of Ecclesiastics"] and temporal["n_evidence"] == 2
    assert temporal["question"].startswith("Based on the provided evidence, answer the following question: What")

"""The data check (rule validate_data, conflictlab.validate_data): every selected benchmark's whole input read
through its descriptor's validator, per file the records read and rejected, non-zero where a run would stop."""

import copy
import csv
import json
import shutil

import pytest
import yaml

from conflictlab import benchmarks, validate_data

from .conftest import REPO, copy_workflow, snakemake_cmd

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
DEMO = REPO / "resources" / "demo"
# Records in the demo files (counted from the files, not from the reader under test).
DEMO_FILES = {
    "resources/demo/conflicts/conflicts.jsonl": sum(
        1 for line in open(DEMO / "conflicts/conflicts.jsonl") if line.strip()
    ),
    "resources/demo/conflictbank/QA_dataset.jsonl": sum(
        1 for line in open(DEMO / "conflictbank/QA_dataset.jsonl") if line.strip()
    ),
    "resources/demo/nq_swap/dev.jsonl": sum(1 for line in open(DEMO / "nq_swap/dev.jsonl") if line.strip()),
    **{
        f"resources/demo/memotrap/{name}.csv": sum(1 for _ in csv.DictReader(open(DEMO / f"memotrap/{name}.csv")))
        for name in CONFIG["memotrap"]["files"]
    },
}


def in_copy(tmp_path, monkeypatch):
    """A copy of resources/demo with the working directory above it, so config's relative paths read it."""
    shutil.copytree(DEMO, tmp_path / "resources" / "demo")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "resources" / "demo"


def test_every_benchmark_that_reads_files_names_a_validator_that_resolves():
    for bench in benchmarks.REGISTRY:
        if bench.name == "arbitration":  # synthetic: instances generated from config, no input file
            assert bench.validator is None
            continue
        module, _, function = bench.validator.partition(":")
        assert callable(getattr(__import__(module, fromlist=[function]), function)), bench.name


def test_the_default_config_reads_every_demo_file_whole_and_rejects_nothing(monkeypatch):
    monkeypatch.chdir(REPO)
    checks = validate_data.check(CONFIG)
    assert list(checks) == benchmarks.selected_names(CONFIG)
    assert checks["arbitration"] is None
    files = {c.path: c for found in checks.values() for c in found or ()}
    for path, n in DEMO_FILES.items():
        assert files[path].read == n and not files[path].problems, path
    # ContextConflict: one check per subset folder, each folder's every sample file (no max_per_subset sample)
    folders = {path: c for path, c in files.items() if c.benchmark == "contextconflict"}
    assert len(folders) == 12
    for path, c in folders.items():
        assert c.read == len(list((REPO / path).glob("*.json"))) == 3, path
    assert not validate_data.stops_run(checks)
    text = validate_data.report_text(checks)
    assert "resources/demo/conflicts/conflicts.jsonl" in text and text.rstrip().endswith("0 rejected")


def edit_line(path, index: int, change) -> None:
    """Replace JSON Lines record ``index`` (from 0) of ``path`` by ``change(record)``."""
    lines = path.read_text().splitlines()
    lines[index] = json.dumps(change(json.loads(lines[index])))
    path.write_text("\n".join(lines) + "\n")


def plant(demo, benchmark):
    """One bad record in the copy's file of ``benchmark``: (path as config names it, where, field)."""
    if benchmark == "conflicts":
        edit_line(demo / "conflicts/conflicts.jsonl", 6, lambda r: {**r, "conflict_type": "Conflict due to gossip"})
        return "resources/demo/conflicts/conflicts.jsonl", "line 7", "conflict_type"
    if benchmark == "conflictbank":
        edit_line(demo / "conflictbank/QA_dataset.jsonl", 2, lambda r: {**r, "options": r["options"][:3]})
        return "resources/demo/conflictbank/QA_dataset.jsonl", "line 3", "options"
    if benchmark == "nq_swap":
        edit_line(demo / "nq_swap/dev.jsonl", 4, lambda r: {**r, "sub_answer": []})
        return "resources/demo/nq_swap/dev.jsonl", "line 5", "sub_answer"
    if benchmark == "memotrap":
        path = demo / "memotrap/3-hate-speech-ending.csv"
        lines = path.read_text().splitlines()
        lines[2] = lines[2].rsplit(",", 1)[0] + ",7"  # an answer_index past the classes
        path.write_text("\n".join(lines) + "\n")
        return "resources/demo/memotrap/3-hate-speech-ending.csv", "line 3", "answer_index"
    path = demo / "data/perspective_conflict/allsides/2.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "question": ""}))
    return "resources/demo/data/perspective_conflict/allsides", "perspective_conflict/allsides/2.json", "question"


@pytest.mark.parametrize("benchmark", ["conflicts", "conflictbank", "nq_swap", "memotrap", "contextconflict"])
def test_a_planted_bad_record_is_named_by_file_place_and_field_and_fails_the_check(tmp_path, monkeypatch, benchmark):
    demo = in_copy(tmp_path, monkeypatch)
    path, where, field = plant(demo, benchmark)
    checks = validate_data.check(CONFIG)
    bad = [c for found in checks.values() for c in found or () if c.problems]
    assert [c.path for c in bad] == [path]
    [problem] = bad[0].problems
    assert (problem.where, problem.field) == (where, field)
    assert validate_data.stops_run(checks)
    text = validate_data.report_text(checks)
    assert f"{path}: {where}: field {field!r}:" in text and text.rstrip().splitlines()[-1].startswith("FAILED")


def test_under_on_error_reject_the_rejections_are_listed_and_the_check_passes(tmp_path, monkeypatch):
    demo = in_copy(tmp_path, monkeypatch)
    plant(demo, "conflicts")
    config = copy.deepcopy(CONFIG)
    config["conflicts"]["on_error"] = "reject"
    checks = validate_data.check(config, ["conflicts"])
    [found] = checks["conflicts"]
    assert (found.read, len(found.problems), found.stops_run) == (DEMO_FILES[found.path] - 1, 1, False)
    assert not validate_data.stops_run(checks)
    assert "on_error is reject: a run records these 1 and goes on" in validate_data.report_text(checks)


def test_the_reports_hold_one_row_per_file_and_one_per_rejection(tmp_path, monkeypatch):
    demo = in_copy(tmp_path, monkeypatch)
    plant(demo, "nq_swap")
    checks = validate_data.check(CONFIG, ["conflicts", "nq_swap"])
    validate_data.write_reports(checks, tmp_path / "summary.tsv", tmp_path / "rejections.tsv")
    summary = list(csv.DictReader(open(tmp_path / "summary.tsv"), delimiter="\t"))
    assert [(r["file"], r["rejected"]) for r in summary] == [
        ("resources/demo/conflicts/conflicts.jsonl", "0"),
        ("resources/demo/nq_swap/dev.jsonl", "1"),
    ]
    [rejection] = csv.DictReader(open(tmp_path / "rejections.tsv"), delimiter="\t")
    assert (rejection["benchmark"], rejection["where"], rejection["field"]) == ("nq_swap", "line 5", "sub_answer")


def test_a_missing_file_is_one_named_problem(tmp_path, monkeypatch):
    in_copy(tmp_path, monkeypatch)
    (tmp_path / "resources/demo/conflictbank/QA_dataset.jsonl").unlink()
    [found] = validate_data.check(CONFIG, ["conflictbank"])["conflictbank"]
    assert found.read == 0 and found.problems[0].where == "(file)" and "No such file" in found.problems[0].reason


@pytest.mark.slow
def test_snakemake_validate_data_prints_counts_per_file_then_fails_on_a_planted_row(tmp_path):
    workflow = copy_workflow(tmp_path / "wf")
    result = snakemake_cmd("validate_data", "--cores", "1", cwd=workflow, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    for path, n in DEMO_FILES.items():
        assert any(line.split()[1:2] == [path] and line.split()[-2:] == [str(n), "0"] for line in output.splitlines())
    report = list(csv.DictReader(open(workflow / "results/validate_data.tsv"), delimiter="\t"))
    assert len(report) == len(DEMO_FILES) + 12 and {r["rejected"] for r in report} == {"0"}

    path, where, field = plant(workflow / "resources/demo", "conflicts")
    result = snakemake_cmd("validate_data", "--cores", "1", cwd=workflow, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{path}: {where}: field {field!r}: 'Conflict due to gossip' is not one of" in output

"""The report's construction section: both pipelines' step counts beside the papers' (with their
sources), rejections by reason, and no construction in the smoke DAG."""

from __future__ import annotations

from conflictlab.construction import summary
from conflictlab.construction.conflictbank import PAPER_COUNTS

from .conftest import REPO


def test_conflictbank_rows_carry_the_papers_totals_and_say_where_table_3_is_missing():
    steps = [{"step": "dump lines read", "count": "21"}] + [{"step": s, "count": "3"} for s in PAPER_COUNTS]
    rows = {r["step"]: r for r in summary.steps_table(summary.conflictbank_steps(steps)).to_pylist()}
    assert rows["dump lines read"]["n"] == 21 and rows["dump lines read"]["paper"] is None
    assert "Table 3" in rows["dump lines read"]["paper_source"]
    assert "not in the stored copy" in rows["dump lines read"]["paper_source"]
    assert rows["QA pairs"]["paper"] == 553_117 and rows["QA pairs"]["paper_source"].startswith(
        summary.CONFLICTBANK_URL
    )
    assert {s: rows[s]["paper"] for s in PAPER_COUNTS} == PAPER_COUNTS


def test_contextconflict_rows_count_each_step_and_the_audit_items():
    instance = {"final": True, "rejection": None, "sample": "{}"}
    instances = [
        {**instance, "final": False},  # a SciFact question (step 1)
        instance,
        {**instance, "rejection": "cut at the token limit", "sample": None},
    ]
    rejections = [
        {"source": "folio.jsonl", "record": "3", "stage": "read", "reason": "label 'Maybe' is not True"},
        {"source": "inferential_premises_fig7", "record": "folio/1", "stage": "generate", "reason": "cut"},
    ]
    audit = [{"audit": "double"}, {"audit": "spot"}, {"audit": "spot"}]
    rows = {r["step"]: r["n"] for r in summary.contextconflict_steps(instances, rejections, audit)}
    assert rows == {
        "base records refused at reading": 1,
        "generations (every request, both SciFact steps)": 3,
        "generations rejected by the prompt's rules": 1,
        "final generations (one per sample)": 2,
        "samples built (final, rules passed)": 1,
        "audit sheet items: double": 1,
        "audit sheet items: sampled": 0,
        "audit sheet items: spot": 2,
    }


def test_rejections_are_counted_by_pipeline_file_stage_and_reason_and_kept_evidence_is_not():
    dump = [{"file": "d.json", "line": n, "field": "<line>", "reason": "is not JSON"} for n in (3, 9)]
    statuses = ["kept", "not conflicting", "kept", "not conflicting", "refusal: refusal-like opening"]
    cc = [{"source": "f.jsonl", "record": "2", "stage": "read", "reason": "no 'evidence'"}]
    rows = summary.rejections_table(dump, statuses, cc).to_pylist()
    assert [(r["pipeline"], r["stage"], r["reason"], r["n"]) for r in rows] == [
        ("ConflictBank", "read", "<line>: is not JSON", 2),  # d.json sorts before evidence.parquet
        ("ConflictBank", "quality control", "not conflicting", 2),
        ("ConflictBank", "quality control", "refusal: refusal-like opening", 1),
        ("ContextConflict", "read", "no 'evidence'", 1),
    ]


def test_the_report_captions_name_the_generator_and_say_the_demo_data_is_poor():
    steps = (REPO / "report" / "construction_steps.rst").read_text()
    assert 'snakemake.config["construction"]["generator"]' in steps
    assert "poor by design" in steps and "not a reproduction" in steps
    assert "results/construction/contextconflict/audit/" in steps and "Table 3" in steps
    assert (
        'snakemake.config["construction"]["generator"]' in (REPO / "report" / "construction_rejections.rst").read_text()
    )


def test_the_smoke_run_builds_no_construction(smoke_run):
    """config/smoke.yaml turns construction.default_target off, so the smoke DAG stays as it was
    (construction's own tests are above and in test_construction_*.py); the default DAG's plan of
    the construction outputs is held by test_hosted.py's whole-DAG plan."""
    workflow, run = smoke_run
    assert run.returncode == 0, run.stderr[-3000:]
    assert not (workflow / "results" / "construction").exists()
    assert not list((workflow / "results" / "benchmarks").glob("construction*"))

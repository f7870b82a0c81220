"""ContextConflict construction: base records read strictly, the prompts' validation rules, samples the
existing loader accepts, a resumed run that resends nothing, and the audit sheets read back."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from conflictlab.construction import audit
from conflictlab.construction import contextconflict as cc
from conflictlab.construction.models import complete, open_generator
from conflictlab.contextconflict.dataset import load_released
from conflictlab.stats import wilson_interval
from tests.fake_openai import FakeOpenAI

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo"
SOURCES = {
    "scifact_claims": str(DEMO / "construction/scifact/claims_dev.jsonl"),
    "scifact_corpus": str(DEMO / "construction/scifact/corpus.jsonl"),
    "folio": str(DEMO / "construction/folio/folio_v2_validation.jsonl"),
    "entailmentbank": str(DEMO / "construction/entailmentbank/task_1/dev.jsonl"),
    "conflictbank": str(DEMO / "conflictbank/QA_dataset.jsonl"),
}


def _reply(route, body):
    """A generator that follows each prompt's rules (but breaks FOLIO's: it drops a premise)."""
    prompt = body["messages"][-1]["content"]
    if "Generate a Clear Question" in prompt:
        return "Does the intervention change the measured outcome?"
    if prompt.startswith("Task:Generate conflicting evidence"):
        n = len(re.findall(r"^\d+\. ", prompt.split("Original Evidence:")[1], flags=re.M))
        return "\n".join(
            f"{i}. A larger cohort {i} reported the opposite effect on the outcome." for i in range(1, n + 1)
        )
    if prompt.startswith("Your task:"):
        premises = json.loads(prompt.split("Premises:")[1].split("\nHypothesis:")[0])
        if "Ilse" in prompt or "Tomas" in prompt:
            premises = premises[1:]
        return "\n".join(
            f"{i}. {p}" for i, p in enumerate(premises + ["Some of them changed their routine last year."], 1)
        )
    if "temporal marker" in prompt:
        return "Who was the subject's employer in 2031?"
    return "Where did the subject work?"


def _generate_with(server, tmp_path):
    hosted = {"base_url": server.base_url, "model": "fake", "backoff_s": 0.01, "max_backoff_s": 0.05}

    def run():
        with open_generator(None, hosted, {}, cache_dir=tmp_path / "requests", writer="cc") as (backend, tokenizer):

            def generate(jobs):
                out = complete(
                    backend,
                    tokenizer,
                    [[{"role": "user", "content": j.prompt}] for j in jobs],
                    max_new_tokens=200,
                    seed=0,
                    rows=[j.key for j in jobs],
                )
                return [(c.text, c.finish_reason) for c in out]

            return cc.construct(SOURCES, generate, n=2, seed=0)

    return run


def test_constructed_samples_load_through_the_released_loader_and_rejections_name_their_reason(tmp_path):
    with FakeOpenAI(reply=_reply, rate_429=0.1, rate_500=0.1, retry_after_s=0.01, seed=3) as server:
        instances, rejections = _generate_with(server, tmp_path)()
    written = cc.write_release(instances, tmp_path / "data")
    reasons = {(r["source"], r["record"]): r["reason"] for r in rejections.to_pylist()}
    assert reasons[(SOURCES["folio"], "3")] == "label 'Maybe' is not True, False or Uncertain"
    assert reasons[(SOURCES["scifact_claims"], "3")].startswith("no 'evidence'")
    assert (
        reasons[("inferential_premises_fig7", "folio/1301")] == "an original premise is missing, changed or reordered"
    )
    loaded = {}
    for kind, subsets in {
        "misinformation": ["sci_data", "cb_claim_evidence"],
        "inferential": ["entailment_bank"],
        "temporal": ["cb_claim_evidence_tmp"],
    }.items():
        table, _ = load_released(tmp_path / "data", kind, subsets=subsets, on_error="fail").tables()
        loaded.update({r["sample_id"]: r for r in table.to_pylist()})
    assert len(loaded) == len(written) == 8  # 2 per subset; FOLIO's two broke the rules
    sci = next(r for k, r in loaded.items() if "sci_data" in k)
    assert sci["accuracy_labels"].count(False) == sci["accuracy_labels"].count(True)  # as many conflicting as original
    temporal = [r for k, r in loaded.items() if "cb_claim_evidence_tmp" in k]
    assert all(r["answer"] for r in temporal)


def test_a_resumed_construction_sends_no_cached_request_twice(tmp_path):
    with FakeOpenAI(reply=_reply) as server:
        run = _generate_with(server, tmp_path)
        first, _ = run()
        sent = len(server.received)
        again, _ = run()
        assert len(server.received) == sent and server.resent_after_completion() == 0
    assert again.equals(first)


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("1. A\n2. B", "2 statements for 3 originals"),
        ("1. Sleep onset was not earlier.\n2. x y\n3. z w", "a statement is a simple 'not' negation of an original"),
        ("Here:\n1. a\n2. b\n3. c", "not a numbered list only"),
        ("1. p\n2. q\n3. r", None),
    ],
)
def test_conflicting_statements_follow_figure_6s_rules(reply, reason):
    check = cc.check_conflicting_statements(["Sleep onset was earlier.", "a b", "c d"])
    assert check(reply) == reason


def test_question_rules_of_figures_9_and_10():
    assert cc.check_temporal_question("Who was Ada's employer in 2030?") is None
    assert cc.check_temporal_question("Was Ada employed by Orrin Shipyards in 2030?") == "a yes/no question"
    assert cc.check_temporal_question("Who was Ada's employer?") == "no specific year"
    assert "more than 20" in cc.check_temporal_question(" ".join(["word"] * 21) + " 2030?")
    check = cc.check_general_question(["Orrin Shipyards", "Lumen Analytics"])
    assert check("Where did Ada work?") is None
    assert check("Did Ada work at Orrin Shipyards?") == "not a WH-question"
    assert check("Where did Ada work, Orrin Shipyards?") == "reveals a claim's content"
    assert (
        cc.check_premises(["a.", "b."])("1. a.\n2. b.\n3. c.\n4. d.\n5. e.") == "3 statements added (0, 1 or 2 allowed)"
    )


def test_temporal_answer_follows_the_asked_year_against_the_span():
    span = ["2 December, 2026", "15 June, 2031"]
    assert [cc.temporal_answer(f"Who in {y}?", span, "old", "new") for y in (2020, 2028, 2040)] == [
        "old",
        "new",
        "INSUFFICIENT_INFORMATION",
    ]


def _items(kind, subset, n):
    return [
        {
            "item_id": f"{subset}/{i:02d}",
            "conflict_type": kind,
            "subset": subset,
            "check": "c",
            "question": "q?",
            "evidence": ["e1", "e2"],
            "answer": "a",
        }
        for i in range(n)
    ]


def test_audit_plan_uses_the_papers_rates_seeded():
    items = _items("inferential", "folio", 7) + _items("misinformation", "sci_data", 10)
    rates = {"sample_rate": 0.3, "spot_rate": 0.1, "seed": 1}
    plan = audit.audit_plan(items, double=["inferential"], sampled=["misinformation"], constructed=True, **rates)
    counts = {(i["subset"], i["audit"], i["annotators"]) for i in plan}
    assert counts == {("folio", "double", ("A", "B")), ("sci_data", "sampled", ("A",))}
    assert sum(i["subset"] == "folio" for i in plan) == 7 and sum(i["subset"] == "sci_data" for i in plan) == 3
    spot = audit.audit_plan(_items("ambiguity", "root", 25), double=[], sampled=[], constructed=False, **rates)
    assert len(spot) == 3 and all(i["audit"] == "spot" for i in spot)  # ceil(10% of 25)
    again = audit.audit_plan(items, double=["inferential"], sampled=["misinformation"], constructed=True, **rates)
    assert again == plan


def test_completed_sheets_give_agreement_with_a_wilson_interval_and_list_disagreements(tmp_path):
    plan = audit.audit_plan(
        _items("inferential", "folio", 6),
        double=["inferential"],
        sampled=[],
        sample_rate=0.3,
        spot_rate=0.1,
        seed=0,
        constructed=True,
    )
    written = audit.write_sheets(plan, tmp_path)
    assert sorted(p.name for p in written) == ["sheet_A.csv", "sheet_A.html", "sheet_B.csv", "sheet_B.html"]
    assert "sheet_A.csv" in (tmp_path / "sheet_A.html").read_text()
    for annotator, wrong in (("A", {0}), ("B", {0, 1})):
        path = tmp_path / f"sheet_{annotator}.csv"
        rows = list(csv.DictReader(path.open()))
        for k, row in enumerate(rows):
            row["verdict"], row["corrected_answer"] = ("wrong", "Uncertain") if k in wrong else ("ok", "")
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=audit.SHEET_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    table, disagreements = audit.agreement(
        audit.read_sheets({"A": tmp_path / "sheet_A.csv", "B": tmp_path / "sheet_B.csv"})
    )
    overall = table.to_pylist()[0]
    assert (overall["measure"], overall["n"]) == ("agreement (double)", 6)
    assert (overall["share"], overall["low"], overall["high"]) == pytest.approx(wilson_interval(5, 6))
    assert disagreements == [{"item_id": "folio/01", "A": "ok", "B": "wrong/uncertain"}]
    wrong = [r for r in table.to_pylist() if r["measure"] == "judged wrong" and r["group"] == "all"][0]
    assert (wrong["n"], wrong["share"]) == (6, pytest.approx(2 / 6))


def test_a_sheet_with_an_empty_verdict_is_refused_naming_file_row_and_field(tmp_path):
    plan = audit.audit_plan(
        _items("misinformation", "sci_data", 3),
        double=[],
        sampled=["misinformation"],
        sample_rate=1.0,
        spot_rate=0.1,
        seed=0,
        constructed=True,
    )
    audit.write_sheets(plan, tmp_path)
    with pytest.raises(audit.SheetError, match=r"sheet_A.csv: row 2 \(item sci_data/00\): field 'verdict' is ''"):
        audit.read_sheets({"A": tmp_path / "sheet_A.csv"})


@pytest.mark.parametrize(
    "source, read",
    [
        ("scifact_corpus", lambda path: cc.scifact_jobs(SOURCES["scifact_claims"], path)),
        ("scifact_claims", lambda path: cc.scifact_jobs(path, SOURCES["scifact_corpus"])),
        ("folio", cc.folio_jobs),
        ("entailmentbank", cc.entailmentbank_jobs),
        ("conflictbank", cc.conflictbank_jobs),
    ],
)
def test_a_torn_line_in_any_base_file_is_a_rejection_naming_file_line_and_reason(tmp_path, source, read):
    """Every base reader: a line that is not JSON, appended after the demo file's records, is one
    "read" rejection with the file, its line number and the reason; the other records are unchanged."""
    lines = Path(SOURCES[source]).read_text(encoding="utf-8").splitlines()
    torn = tmp_path / Path(SOURCES[source]).name
    torn.write_text("\n".join([*lines, '{"id": 99, "claim": "cut off']) + "\n", encoding="utf-8")
    before, after = read(SOURCES[source]), read(str(torn))
    added = [r for r in after.rejections if r["source"] == str(torn) and r["record"] == str(len(lines) + 1)]
    assert len(added) == 1 and added[0]["stage"] == "read" and added[0]["reason"].startswith("not JSON")
    assert len(after.rejections) == len(before.rejections) + 1
    assert [j.key for j in after.jobs] == [j.key for j in before.jobs]

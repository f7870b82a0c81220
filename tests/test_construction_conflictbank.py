"""ConflictBank construction: dump streaming, facts, claims, evidence through the
fault-injecting fake endpoint, quality controls, and QA records that the
existing ConflictBank loader and evaluation read unchanged."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from conflictlab.conflictbank.dataset import build_records
from conflictlab.conflictbank.evaluation import conflictbank_conversations, read_out_hosted
from conflictlab.conflictbank.metrics import setting_metrics
from conflictlab.conflictbank.prompts import SETTINGS
from conflictlab.construction import conflictbank as cb
from conflictlab.construction import planted
from conflictlab.construction import wikidata as wd
from conflictlab.construction.models import BudgetError, check_budget, open_generator
from conflictlab.judges.backends import open_judge
from conflictlab.lm.chat import ChatBackend, hosted_client
from tests.fake_openai import FakeOpenAI
from tests.test_endpoint import _wait_for

RELATIONS = list(planted.RELATIONS)


def _dump(path, n_people, extra=()):
    opener = bz2.open if str(path).endswith(".bz2") else gzip.open
    entities = list(planted.planted_entities(n_people))
    for position, line in extra:
        entities.insert(position, line)
    with opener(path, "wb") as stream:
        wd.write_dump(entities, stream)
    return len(entities)


def _scan_all(path, n_chunks):
    scans = [
        wd.scan_chunk(path, RELATIONS, chunk=c, n_chunks=n_chunks, display="dump.json.gz") for c in range(n_chunks)
    ]
    tables = [s.tables() for s in scans]
    return scans, tables


@pytest.mark.parametrize("suffix", [".json.gz", ".json.bz2"])
def test_chunks_partition_the_dump_and_every_bad_line_is_rejected_with_file_line_and_reason(tmp_path, suffix):
    path = tmp_path / f"dump{suffix}"
    # line numbers: "[" is line 1, entity k is line k + 2
    _dump(
        path,
        30,
        extra=[(3, '{"type":"item","id":"Q7",'), (5, '["not", "an", "entity"]'), (8, '{"type":"item","id":"X1"}')],
    )
    scans, tables = _scan_all(path, 3)
    rejected = sorted((r["line"], r["field"]) for s in scans for r in s.rejections)
    assert rejected == [(5, "<line>"), (7, "<line>"), (10, "id")]
    assert all(r["file"] == "dump.json.gz" and r["reason"] for s in scans for r in s.rejections)
    ids = pl.concat([pl.from_arrow(t[0]) for t in tables]).get_column("id")
    assert ids.n_unique() == ids.len()  # no entity in two chunks
    people_and_objects = sum(1 for _ in planted.planted_entities(30))
    assert ids.len() == people_and_objects
    facts = sum(t[1].num_rows for t in tables)
    assert facts == 30 * len(RELATIONS)


def test_a_chunk_flushed_in_many_batches_gives_the_same_tables(tmp_path, monkeypatch):
    path = tmp_path / "dump.json.gz"
    _dump(path, 40)
    whole = wd.scan_chunk(path, RELATIONS).tables()
    monkeypatch.setattr(wd, "FLUSH_ROWS", 7)
    batched = wd.scan_chunk(path, RELATIONS).tables()
    assert all(a.equals(b) for a, b in zip(whole, batched))
    assert batched[0].num_rows == sum(1 for _ in planted.planted_entities(40))


def test_one_triple_per_subject_relation_prefers_the_preferred_statement():
    def st(target, rank):
        return {
            "mainsnak": {
                "snaktype": "value",
                "property": "P69",
                "datavalue": {"value": {"id": target}, "type": "wikibase-entityid"},
            },
            "rank": rank,
        }

    entity = {
        "type": "item",
        "id": "Q1",
        "labels": {"en": {"value": "A"}},
        "claims": {"P69": [st("Q2", "normal"), st("Q3", "preferred"), st("Q4", "deprecated")]},
    }
    row, facts = wd.read_entity(entity, ["P69"])
    assert row == ("Q1", "A", None, None) and facts == [("P69", "Q3")]
    entity["claims"]["P69"] = [st("Q2", "deprecated")]
    assert wd.read_entity(entity, ["P69"])[1] == []


def test_gathered_facts_substitute_same_type_objects_that_differ_from_the_answer(tmp_path):
    path = tmp_path / "dump.json.gz"
    _dump(path, 60)
    _, tables = _scan_all(path, 2)
    entities = pl.concat([pl.from_arrow(t[0]) for t in tables])
    facts, counts = cb.gather_all(entities.lazy(), pl.concat([pl.from_arrow(t[1]) for t in tables]).lazy(), seed=3)
    assert facts.height == 60 * len(RELATIONS) and counts[-1][1] == facts.height
    kind = dict(zip(entities.get_column("label"), entities.get_column("type")))
    for row in facts.iter_rows(named=True):
        assert len({row["object"], row["replaced_object"], row["distractor"]}) == 3
        assert kind[row["object"]] == kind[row["replaced_object"]] == kind[row["distractor"]]
        assert row["semantic_description"] != row["subject_description"]
    again, _ = cb.gather_all(entities.lazy(), pl.concat([pl.from_arrow(t[1]) for t in tables]).lazy(), seed=3)
    assert again.equals(facts)  # seeded: the same bytes
    written = tmp_path / "claims.parquet"
    steps = cb.write_claims(
        entities.lazy(),
        pl.concat([pl.from_arrow(t[1]) for t in tables]).lazy(),
        RELATIONS,
        written,
        seed=3,
        part_facts=70,
    )
    assert steps == counts + [("claims (default and three conflicts per fact)", 4 * facts.height)]
    in_parts = pl.read_parquet(written).sort(["subject_id", "relation"])
    # pools are global: the parts give each fact the same substitutes as one piece
    assert in_parts.drop(cb.CLAIM_COLUMNS).equals(facts.sort(["subject_id", "relation"]))


def _reply(route, body):
    """Evidence that names the claim; judges that say yes, except for one kind."""
    content = body["messages"][-1]["content"]
    if "response_format" in body:
        field = "entails" if '"entails"' in content else "contradict"
        return json.dumps({field: "no" if "Planted award" in content and field == "contradict" else "yes"})
    claim = content.split("Claim: ")[1].split("\n")[0]
    if "Planted city" in claim:
        return "I'm sorry, I cannot write that."
    return f"Records show that {claim}"


def _claims(tmp_path, n_people):
    """The claims of a planted dump of ``n_people``, scanned in two chunks and gathered."""
    path = tmp_path / "dump.json.gz"
    _dump(path, n_people)
    _, tables = _scan_all(path, 2)
    facts, _ = cb.gather_all(
        pl.concat([pl.from_arrow(t[0]) for t in tables]).lazy(),
        pl.concat([pl.from_arrow(t[1]) for t in tables]).lazy(),
        seed=0,
    )
    return cb.claims_table(facts, RELATIONS)


def _construct(tmp_path, server, n_people=12, sample=None, max_attempts=8):
    claims = cb.sample_facts(_claims(tmp_path, n_people).lazy(), sample, seed=0)
    requests = cb.evidence_requests(claims, seed=0)
    hosted = {
        "base_url": server.base_url,
        "model": "fake",
        "backoff_s": 0.01,
        "max_backoff_s": 0.05,
        "max_attempts": max_attempts,
    }
    with open_generator(None, hosted, {}, cache_dir=tmp_path / "requests", writer="construct") as (backend, tokenizer):
        evidence = cb.generate_evidence(requests, backend, tokenizer, max_new_tokens=64, seed=0)
    judge = {"backend": "openai", "endpoint": hosted}
    with open_judge(judge, None, request_cache=tmp_path / "requests", writer="construct") as j:
        checked = cb.quality_controls(evidence, j.ask, checks=["refusal", "entailment", "conflict"])
    return claims, checked, cb.qa_records(claims, checked, seed=0)


def test_constructed_qa_pairs_pass_the_conflictbank_loader_and_evaluation(tmp_path):
    # A quarter of all attempts fault, so a request fails all of the client's default 8 with probability 0.25^8:
    # over the ~370 requests of this test (490 attempts), about once in 175 runs (it did, under load, 2026-12-07);
    # 12 attempts make it about once in 45,000. Which request draws which fault depends on arrival order, so on timing.
    with FakeOpenAI(reply=_reply, rate_429=0.1, rate_500=0.1, rate_drop=0.05, retry_after_s=0.01, seed=2) as server:
        claims, checked, records = _construct(tmp_path, server, max_attempts=12)
    status = dict(checked.group_by("status").len().iter_rows())
    # cities refused, awards not confirmed as conflicting: only schools and employers make QA pairs
    assert status["refusal: refusal-like opening"] == 12 * 4
    assert status["not conflicting"] == 12 * 3
    assert len(records) == 12 * 2
    built = build_records(enumerate(records), source="constructed", on_error="fail")
    assert len(built.rows) == 24 and not built.rejections
    table, _ = built.tables()
    conversations = conflictbank_conversations(table, list(SETTINGS))
    assert len(conversations) == 24 * len(SETTINGS)
    row = built.rows[0]
    assert row["options"][ord(row["correct_letter"]) - 65] == row["object"]
    assert row["options"][ord(row["replaced_letter"]) - 65] == row["replaced_object"]
    # the whole evaluation: a hosted model's read-out, then the metrics table
    with (
        FakeOpenAI() as server,
        hosted_client(
            {"base_url": server.base_url, "model": "reader"}, cache_dir=tmp_path / "read", writer="read"
        ) as client,
    ):
        predictions = read_out_hosted(ChatBackend(client), table, list(SETTINGS), model_name="reader")
    assert predictions.num_rows == 24 * len(SETTINGS)
    metrics = setting_metrics(predictions, n_resamples=200, workers=1).to_pylist()
    assert {m["setting"] for m in metrics} == {s.name for s in SETTINGS}


def test_a_resumed_construction_sends_no_cached_request_twice(tmp_path):
    with FakeOpenAI(reply=_reply) as server:
        _construct(tmp_path, server, n_people=6, sample=5)
        first = len(server.received)
        _, _, records = _construct(tmp_path, server, n_people=6, sample=5)
        assert len(server.received) == first  # every evidence and verdict came from the caches
        assert server.resent_after_completion() == 0
    assert records


def test_paid_requests_need_a_price_and_a_budget_that_covers_the_estimate():
    conversations = [[{"role": "user", "content": "x" * 4000}]] * 10  # identical: counted once
    table = check_budget(
        "job", "m", conversations, 100, price={"prompt": 1.0, "completion": 10.0}, budget_usd=1.0, hosted=True
    )
    assert table.column("requests").to_pylist() == [1, 1]
    distinct = [[{"role": "user", "content": f"{i}" + "x" * 4000}] for i in range(1000)]
    with pytest.raises(BudgetError, match="more than construction.budget_usd"):
        check_budget("job", "m", distinct, 100, price={"prompt": 1.0, "completion": 10.0}, budget_usd=1.0, hosted=True)
    with pytest.raises(BudgetError, match="prices is not set"):
        check_budget("job", "m", distinct, 100, price=None, budget_usd=100.0, hosted=True)
    check_budget("job", "m", distinct, 100, price=None, budget_usd=None, hosted=False)  # local: free


def test_steps_table_sets_the_papers_counts_beside_ours():
    table = cb.steps_table([("facts (one triple per subject-relation pair)", 10), ("QA pairs", 2), ("other", 1)])
    assert table.column("paper").to_pylist() == [2_863_205, 553_117, None]


# A construction job that generates evidence for the claims in argv[3] through the endpoint at argv[1],
# its request cache in argv[2]; the test kills it mid-run.
KILLED_EVIDENCE_JOB = """
import sys
import polars as pl
from conflictlab.construction import conflictbank as cb
from conflictlab.construction.models import open_generator
url, cache, claims = sys.argv[1:]
requests = cb.evidence_requests(pl.read_parquet(claims), seed=0)
hosted = {"base_url": url, "model": "fake", "backoff_s": 0.01, "max_backoff_s": 0.05}
with open_generator(None, hosted, {}, cache_dir=cache, writer="construct") as (backend, tokenizer):
    cb.generate_evidence(requests, backend, tokenizer, max_new_tokens=64, seed=0)
"""


def test_a_killed_evidence_job_resumes_without_resending_an_answered_request(tmp_path):
    """SIGKILL mid-run, then the same step again: every request answered before the kill comes
    from the request cache, the rest are sent once, and the evidence equals an uninterrupted run's."""
    claims = _claims(tmp_path, 3)
    claims.write_parquet(tmp_path / "claims.parquet")
    requests = cb.evidence_requests(claims, seed=0)
    total = requests.height
    cache = tmp_path / "requests"

    def cached_lines() -> int:
        return sum(f.read_text().count("\n") for f in cache.rglob("*.jsonl")) if cache.exists() else 0

    with FakeOpenAI(reply=_reply, rate_slow=1.0, slow_s=0.05) as server:
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        job = subprocess.Popen(
            [sys.executable, "-c", KILLED_EVIDENCE_JOB, server.base_url, str(cache), str(tmp_path / "claims.parquet")],
            env=env,
        )
        try:
            _wait_for(lambda: len(set(server.completed)) >= 5, 120)
            server.hold()  # no answer can fall between the server and the job's cache line
            assert server.settled(10)
            _wait_for(lambda: cached_lines() == len(set(server.completed)), 10)
            job.send_signal(signal.SIGKILL)
            job.wait(10)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
        server.release()
        answered_before = len(set(server.completed))
        assert 5 <= answered_before < total  # killed mid-run
        hosted = {"base_url": server.base_url, "model": "fake", "backoff_s": 0.01, "max_backoff_s": 0.05}
        with open_generator(None, hosted, {}, cache_dir=cache, writer="construct") as (backend, tokenizer):
            resumed = cb.generate_evidence(requests, backend, tokenizer, max_new_tokens=64, seed=0)
        assert server.resent_after_completion() == 0
        assert len(set(server.completed)) == total  # the rest were sent once each
    with FakeOpenAI(reply=_reply) as fresh:
        hosted = {"base_url": fresh.base_url, "model": "fake"}
        with open_generator(None, hosted, {}, cache_dir=tmp_path / "fresh", writer="construct") as (backend, tokenizer):
            reference = cb.generate_evidence(requests, backend, tokenizer, max_new_tokens=64, seed=0)
    assert resumed.equals(reference)

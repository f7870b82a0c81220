"""Hosted chat models as generators (conflictlab.lm.chat) and their jobs,
through the fault-injecting fake endpoint (tests/fake_openai.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from conflictlab.lm.chat import (
    MISSING_LOGPROB,
    READ_OUT_GENERATION,
    READ_OUT_LOGPROBS,
    READ_OUT_NONE,
    ChatBackend,
    _choice,
    parse_choice,
)
from conflictlab.lm.endpoint import Endpoint, EndpointClient, RequestCache
from conflictlab.lm.generation import DecodingParams
from tests.conftest import REPO, snakemake_cmd, with_models
from tests.fake_openai import FakeOpenAI, default_reply, letter_logprobs

KEY_VARIABLE, SECRET = "CONFLICTLAB_TEST_KEY", "sk-test-5e3c7a1d9b"


def chat_backend(server: FakeOpenAI, **endpoint) -> ChatBackend:
    settings = {
        "base_url": server.base_url,
        "model": "fake-chat",
        "backoff_s": 0.001,
        "max_backoff_s": 0.01,
        **endpoint,
    }
    return ChatBackend(EndpointClient(Endpoint.from_settings(settings)))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A", 0),
        ("B.", 1),
        ("(C) because", 2),
        ("Answer: D", 3),
        ("The answer is B", 1),
        ("answer: c", None),
        ("E", None),
        ("", None),
        (None, None),
        ("Because A", None),
    ],
)
def test_parse_choice_reads_only_a_leading_letter(text, expected):
    assert parse_choice(text, ("A", "B", "C", "D")) == expected


def test_read_choices_takes_the_first_tokens_logprobs():
    with FakeOpenAI() as server:
        conversations = [[{"role": "user", "content": f"question {i}"}] for i in range(6)]
        read = chat_backend(server).read_choices(conversations, ("A", "B", "C", "D"), rows=[str(i) for i in range(6)])
    for conversation, r in zip(conversations, read):
        expected = dict(letter_logprobs(conversation))
        assert r.read_out == READ_OUT_LOGPROBS
        assert r.logprobs == pytest.approx(tuple(expected[letter] for letter in "ABCD"))
        assert "ABCD"[r.chosen] == max(expected, key=expected.get)


def test_read_choices_without_logprobs_parses_the_reply_and_says_so():
    with FakeOpenAI(logprobs=False) as server:
        conversations = [[{"role": "user", "content": f"question {i}"}] for i in range(4)]
        read = chat_backend(server, logprobs=False).read_choices(
            conversations, ("A", "B", "C", "D"), rows=["0", "1", "2", "3"]
        )
    for conversation, r in zip(conversations, read):
        letter = default_reply("/chat/completions", {"messages": conversation})[0]
        assert r.read_out == READ_OUT_GENERATION
        assert r.logprobs[r.chosen] == 0.0 and "ABCD"[r.chosen] == letter
        assert sorted(r.logprobs)[:3] == [MISSING_LOGPROB] * 3


def test_a_listed_option_missing_from_top_logprobs_gets_the_authors_floor():
    reply = {
        "choices": [
            {
                "message": {"content": "B"},
                "finish_reason": "stop",
                "logprobs": {
                    "content": [
                        {
                            "token": "B",
                            "logprob": -0.1,
                            "top_logprobs": [{"token": " B", "logprob": -0.1}, {"token": "A", "logprob": -2.5}],
                        }
                    ]
                },
            }
        ]
    }
    read = _choice(reply, ("A", "B", "C", "D"), Endpoint(base_url="http://x/v1", model="m"))
    assert (
        read.read_out == READ_OUT_LOGPROBS
        and read.logprobs == (-2.5, -0.1, MISSING_LOGPROB, MISSING_LOGPROB)
        and read.chosen == 1
    )


def test_refusals_and_content_filter_stops_are_no_answers():
    endpoint = Endpoint(base_url="http://x/v1", model="m")
    refusal = {
        "choices": [{"message": {"content": None, "refusal": "I can't help with that."}, "finish_reason": "stop"}]
    }
    read = _choice(refusal, ("A", "B"), endpoint)
    assert (read.read_out, read.chosen, read.finish_reason) == (READ_OUT_NONE, None, "refusal")
    with FakeOpenAI(rate_content_filter=1.0) as server:
        backend = chat_backend(server)
        [completion] = backend.generate([[{"role": "user", "content": "q"}]], DecodingParams(max_new_tokens=8))
        [choice] = backend.read_choices([[{"role": "user", "content": "q"}]], ("A", "B"), rows=["q"])
    assert completion.text is None and completion.finish_reason == "content_filter"
    assert choice.read_out == READ_OUT_NONE and choice.chosen is None


def test_chat_generation_is_greedy_and_counts_the_endpoints_tokens():
    with FakeOpenAI() as server:
        backend = chat_backend(server)
        conversation = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which evidence?"}]
        [full, cut] = backend.generate(
            [conversation, conversation + [{"role": "user", "content": "again"}]], DecodingParams(max_new_tokens=3)
        )
        sent = [json.loads(json.dumps(b)) for _, b in server.bodies] if hasattr(server, "bodies") else None
    assert full.text.split() == default_reply("/chat/completions", {"messages": conversation}).split()[:3]
    assert full.finish_reason == "length" and full.n_tokens == 3 and full.n_prompt_tokens > 0 and full.token_ids == []
    assert cut.finish_reason == "length"
    if sent is not None:
        assert all(b["temperature"] == 0.0 and b["max_tokens"] == 3 for b in sent)


def test_the_estimate_counts_characters_over_four_and_every_reply_at_its_limit():
    from conflictlab.report.usage import estimate_row, estimate_table

    conversations = [
        [{"role": "system", "content": "a" * 10}, {"role": "user", "content": "b" * 30}],
        [{"role": "user", "content": "c" * 8}],
    ]
    row = estimate_row("generate/m", "m", conversations, 16, {"prompt": 2.0, "completion": 8.0})
    assert (row["requests"], row["prompt_tokens"], row["max_completion_tokens"]) == (2, 12, 32)
    assert row["max_cost_usd"] == pytest.approx((12 * 2.0 + 32 * 8.0) / 1e6)
    assert estimate_row("g", "m", conversations + conversations[:1], 16, None)["requests"] == 2  # sent once
    table = estimate_table([row, estimate_row("judge", "j", conversations[:1], 4, None)]).to_pylist()
    assert table[-1]["job"] == "total" and table[-1]["requests"] == 3 and table[-1]["max_cost_usd"] is None


def test_usage_summary_sums_jobs_and_prices_tokens():
    from conflictlab.lm.endpoint import USAGE_SCHEMA
    from conflictlab.report.usage import usage_summary

    base = dict(endpoint="http://x/v1", requests=3, cache_hits=1, sent=4, answered=2, retries=2, failed=0, waited_s=0.1)
    usage = pa.Table.from_pylist(
        [
            {**base, "job": "generate/a", "model": "m", "prompt_tokens": 1000, "completion_tokens": 100},
            {**base, "job": "generate/a", "model": "m", "prompt_tokens": 500, "completion_tokens": 50},
            {**base, "job": "judges/gold", "model": "j", "prompt_tokens": 10, "completion_tokens": 1},
        ],
        schema=USAGE_SCHEMA,
    )
    rows = usage_summary(usage, {"m": {"prompt": 2.0, "completion": 10.0}}).to_pylist()
    assert [(r["job"], r["requests"], r["prompt_tokens"]) for r in rows] == [
        ("generate/a", 6, 1500),
        ("judges/gold", 3, 10),
        ("total", 9, 1510),
    ]
    assert rows[0]["cost_usd"] == pytest.approx((1500 * 2.0 + 150 * 10.0) / 1e6)
    assert rows[1]["cost_usd"] is None and rows[2]["cost_usd"] is None


def test_shard_rows_record_filtered_replies_as_such():
    from conflictlab.lm.generation import Completion
    from conflictlab.lm.shards import GenerationJob, Request, _row

    job = GenerationJob(model="m", model_checksum="hosted:m@x", backend="chat", params=DecodingParams(8))
    request = Request("s1", "t", "[]", [], messages=[{"role": "user", "content": "q"}])
    row = _row(job, request, Completion([], None, "content_filter", n_prompt_tokens=7, n_tokens=0))
    assert (row["status"], row["response"], row["n_prompt_tokens"], row["response_token_ids"]) == (
        "content_filter",
        None,
        7,
        None,
    )
    ok = _row(job, request, Completion([], "fine", "stop", n_prompt_tokens=7, n_tokens=1))
    assert (ok["status"], ok["response"], ok["n_response_tokens"]) == ("ok", "fine", 1)


def conflicts_reply(route: str, body: dict) -> str:
    """Task 1 names a type; Taxonomy-aware replies in its form; the others cite."""
    user = body["messages"][-1]["content"]
    if "Answer with the type's name only" in user:
        return "Type: Complementary information"
    if "Then reply in exactly this form" in user:
        return (
            "Type: Conflicting opinions or research outcomes\nExplanation: they differ.\nResponse: Sources "
            "disagree [1][2]."
        )
    return "The results agree [1]."


def test_conflicts_answers_from_a_chat_model_parse_without_a_prefill():
    from conflictlab.conflicts.responses import answer_queries_hosted

    queries = [
        {
            "query_id": i,
            "question": f"q{i}",
            "conflict_type": "no_conflict",
            "search_results": [{"title": "t", "snippet": "s", "url": "u", "date": None}] * 2,
        }
        for i in range(2)
    ]
    with FakeOpenAI(reply=conflicts_reply) as server:
        types, responses = answer_queries_hosted(
            chat_backend(server),
            {"max_new_tokens": 40, "seed": 0},
            queries,
            model="fake",
            strategies=["vanilla", "taxonomy_aware", "pipeline"],
        )
    assert types.column("predicted").to_pylist() == ["complementary"] * 2
    assert types.column("status").to_pylist() == ["ok"] * 2
    rows = responses.to_pylist()
    assert [r["status"] for r in rows] == ["ok"] * 6
    aware = [r for r in rows if r["strategy"] == "taxonomy_aware"]
    assert {r["predicted_type"] for r in aware} == {"conflicting_opinions"} and aware[0][
        "response"
    ] == "Sources disagree [1][2]."
    assert {r["given_type"] for r in rows if r["strategy"] == "pipeline"} == {"complementary"}
    assert all(r["n_prompt_tokens"] > 0 for r in rows)


# --------------------------------------------------------------------------
# The workflow with a hosted generator and a hosted judge.


def schema_instance(schema: dict):
    """The smallest value of a JSON schema (the judges' reply schemas): first enum option, one-item arrays."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        return {name: schema_instance(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [schema_instance(schema.get("items", {"type": "string"}))] * max(1, schema.get("minItems", 1))
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return "The evidence supports it."


def workflow_reply(route: str, body: dict) -> str:
    """Judges get a reply that fits their schema; every other request the fake's default reply."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return json.dumps(schema_instance(response_format["json_schema"]["schema"]))
    return default_reply(route, body)


# The endpoint jobs and what they feed; the local scorer's Shapley values of
# the hosted responses are planned in the test below, and run as any model's.
HOSTED_TARGETS = ["results/tables/usage.csv"]


def hosted_overlay(base_url: str) -> dict:
    endpoint = {
        "base_url": base_url,
        "api_key_env": KEY_VARIABLE,
        "backoff_s": 0.01,
        "max_backoff_s": 0.2,
        "max_attempts": 40,
        "concurrency": 4,
    }
    return {
        "models": {
            "fake-chat": {"hosted": {**endpoint, "model": "fake-chat"}, "prices": {"prompt": 1.0, "completion": 2.0}},
            "fake-judge": {"hosted": {**endpoint, "model": "fake-judge"}},
        },
        "generators": ["fake-chat"],
        "scorers": ["smollm2-135m-instruct"],
        "arbitration": {"models": ["fake-chat"]},
        "mechanistic": {"models": []},
        "steering": {"models": []},
        # the local model's method reruns ask the endpoint nothing; they only made each run longer
        "methods": {"models": []},
        "conflictbank": {"models": ["fake-chat"], "embedded": {"models": []}},
        "conflicts": {"models": ["fake-chat"]},
        "judges": {"model": "fake-judge", "backend": "openai"},
    }


def hosted_workflow(folder: Path, base_url: str, tiny_llama_dir: Path) -> Path:
    from tests.conftest import copy_workflow

    workflow = with_models(copy_workflow(folder), {"smollm2-135m-instruct": tiny_llama_dir})
    (workflow / "hosted.yaml").write_text(yaml.safe_dump(hosted_overlay(base_url)))
    return workflow


def snakemake_args(*extra: str) -> list[str]:
    return [*HOSTED_TARGETS, "--cores", "2", *extra, "--configfile", "config/smoke.yaml", "hosted.yaml"]


KEY_ENV = {KEY_VARIABLE: SECRET}


def endpoint_outputs(workflow: Path, base_url: str) -> dict[str, pa.Table]:
    """Every Parquet the endpoint's answers made (usage counts excluded: retries
    differ), the endpoint's URL (its port differs between servers, and it is
    part of the judge's name) replaced by a placeholder."""
    import pyarrow.compute as pc

    def neutral(table: pa.Table) -> pa.Table:
        for i, field in enumerate(table.schema):
            if pa.types.is_string(field.type):
                table = table.set_column(i, field, pc.replace_substring(table.column(i), base_url, "<endpoint>"))
        return table

    found = {}
    for path in sorted((workflow / "results").rglob("*.parquet")):
        relative = path.relative_to(workflow).as_posix()
        # a hidden folder: shards, or the temporary folder of a write the kill cut short (conflictlab.io.atomic_path)
        if "/usage/" in relative or "/requests/" in relative or "/cache/" in relative or "/." in relative:
            continue
        found[relative] = neutral(pq.read_table(path))
    return found


@pytest.mark.early
@pytest.mark.slow
def test_hosted_models_survive_faults_and_a_kill(tmp_path, tiny_llama_dir):
    """A run through a clean endpoint, and one through an endpoint with 20% 429s
    (Retry-After), 5% 500s and 5% dropped connections that is killed with
    SIGKILL mid-run and rerun: the same outputs, no completed request sent
    twice, and the key nowhere in results or logs."""
    with FakeOpenAI(reply=workflow_reply, api_key=SECRET) as clean:
        reference = hosted_workflow(tmp_path / "clean", clean.base_url, tiny_llama_dir)
        run = snakemake_cmd(*snakemake_args(), cwd=reference, env=KEY_ENV, timeout=1200)
        assert run.returncode == 0, run.stderr[-4000:]
        assert clean.resent_after_completion() == 0
        estimate = snakemake_cmd(
            "results/usage/estimate.csv",
            "--cores",
            "1",
            "--configfile",
            "config/smoke.yaml",
            "hosted.yaml",
            cwd=reference,
            env=KEY_ENV,
        )
        assert estimate.returncode == 0, estimate.stderr[-3000:]
        assert len(clean.received) == len(clean.completed)  # the estimate sent nothing
    expected = endpoint_outputs(reference, clean.base_url)
    # The dry estimate counts exactly the requests the run then sent (CONFLICTS: at most,
    # since a Pipeline query whose Task 1 label is unreadable is not sent).
    import csv

    sent = {row["job"]: int(row["requests"]) for row in csv.DictReader(open(reference / "results/tables/usage.csv"))}
    estimated = {
        row["job"]: int(row["requests"]) for row in csv.DictReader(open(reference / "results/usage/estimate.csv"))
    }
    for job in ("generate/fake-chat", "arbitration_evaluate/fake-chat", "conflictbank_evaluate/fake-chat"):
        assert estimated[job] == sent[job], job
    assert (
        estimated["conflicts_respond/fake-chat (Task 1)"] + estimated["conflicts_respond/fake-chat (Task 2)"]
        >= sent["conflicts_respond/fake-chat"]
    )
    assert {
        "results/responses/fake-chat/ambiguity.parquet",
        "results/judges/faithfulness.parquet",
        "results/conflictbank/fake-chat/predictions.parquet",
        "results/arbitration/fake-chat/predictions.parquet",
        "results/conflicts/fake-chat/responses.parquet",
    } <= set(expected)

    with FakeOpenAI(
        reply=workflow_reply, api_key=SECRET, rate_429=0.2, retry_after_s=0.05, rate_500=0.05, rate_drop=0.05, seed=1
    ) as faulty:
        workflow = hosted_workflow(tmp_path / "faulty", faulty.base_url, tiny_llama_dir)
        exe = Path(sys.executable).parent / "snakemake"
        env = dict(os.environ, **KEY_ENV, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        process = subprocess.Popen(
            [str(exe), *snakemake_args()],
            cwd=workflow,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 600
        while len(faulty.completed) < 20 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed"
        faulty.hold()  # nothing more completes; kill once every completed answer is in its job's cache
        # the answers already past the gate counted first: counting cache lines before could match the
        # server's count with one answer cached but not yet counted and another counted but not yet cached
        assert faulty.settled(60)
        cache = workflow / "results" / "requests" / "cache"
        cached = lambda: sum(path.read_bytes().count(b"\n") for path in cache.glob("*.jsonl"))  # noqa: E731
        settle = time.monotonic() + 60
        while cached() != len(faulty.completed) and time.monotonic() < settle:
            time.sleep(0.05)
        assert cached() == len(faulty.completed)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        killed_at = len(faulty.completed)
        # only Snakemake's own process was waited for: a job process of the killed group may not have
        # exited yet, and would take the answer to a request it sent during the hold without caching it
        faulty.release(abandon_held=True)
        assert snakemake_cmd("--unlock", *snakemake_args(), cwd=workflow, env=KEY_ENV).returncode == 0
        rerun = snakemake_cmd(*snakemake_args("--rerun-incomplete"), cwd=workflow, env=KEY_ENV, timeout=1200)
        assert rerun.returncode == 0, rerun.stderr[-4000:]
        assert faulty.resent_after_completion() == 0
        assert sum(faulty.faults.values()) > 0 and killed_at >= 20
    got = endpoint_outputs(workflow, faulty.base_url)
    assert set(got) == set(expected)
    for path, table in expected.items():
        assert got[path].equals(table), path
    usage = pq.read_table(workflow / "results/usage/generate/fake-chat.parquet").to_pylist()
    assert usage[0]["answered"] + usage[0]["cache_hits"] >= 1
    for folder in (workflow / "results", workflow / ".snakemake" / "log"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    "overlay, message",
    [
        ({"scorers": ["fake-chat"]}, "scorers names fake-chat, a hosted model"),
        (
            {"mechanistic": {"models": ["fake-chat"]}},
            "probes, spectral energy and projections: model fake-chat runs on backend hosted (chat), "
            "which lacks capability activations",
        ),
        (
            {
                "models": {
                    "fake-chat": {
                        "hosted": {
                            "base_url": "http://127.0.0.1:9/v1",
                            "model": "m",
                            "api_key_env": "CONFLICTLAB_UNSET_KEY",
                        }
                    }
                }
            },
            "CONFLICTLAB_UNSET_KEY",
        ),
        (
            {
                "models": {
                    "fake-chat": {
                        "hosted": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "requests_per_minute": 0}
                    }
                }
            },
            "requests_per_minute",
        ),
    ],
)
def test_bad_hosted_configuration_is_named_before_any_job(workflow_copy, overlay, message):
    base = {
        "models": {"fake-chat": {"hosted": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}},
        "generators": ["fake-chat"],
    }
    for key, value in overlay.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) and key == "models" else value
    (workflow_copy / "bad.yaml").write_text(yaml.safe_dump(base))
    run = snakemake_cmd("-n", "--configfile", "bad.yaml", cwd=workflow_copy, env={"CONFLICTLAB_UNSET_KEY": ""})
    assert run.returncode != 0
    assert message in run.stderr + run.stdout


def test_arbitration_and_conflictbank_read_a_hosted_model_from_its_logprobs():
    """Each row's letter is the most likely of the options among the first
    token's alternatives (the fake's hashed letter), read_out logprobs; without
    logprobs the reply's letter, read_out generation."""
    from conflictlab.arbitration.evaluation import arbitration_conversations, evaluate_instances_hosted
    from conflictlab.arbitration.prompts import ArbitrationConfig, generate_instances
    from conflictlab.conflictbank.dataset import build_records, read_jsonl
    from conflictlab.conflictbank.evaluation import conflictbank_conversations, read_out_hosted
    from conflictlab.conflictbank.prompts import settings_named

    instances = generate_instances(ArbitrationConfig(n_per_setting=2, seeds=(0,), settings=("modality",)))
    records, _ = build_records(
        read_jsonl(REPO / "resources/demo/conflictbank/QA_dataset.jsonl"), source="demo", max_per_relation=1
    ).tables()
    settings = settings_named(["default", "misinformation"])
    with FakeOpenAI() as server:
        arbitration = evaluate_instances_hosted(chat_backend(server), instances, model_name="fake")
        conflictbank = read_out_hosted(chat_backend(server), records, settings, model_name="fake")
    with FakeOpenAI(logprobs=False) as server:
        generated = read_out_hosted(chat_backend(server, logprobs=False), records, settings, model_name="fake")

    def best(conversation, options):
        listed = dict(letter_logprobs(conversation))
        return max(options, key=lambda letter: listed[letter])

    conversations = arbitration_conversations(instances)
    assert arbitration.column("predicted_letter").to_pylist() == [best(c, "AB") for c in conversations]
    assert set(arbitration.column("read_out").to_pylist()) == {"logprobs"}
    conversations = conflictbank_conversations(records, settings)
    assert conflictbank.column("predicted_letter").to_pylist() == [best(c, "ABCD") for c in conversations]
    first = conflictbank.column("probabilities").to_pylist()[0]
    assert sum(first) == pytest.approx(1.0) and max(first) > 0.5
    assert generated.column("predicted_letter").to_pylist() == [
        default_reply("/chat/completions", {"messages": c})[0] for c in conversations
    ]
    assert set(generated.column("read_out").to_pylist()) == {"generation"}


def test_a_hosted_generator_plans_every_default_target_but_its_own_weights(workflow_copy):
    """The whole default DAG with a hosted generator beside the demo's: nothing
    prepares its folder or reads its weights (Table 3's causal intervention is
    for local generators), and every endpoint job of it is planned."""
    overlay = {
        "models": {"fake-chat": {"hosted": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}},
        "generators": ["smollm2-135m-instruct", "fake-chat"],
        "conflicts": {"models": ["fake-chat"]},
    }
    (workflow_copy / "mixed.yaml").write_text(yaml.safe_dump(overlay))
    plan = snakemake_cmd("-n", "--configfile", "mixed.yaml", cwd=workflow_copy)
    assert plan.returncode == 0, plan.stderr[-3000:]
    output = plan.stdout + plan.stderr
    assert "resources/models/fake-chat" not in output and "results/metrics/fake-chat/causal.parquet" not in output
    for path in (
        "results/responses/fake-chat/ambiguity.parquet",
        "results/conflicts/fake-chat/responses.parquet",
        "results/usage/generate/fake-chat.parquet",
        "results/metrics/smollm2-135m-instruct/causal.parquet",
        "results/metrics/fake-chat/attributions_smollm2-135m-instruct.parquet",
        "results/profiles/fake-chat.html",
        "results/tables/construction_steps.md",  # construction.default_target: both pipelines and their summary
    ):
        assert path in output, path


def test_the_served_backend_starts_vllms_server_in_the_jobs_stack_and_sends_messages(monkeypatch, tmp_path):
    """generation.backend served: the job's ExitStack holds the server (so it
    stops with the job) and the backend is the chat path, sent messages."""
    import contextlib

    import conflictlab.lm.server as server
    from conflictlab.lm.builders import generation_backend

    calls = []

    @contextlib.contextmanager
    def fake_serve(model_dir, **kwargs):
        calls.append((model_dir, kwargs))
        with FakeOpenAI() as fake:
            yield Endpoint(base_url=fake.base_url, model="model")

    monkeypatch.setattr(server, "serve_configured", fake_serve)
    settings = {"backend": "served", "dtype": "bfloat16", "vllm": {"enforce_eager": True}, "seed": 0}
    with contextlib.ExitStack() as stack:
        backend = generation_backend(
            tmp_path / "model", settings, limit=2048, stack=stack, server_log=tmp_path / "server.log"
        )
        [reply] = backend.generate([[{"role": "user", "content": "q"}]], DecodingParams(max_new_tokens=4))
    assert isinstance(backend, ChatBackend) and reply.text and reply.token_ids == []
    assert calls == [
        (
            tmp_path / "model",
            {
                "log_path": tmp_path / "server.log",
                "max_model_len": 2048,
                "engine_args": {"enforce_eager": True},
                "dtype": "bfloat16",
            },
        )
    ]
    with pytest.raises(ValueError, match="ExitStack"):
        generation_backend(tmp_path / "model", settings, limit=2048)


def test_extra_body_fields_reach_the_endpoint_and_its_cache_key():
    """A provider's own fields (Gemini's reasoning_effort) go into every
    decoding request, so a thinking and a non-thinking run of one API model
    are different requests, cached apart."""
    with FakeOpenAI() as server:
        plain = chat_backend(server)
        no_thinking = chat_backend(server, extra_body={"reasoning_effort": "none"})
        conversation = [[{"role": "user", "content": "q"}]]
        plain.generate(conversation, DecodingParams(max_new_tokens=4))
        no_thinking.generate(conversation, DecodingParams(max_new_tokens=4))
        bodies = [body for _, body in server.bodies]
    assert "reasoning_effort" not in bodies[0] and bodies[1]["reasoning_effort"] == "none"
    assert bodies[1]["max_tokens"] == 4 and bodies[1]["temperature"] == 0.0
    assert RequestCache.key("/chat/completions", bodies[0]) != RequestCache.key("/chat/completions", bodies[1])
    with pytest.raises(ValueError, match="extra_body"):
        Endpoint(base_url="http://x/v1", model="m", extra_body=["reasoning_effort"])

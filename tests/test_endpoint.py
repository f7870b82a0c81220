"""The endpoint client (retries, limits, cache, key handling) against a fault-injecting fake server."""

import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from conflictlab.lm.endpoint import (
    USAGE_SCHEMA,
    Endpoint,
    EndpointClient,
    EndpointError,
    RateLimiter,
    RequestCache,
    _retry_after_s,
    process_usage,
    usage_table,
)

from .fake_openai import FakeOpenAI, default_reply, word_id

REPO = Path(__file__).resolve().parents[1]
CHAT = "/chat/completions"


class Sleeps:
    """An injected sleep that records waits and advances a fake clock instead of sleeping."""

    def __init__(self):
        self.waits: list[float] = []
        self.now = 0.0
        self._lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.waits.append(seconds)
            self.now += seconds

    def clock(self) -> float:
        return self.now


def chat_bodies(n: int, *, tag: str = "q", max_tokens: int = 12) -> list[dict]:
    return [
        {"model": "m", "messages": [{"role": "user", "content": f"{tag} {i}"}], "max_tokens": max_tokens}
        for i in range(n)
    ]


def rows(n: int) -> list[str]:
    return [f"row-{i}" for i in range(n)]


def client(
    server: FakeOpenAI, sleeps: Sleeps | None = None, cache: RequestCache | None = None, **settings
) -> EndpointClient:
    settings = {"backoff_s": 0.01, "max_attempts": 10, "timeout_s": 5.0, **settings}
    extra = {"sleep": sleeps, "clock": sleeps.clock} if sleeps is not None else {}
    return EndpointClient(
        Endpoint(base_url=server.base_url, model="m", **settings), cache=cache, rng=random.Random(0), **extra
    )


@pytest.fixture(scope="module")
def reference():
    """Replies of a fault-free server, by request."""
    with FakeOpenAI() as server, client(server) as c:

        def replies(bodies, route=CHAT):
            return [r["choices"] for r in c.post_many(route, bodies, rows=rows(len(bodies)))]

        yield replies


def choices(responses):
    return [r["choices"] for r in responses]


@pytest.mark.parametrize(
    "kind, faults, settings",
    [
        ("429", {"rate_429": 0.4, "retry_after_s": 0.05}, {}),
        ("500", {"rate_500": 0.4}, {}),
        ("503", {"rate_503": 0.4}, {}),
        ("drop", {"rate_drop": 0.4}, {}),
        ("malformed", {"rate_malformed": 0.4}, {}),
        ("slow", {"rate_slow": 0.3, "slow_s": 0.6}, {"timeout_s": 0.3}),
    ],
)
def test_retries_through_each_fault_to_the_fault_free_replies(kind, faults, settings, reference):
    bodies = chat_bodies(12, tag=kind)
    sleeps = Sleeps()
    with FakeOpenAI(seed=3, **faults) as server, client(server, sleeps, **settings) as c:
        out = c.post_many(CHAT, bodies, rows=rows(12))
    assert server.faults[kind] >= 2  # the fault was really injected
    assert choices(out) == reference(bodies)
    assert server.resent_after_completion() == 0
    assert c.stats.answered == 12 and c.stats.failed == 0
    assert c.stats.retries == len(sleeps.waits) >= server.faults[kind]
    if kind == "429":
        assert sum(w >= 0.05 for w in sleeps.waits) >= server.faults["429"]


def test_two_hundred_requests_through_mixed_faults(reference, capsys):
    bodies = chat_bodies(200, tag="mixed")
    sleeps = Sleeps()
    with FakeOpenAI(rate_429=0.2, retry_after_s=0.01, rate_500=0.05, rate_drop=0.05, seed=1) as server:
        with client(server, sleeps, concurrency=8, max_attempts=12) as c:
            out = c.post_many(CHAT, bodies, rows=rows(200))
    s = c.stats
    assert choices(out) == reference(bodies)
    assert s.requests == s.answered == 200 and s.failed == 0 and s.cache_hits == 0
    assert s.sent == s.answered + s.failed + s.retries == len(server.received)
    assert s.retries == server.faults["429"] + server.faults["500"] + server.faults["drop"] > 20
    assert s.waited_s == pytest.approx(sum(sleeps.waits))
    assert s.prompt_tokens == 200 * 2 and s.completion_tokens == sum(
        len(c[0]["message"]["content"].split()) for c in choices(out)
    )
    assert server.resent_after_completion() == 0
    assert capsys.readouterr() == ("", "")


def test_gives_up_after_max_attempts_naming_url_status_and_row():
    sleeps = Sleeps()
    with (
        FakeOpenAI(rate_503=1.0) as server,
        client(server, sleeps, max_attempts=4, backoff_s=1.0, max_backoff_s=3.0) as c,
    ):
        with pytest.raises(EndpointError) as caught:
            c.post(CHAT, chat_bodies(1)[0], row="sample-7")
    message = str(caught.value)
    assert f"{server.base_url}/chat/completions" in message and "503" in message and "sample-7" in message
    assert caught.value.attempts == 4 and caught.value.status == 503
    assert len(server.received) == 4 and c.stats.sent == 4 and c.stats.failed == 1 and c.stats.retries == 3
    assert [w <= bound for w, bound in zip(sleeps.waits, (1.0, 2.0, 3.0))] == [True] * 3


def test_retry_after_raises_the_wait_but_never_past_the_cap():
    sleeps = Sleeps()
    with (
        FakeOpenAI(rate_429=1.0, retry_after_s=100) as server,
        client(server, sleeps, max_attempts=3, max_backoff_s=0.5) as c,
    ):
        with pytest.raises(EndpointError, match="429"):
            c.post(CHAT, chat_bodies(1)[0])
    assert sleeps.waits == [0.5, 0.5]
    assert _retry_after_s("1.5") == 1.5 and _retry_after_s(None) is None and _retry_after_s("soon") is None
    assert 9 < _retry_after_s(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 10))) <= 10


def test_a_rejected_parameter_fails_at_once_with_the_servers_words():
    with FakeOpenAI(reject_params=("max_tokens",)) as server, client(server, Sleeps()) as c:
        with pytest.raises(EndpointError) as caught:
            c.post(CHAT, chat_bodies(1)[0], row="r1")
    assert caught.value.status == 400 and "max_tokens" in str(caught.value) and "r1" in str(caught.value)
    assert len(server.received) == 1 and c.stats.retries == 0 and c.stats.failed == 1


def test_a_200_without_choices_is_retried():
    answers = iter([httpx.Response(200, json={"error": "busy"}), httpx.Response(200, json={"choices": [{"index": 0}]})])
    transport = httpx.MockTransport(lambda request: next(answers))
    endpoint = Endpoint(base_url="http://api.invalid/v1", model="m", backoff_s=0.0)
    with EndpointClient(endpoint, transport=transport, sleep=Sleeps()) as c:
        assert c.post(CHAT, {"model": "m"}) == {"choices": [{"index": 0}]}
    assert c.stats.retries == 1 and c.stats.sent == 2


def test_one_failure_in_post_many_keeps_the_others_cached(tmp_path):
    bodies = chat_bodies(6)
    bodies[2] = {**bodies[2], "poison": True}
    with FakeOpenAI(reject_params=("poison",)) as server:
        with client(server, Sleeps(), cache=RequestCache(tmp_path, writer="a")) as c:
            with pytest.raises(EndpointError, match="row-2"):
                c.post_many(CHAT, bodies, rows=rows(6))
        assert len(RequestCache(tmp_path, writer="b")) == 5
        assert c.stats.answered == 5 and c.stats.failed == 1


def test_identical_bodies_in_one_call_are_sent_once():
    bodies = chat_bodies(3) * 2
    with FakeOpenAI() as server, client(server) as c:
        out = c.post_many(CHAT, bodies, rows=rows(6))
    assert len(server.received) == 3 and c.stats.requests == 3
    assert choices(out[:3]) == choices(out[3:])


def test_concurrency_is_bounded_and_real():
    with FakeOpenAI(rate_slow=1.0, slow_s=0.1) as server, client(server, concurrency=3) as c:
        c.post_many(CHAT, chat_bodies(12), rows=rows(12))
    assert 1 < server.max_in_flight <= 3


def test_requests_per_minute_waits_out_the_window():
    sleeps = Sleeps()
    with FakeOpenAI() as server, client(server, sleeps, concurrency=1, requests_per_minute=10) as c:
        c.post_many(CHAT, chat_bodies(25), rows=rows(25))
    # 10 at t=0, 10 at t=60, 5 at t=120.
    assert sleeps.waits == pytest.approx([60.0, 60.0])
    assert c.stats.waited_s == pytest.approx(120.0)


def test_a_request_over_the_whole_token_budget_goes_alone():
    sleeps = Sleeps()
    limiter = RateLimiter(None, 100, clock=sleeps.clock, sleep=sleeps)
    assert [limiter.acquire(500), limiter.acquire(500), limiter.acquire(40), limiter.acquire(40)] == [0, 60, 60, 0]
    assert sleeps.now == 120
    with FakeOpenAI() as server, client(server, Sleeps(), tokens_per_minute=50) as c:
        assert c.post(CHAT, chat_bodies(1, max_tokens=500)[0])["choices"]


def test_cache_is_shared_across_clients_and_survives_a_torn_line(tmp_path, caplog, reference):
    bodies = chat_bodies(10)
    with FakeOpenAI() as server:
        with client(server, cache=RequestCache(tmp_path, writer="a")) as first:
            out = first.post_many(CHAT, bodies, rows=rows(10))
        with client(server, cache=RequestCache(tmp_path, writer="b")) as second:
            again = second.post_many(CHAT, bodies, rows=rows(10))
        assert len(server.received) == 10
    assert again == out and choices(out) == reference(bodies)
    assert second.stats.cache_hits == 10 and second.stats.sent == 0
    with open(tmp_path / "a.jsonl", "a") as f:
        f.write('{"key": "abc", "respo')
    with caplog.at_level(logging.WARNING, logger="conflictlab.lm.endpoint"):
        torn = RequestCache(tmp_path, writer="a")
    assert len(torn) == 10 and torn.skipped == 1 and "skipped 1" in caplog.text
    torn.put("k", {"choices": []})  # goes on a fresh line: the torn one does not swallow it
    torn.close()
    assert len(RequestCache(tmp_path, writer="c")) == 11


KILLED_JOB = """
import json, sys
from conflictlab.lm.endpoint import Endpoint, EndpointClient, RequestCache
base_url, folder, bodies = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
endpoint = Endpoint(base_url=base_url, model="m", concurrency=4)
with EndpointClient(endpoint, cache=RequestCache(folder, writer="killed")) as c:
    c.post_many("/chat/completions", bodies, rows=[str(i) for i in range(len(bodies))])
"""


def _wait_for(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


def test_a_job_killed_mid_run_resends_nothing_it_had_answered(tmp_path, reference):
    bodies = chat_bodies(40, tag="kill")
    (tmp_path / "bodies.json").write_text(json.dumps(bodies))
    folder = tmp_path / "cache"

    def cached_lines() -> int:
        return sum(f.read_text().count("\n") for f in folder.glob("*.jsonl")) if folder.exists() else 0

    with FakeOpenAI(rate_slow=1.0, slow_s=0.05) as server:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        job = subprocess.Popen(
            [sys.executable, "-c", KILLED_JOB, server.base_url, str(folder), str(tmp_path / "bodies.json")], env=env
        )
        try:
            _wait_for(lambda: len(set(server.completed)) >= 10, 60)
            # Stop answering, so that the kill cannot fall between an answer
            # and its cache line; the job must have written (flushed) a line
            # for every answer, or this wait fails.
            server.hold()
            assert server.settled(10)
            _wait_for(lambda: cached_lines() == len(set(server.completed)), 10)
            job.send_signal(signal.SIGKILL)
            job.wait(10)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
        server.release()
        cached = cached_lines()
        assert 10 <= cached < 40
        with client(server, cache=RequestCache(folder, writer="rerun")) as rerun:
            out = rerun.post_many(CHAT, bodies, rows=rows(40))
        assert server.resent_after_completion() == 0
        assert rerun.stats.cache_hits == cached and rerun.stats.answered == 40 - cached
    assert choices(out) == reference(bodies)


def test_the_key_stays_secret(tmp_path, monkeypatch, caplog):
    secret = "sk-test-0123456789abcdef"
    wrong = "sk-wrong-fedcba9876543210"
    monkeypatch.setenv("CONFLICTLAB_TEST_KEY", secret)
    monkeypatch.setenv("CONFLICTLAB_WRONG_KEY", wrong)
    monkeypatch.delenv("CONFLICTLAB_MISSING_KEY", raising=False)
    with FakeOpenAI(api_key=secret, rate_429=0.3, seed=2) as server, caplog.at_level(logging.DEBUG):
        with client(server, cache=RequestCache(tmp_path, writer="a"), api_key_env="CONFLICTLAB_TEST_KEY") as good:
            out = good.post_many(CHAT, chat_bodies(8), rows=rows(8))
        assert len(out) == 8 and good.stats.retries > 0  # retries were logged
        with client(server, Sleeps(), api_key_env="CONFLICTLAB_WRONG_KEY") as bad:
            with pytest.raises(EndpointError) as caught:
                bad.post(CHAT, chat_bodies(1)[0], row="r")
        assert caught.value.status == 401 and len(server.received) == 8 + good.stats.retries + 1
        received = len(server.received)
        for unset in ("", None):
            if unset is None:
                monkeypatch.delenv("CONFLICTLAB_MISSING_KEY", raising=False)
            else:
                monkeypatch.setenv("CONFLICTLAB_MISSING_KEY", unset)
            with pytest.raises(KeyError, match="CONFLICTLAB_MISSING_KEY"):
                client(server, api_key_env="CONFLICTLAB_MISSING_KEY")
        assert len(server.received) == received
    texts = {
        "log": caplog.text,
        "error": str(caught.value) + repr(caught.value),
        "usage": json.dumps(usage_table("job", [good, bad]).to_pylist()),
        "cache": "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file()),
        "client": repr(good) + repr(good.endpoint) + repr(good.stats),
    }
    for where, text in texts.items():
        assert secret not in text and wrong not in text, where
    assert "401" in texts["error"] and "***" in texts["error"]  # the server quoted the key, redacted


def test_decoding_fields_for_reasoning_models():
    reasoning = Endpoint(
        base_url="http://x/v1", model="gpt-5", token_limit_param="max_completion_tokens", send_temperature=False
    )
    assert reasoning.decoding_fields(5, 7) == {"max_completion_tokens": 5, "seed": 7}
    # hidden reasoning counts within the limit: the allowance keeps the reply's own budget
    thinking = Endpoint.from_settings(
        {
            "base_url": "http://x/v1",
            "model": "gpt-5",
            "reasoning_tokens": 100,
            "token_limit_param": "max_completion_tokens",
        }
    )
    assert thinking.decoding_fields(5, 7)["max_completion_tokens"] == 105
    with pytest.raises(ValueError, match="reasoning_tokens must be an integer >= 0, got -1"):
        Endpoint(base_url="http://x/v1", model="m", reasoning_tokens=-1)
    assert Endpoint(base_url="http://x/v1", model="m", send_seed=False).decoding_fields(5, 7) == {
        "max_tokens": 5,
        "temperature": 0.0,
    }
    message = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    with FakeOpenAI(reject_params=("max_tokens", "temperature")) as server:
        with client(server, token_limit_param="max_completion_tokens", send_temperature=False) as c:
            reply = c.post(CHAT, {**message, **c.endpoint.decoding_fields(3, 0)})
        assert (
            reply["choices"][0]["finish_reason"] == "length"
            and len(reply["choices"][0]["message"]["content"].split()) == 3
        )
        with client(server) as c, pytest.raises(EndpointError, match="max_tokens"):
            c.post(CHAT, {**message, **c.endpoint.decoding_fields(3, 0)})


def test_content_filter_comes_back_as_it_is():
    with FakeOpenAI(rate_content_filter=1.0) as server, client(server) as c:
        reply = c.post(CHAT, chat_bodies(1)[0])
    assert (
        reply["choices"][0]["finish_reason"] == "content_filter" and reply["choices"][0]["message"]["content"] is None
    )
    assert len(server.received) == 1 and c.stats.retries == 0 and c.stats.answered == 1


def test_from_settings_checks_keys_and_limits():
    base = {"base_url": "http://x/v1", "model": "m"}
    assert Endpoint.from_settings({**base, "concurrency": 2, "requests_per_minute": 30}) == Endpoint(
        base_url="http://x/v1", model="m", concurrency=2, requests_per_minute=30
    )
    with pytest.raises(ValueError, match="max_attempt\\b"):
        Endpoint.from_settings({**base, "max_attempt": 3})
    with pytest.raises(ValueError, match="model"):
        Endpoint.from_settings({"base_url": "http://x/v1"})
    for key, value in [
        ("requests_per_minute", 0),
        ("tokens_per_minute", -5),
        ("concurrency", 0),
        ("max_attempts", 0),
        ("timeout_s", 0),
    ]:
        with pytest.raises(ValueError, match=key):
            Endpoint.from_settings({**base, key: value})


def test_usage_table_has_one_row_per_client():
    with FakeOpenAI() as server, client(server) as a, client(server) as b:
        a.post(CHAT, chat_bodies(1)[0])
        table = usage_table("job-1", [a, b])
    assert table.schema.equals(USAGE_SCHEMA)
    assert table.column("requests").to_pylist() == [1, 0] and table.column("job").to_pylist() == ["job-1", "job-1"]
    assert table.column("endpoint").to_pylist() == [server.base_url] * 2
    mine = [row for row in process_usage("job-2").to_pylist() if row["endpoint"] == server.base_url]
    assert [row["requests"] for row in mine] == [1, 0] and mine[0]["job"] == "job-2"


def test_openai_backend_sends_token_ids_through_the_client():
    from conflictlab.lm.generation import DecodingParams, OpenAIBackend

    prompts = [[1, 2, 3], [4, 5], [6], [7, 8, 9, 10], [11]]
    with FakeOpenAI(rate_500=0.3, seed=5) as server:
        backend = OpenAIBackend(
            Endpoint(base_url=server.base_url, model="m", backoff_s=0.0, max_attempts=10),
            eos_ids=frozenset(),
            prompts_per_request=2,
        )
        out = backend.generate(prompts, DecodingParams(max_new_tokens=4))
        backend.close()
    assert backend.client.stats.answered == 3  # 5 prompts, 2 a request
    for prompt, completion in zip(prompts, out):
        words = default_reply("/completions", {"prompt": prompt}).split()[:4]
        assert (completion.text, completion.finish_reason, completion.token_ids) == (
            " ".join(words),
            "length",
            [word_id(w) for w in words],
        )


def test_endpoint_guided_chat_sends_the_endpoints_decoding_fields():
    from conflictlab.lm.guided import EndpointGuidedChat

    seen = []

    def reply(route, body):
        seen.append(body)
        return '{"verdict": "A"}'

    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    conversations = [[{"role": "user", "content": f"judge {i}"}] for i in range(3)]
    with FakeOpenAI(reply=reply, reject_params=("temperature",)) as server:
        endpoint = Endpoint(base_url=server.base_url, model="judge", send_temperature=False)
        chat = EndpointGuidedChat(endpoint, seed=4, concurrency=2)
        assert chat.complete_json(conversations, schema, max_new_tokens=20) == ['{"verdict": "A"}'] * 3
        chat.close()
    assert chat.client.endpoint.concurrency == 2
    assert all(
        b["max_tokens"] == 20 and b["seed"] == 4 and b["response_format"]["json_schema"]["schema"] == schema
        for b in seen
    )


def test_fake_server_abandons_the_requests_held_when_asked():
    """A request that waited during a hold gets its connection closed, not an answer, after
    release(abandon_held=True), and is not completed; later requests are answered (test_hosted's kill)."""
    body = {"model": "fake", "messages": [{"role": "user", "content": "held"}]}
    with FakeOpenAI() as server:
        server.hold()
        outcome: dict = {}

        def send():
            try:
                outcome["status"] = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=30).status_code
            except httpx.TransportError as error:
                outcome["error"] = error

        waiting = threading.Thread(target=send)
        waiting.start()
        _wait_for(lambda: len(server.received) == 1, 10)
        server.release(abandon_held=True)
        waiting.join(30)
        assert "error" in outcome and not server.completed and server.faults["abandoned"] == 1
        assert httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=30).status_code == 200
        assert len(server.completed) == 1 and server.resent_after_completion() == 0

"""The endpoint client against the fake OpenAI server (tests/fake_openai.py).

    .venv/bin/python benchmarks/endpoint.py [N]

(1) Overhead: N small chat requests sent one at a time by a bare loop (one
    httpx.Client, no retries, no cache) and by EndpointClient with
    concurrency 1, both on the same fault-free server.
(2) Faults: the same N requests through EndpointClient (concurrency 8,
    backoff 0.01 s) against 20% HTTP 429 (Retry-After 0.01 s), 5% HTTP 500 and
    5% dropped connections: what it sent, retried and waited, and whether the
    replies equal the fault-free ones.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from conflictlab.lm.endpoint import Endpoint, EndpointClient  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

ROUTE = "/chat/completions"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def bodies(n: int) -> list[dict]:
    return [
        {"model": "m", "messages": [{"role": "user", "content": f"question {i}"}], "max_tokens": 16} for i in range(n)
    ]


def bare_loop(base_url: str, requests: list[dict]) -> list[dict]:
    with httpx.Client(timeout=60) as http:
        out = []
        for body in requests:
            response = http.post(
                base_url + ROUTE, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            )
            response.raise_for_status()
            out.append(response.json())
        return out


def main(n: int = 500) -> None:
    print(
        f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs); Python {platform.python_version()}, httpx "
        f"{httpx.__version__}"
    )
    requests = bodies(n)
    rows = [str(i) for i in range(n)]

    with FakeOpenAI() as server:
        bare_loop(server.base_url, requests[:20])  # warm-up: imports, first connection
        start = time.perf_counter()
        bare = bare_loop(server.base_url, requests)
        bare_s = time.perf_counter() - start
        with EndpointClient(Endpoint(base_url=server.base_url, model="m", concurrency=1)) as client:
            client.post_many(ROUTE, requests[:20], rows=rows[:20])
            start = time.perf_counter()
            ours = client.post_many(ROUTE, requests, rows=rows)
            ours_s = time.perf_counter() - start
    reference = [r["choices"] for r in bare]
    print(f"\n(1) overhead, {n} sequential chat requests, fault-free server")
    print(f"    bare httpx loop            {bare_s:7.3f} s   {1e3 * bare_s / n:6.3f} ms/request")
    print(f"    EndpointClient, conc. 1    {ours_s:7.3f} s   {1e3 * ours_s / n:6.3f} ms/request")
    print(
        f"    ratio client / bare        {ours_s / bare_s:7.3f}   (replies equal: "
        f"{[r['choices'] for r in ours] == reference})"
    )

    with FakeOpenAI(rate_429=0.2, retry_after_s=0.01, rate_500=0.05, rate_drop=0.05, seed=0) as server:
        endpoint = Endpoint(
            base_url=server.base_url, model="m", concurrency=8, backoff_s=0.01, max_backoff_s=1.0, max_attempts=12
        )
        with EndpointClient(endpoint) as client:
            start = time.perf_counter()
            faulty = client.post_many(ROUTE, requests, rows=rows)
            faulty_s = time.perf_counter() - start
        s = client.stats
        print(
            f"\n(2) {n} requests, concurrency 8, backoff 0.01 s; server: 20% 429 (Retry-After 0.01 s), 5% 500, 5% "
            "dropped"
        )
        print(
            f"    wall {faulty_s:.3f} s; injected faults: {dict(server.faults)}; server received {len(server.received)}"
        )
        print(
            f"    requests {s.requests}  sent {s.sent}  answered {s.answered}  retries {s.retries}"
            f"  ({s.retries / s.requests:.3f} per request)  failed {s.failed}"
        )
        print(
            f"    waits: {s.waited_s:.3f} s in all (summed over threads); sent == answered + failed + retries: "
            f"{s.sent == s.answered + s.failed + s.retries}"
        )
        print(
            f"    replies equal the fault-free ones: {[r['choices'] for r in faulty] == reference}; resent after "
            f"completion: {server.resent_after_completion()}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)

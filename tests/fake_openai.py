"""A small OpenAI-compatible server that injects faults, for client tests and benchmarks.

``with FakeOpenAI(rate_429=0.2) as server: ... server.base_url`` serves
``POST /v1/chat/completions`` and ``POST /v1/completions`` on 127.0.0.1 (a
free port) from a daemon thread. Replies are deterministic in the request's
messages / prompt (not its seed or token limit), so a client that retries
through faults must end with the same replies as against a fault-free server.

Faults are drawn per request, in arrival order, from ``random.Random(seed)``
(one draw decides the attempt: at most one fault, and a fault is never also
an answer): 429 with ``Retry-After``, 500, 503, a dropped connection (closed
without any response), a slow answer (``slow_s`` late; still an answer), a
200 with a truncated JSON body. A content filter hits requests by a hash of
their body, so the same request is filtered on every retry and in every run.

Counters: ``received`` ((route, digest) of every request; ``bodies``: (route,
body) of each), ``completed``
(digests answered with a well-formed 200 to a client still connected),
``max_in_flight``, ``faults`` and :meth:`FakeOpenAI.resent_after_completion`.
:meth:`FakeOpenAI.hold` stops answers (requests wait) until :meth:`release`, which can
abandon the requests that waited.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LETTERS = "ABCD"


def digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _hash(value) -> bytes:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).digest()


def default_reply(route: str, body: dict) -> str:
    """``"{L} <answer>{L}</answer> The evidence [1] supports {L}; evidence [2] differs."``,
    L picked by a hash of the messages (chat) or the one prompt (completions)."""
    letter = LETTERS[_hash(body.get("messages", body.get("prompt")))[0] % 4]
    return f"{letter} <answer>{letter}</answer> The evidence [1] supports {letter}; evidence [2] differs."


def letter_logprobs(key) -> list[tuple[str, float]]:
    """(letter, logprob) for A-D, highest first: the hashed letter the most
    likely, all below 0, probabilities summing to less than 1."""
    h = _hash(key)
    top = LETTERS[h[0] % 4]
    p_top = 0.5 + 0.4 * h[1] / 255
    others = [c for c in LETTERS if c != top]
    weights = [1 + h[2 + i] for i in range(3)]
    rest = [(1 - p_top) * 0.9 * w / sum(weights) for w in weights]
    pairs = [(top, math.log(p_top))] + [(c, math.log(p)) for c, p in zip(others, rest)]
    return sorted(pairs, key=lambda pair: -pair[1])


def word_id(word: str) -> int:
    return 1000 + int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 1000


class FakeOpenAI:
    def __init__(
        self,
        *,
        rate_429: float = 0.0,
        retry_after_s: float = 0.05,
        rate_500: float = 0.0,
        rate_503: float = 0.0,
        rate_drop: float = 0.0,
        rate_slow: float = 0.0,
        slow_s: float = 0.2,
        rate_malformed: float = 0.0,
        rate_content_filter: float = 0.0,
        seed: int = 0,
        logprobs: bool = True,
        api_key: str | None = None,
        reject_params: tuple[str, ...] = (),
        reply: Callable[[str, dict], str] | None = None,
    ):
        self.rates = [
            ("429", rate_429),
            ("500", rate_500),
            ("503", rate_503),
            ("drop", rate_drop),
            ("malformed", rate_malformed),
            ("slow", rate_slow),
        ]
        if sum(rate for _, rate in self.rates) > 1:
            raise ValueError("fault rates sum to more than 1")
        self.retry_after_s, self.slow_s = retry_after_s, slow_s
        self.rate_content_filter = rate_content_filter
        self.logprobs, self.api_key, self.reject_params = logprobs, api_key, tuple(reject_params)
        self.reply = reply or default_reply
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        # The gate answers requests while open; _answering counts those past it and not yet counted
        # (completed or abandoned), so that a test can wait for them after hold().
        self._gate = threading.Condition()
        self._open = True
        self._answering = 0
        # hold() numbers its holds; release(abandon_held=True) drops the requests waiting behind them
        self._holds = 0
        self._abandoned_holds = 0
        self.received: list[tuple[str, str]] = []
        self.bodies: list[tuple[str, dict]] = []
        self.completed: list[str] = []
        self._completed: set[str] = set()
        self._resent = 0
        self.faults: Counter = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def setup(self):
                super().setup()
                # Headers and body go out in two writes; with Nagle on, the
                # body waits for the client's delayed ACK (40 ms a request).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                fake._handle(self)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def hold(self) -> None:
        """Requests keep arriving, but none is answered until :meth:`release`."""
        with self._gate:
            self._open = False
            self._holds += 1

    def release(self, *, abandon_held: bool = False) -> None:
        """Answer requests again; with ``abandon_held``, the requests that waited during the hold get
        their connection closed instead of an answer, as if their client had died: after a kill, a
        client process that has not quite exited yet could otherwise still take an answer it will
        never cache."""
        with self._gate:
            if abandon_held:
                self._abandoned_holds = self._holds
            self._open = True
            self._gate.notify_all()

    def settled(self, timeout: float) -> bool:
        """Whether every request already past the gate when :meth:`hold` closed it has been answered and
        counted in ``completed`` (or abandoned) within ``timeout`` seconds: from then on ``completed`` is
        final, so a client whose cache holds as many answers holds exactly those."""
        with self._gate:
            return self._gate.wait_for(lambda: self._answering == 0, timeout)

    def resent_after_completion(self) -> int:
        """Requests that arrived after the same request had been answered."""
        with self._lock:
            return self._resent

    # -- one request -------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._respond(h)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        finally:
            with self._lock:
                self.in_flight -= 1

    def _respond(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        route = h.path.split("?")[0]
        if route.startswith("/v1"):
            route = route[3:]
        try:
            body = json.loads(raw)
        except ValueError:
            return self._send(h, 400, self._error("body is not JSON", "invalid_request_error"))
        key = digest(body)
        with self._lock:
            self.received.append((route, key))
            self.bodies.append((route, body))
            if key in self._completed:
                self._resent += 1
        if self.api_key is not None:
            sent = h.headers.get("Authorization", "")
            if sent != f"Bearer {self.api_key}":
                # As some APIs do: quote the key that was sent.
                given = sent.removeprefix("Bearer ")
                return self._send(h, 401, self._error(f"Incorrect API key provided: {given}.", "invalid_api_key"))
        if route not in ("/chat/completions", "/completions"):
            return self._send(h, 404, self._error(f"no route {route}", "not_found"))
        for param in self.reject_params:
            if param in body:
                message = f"Unsupported parameter: '{param}' is not supported with this model."
                return self._send(h, 400, self._error(message, "invalid_request_error", param=param))
        with self._lock:
            u, fault = self._rng.random(), None
            for kind, rate in self.rates:
                if u < rate:
                    fault = kind
                    break
                u -= rate
            if fault:
                self.faults[fault] += 1
        if fault == "429":
            return self._send(
                h,
                429,
                self._error("Rate limit reached", "rate_limit_exceeded"),
                {"Retry-After": f"{self.retry_after_s:g}"},
            )
        if fault in ("500", "503"):
            return self._send(h, int(fault), self._error("The server had an error", "server_error"))
        if fault == "drop":
            h.close_connection = True
            return
        response = self._chat(body) if route == "/chat/completions" else self._completions(body)
        if fault == "slow":
            time.sleep(self.slow_s)
        with self._gate:
            held = None if self._open else self._holds
            self._gate.wait_for(lambda: self._open)
            if held is not None and held <= self._abandoned_holds:
                with self._lock:
                    self.faults["abandoned"] += 1
                h.close_connection = True
                return
            self._answering += 1
        try:
            self._answer(h, fault, response, key)
        finally:
            with self._gate:
                self._answering -= 1
                self._gate.notify_all()

    def _answer(self, h: BaseHTTPRequestHandler, fault: str | None, response: dict, key: str) -> None:
        if fault == "malformed":
            text = json.dumps(response)
            return self._send_raw(h, 200, text[: len(text) // 2].encode())
        if not self._client_connected(h):
            with self._lock:
                self.faults["abandoned"] += 1
            h.close_connection = True
            return
        self._send(h, 200, response)
        with self._lock:
            self.completed.append(key)
            self._completed.add(key)

    # -- replies -----------------------------------------------------------
    def _filtered(self, body: dict) -> bool:
        return (
            self.rate_content_filter > 0 and int.from_bytes(_hash(body)[:8], "big") / 2**64 < self.rate_content_filter
        )

    @staticmethod
    def _limit(body: dict) -> int | None:
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        return None if limit is None else int(limit)

    def _cut(self, text: str, limit: int | None) -> tuple[list[str], str, str]:
        """(words, content, finish reason): a reply within the limit keeps its layout (line breaks)."""
        words = text.split()
        if limit is not None and len(words) > limit:
            return words[:limit], " ".join(words[:limit]), "length"
        return words, text, "stop"

    def _chat(self, body: dict) -> dict:
        messages = body.get("messages") or []
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in messages)
        key = digest(body)
        if self._filtered(body):
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": None},
                "finish_reason": "content_filter",
                "logprobs": None,
            }
            return self._envelope("chat.completion", key, [choice], prompt_tokens, 0)
        words, content, reason = self._cut(self.reply("/chat/completions", body), self._limit(body))
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": reason,
            "logprobs": None,
        }
        if body.get("logprobs") and self.logprobs:
            top = int(body.get("top_logprobs") or 0)
            content = []
            for i, word in enumerate(words):
                if i == 0:
                    alternatives = letter_logprobs(messages)
                    logprob = dict(alternatives).get(word, -0.05)
                else:
                    logprob = -0.01 * (1 + word_id(word) % 7)
                    alternatives = [(word, logprob)]
                content.append(
                    {
                        "token": word,
                        "logprob": logprob,
                        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alternatives[:top]],
                    }
                )
            choice["logprobs"] = {"content": content}
        return self._envelope("chat.completion", key, [choice], prompt_tokens, len(words))

    def _completions(self, body: dict) -> dict:
        prompt = body.get("prompt")
        if isinstance(prompt, str) or (isinstance(prompt, list) and prompt and isinstance(prompt[0], int)):
            prompts = [prompt]
        else:
            prompts = list(prompt or [])
        choices, prompt_tokens, completion_tokens = [], 0, 0
        for index, one in enumerate(prompts):
            prompt_tokens += len(one.split()) if isinstance(one, str) else len(one)
            single = {**body, "prompt": one}
            if self._filtered(single):
                choices.append({"index": index, "text": "", "finish_reason": "content_filter", "logprobs": None})
                continue
            words, content, reason = self._cut(self.reply("/completions", single), self._limit(body))
            choice = {"index": index, "text": content, "finish_reason": reason, "logprobs": None}
            if body.get("return_token_ids"):
                choice["token_ids"] = [word_id(w) for w in words]
            completion_tokens += len(words)
            choices.append(choice)
        return self._envelope("text_completion", digest(body), choices, prompt_tokens, completion_tokens)

    def _envelope(self, kind: str, key: str, choices: list, prompt_tokens: int, completion_tokens: int) -> dict:
        return {
            "id": f"cmpl-{key[:16]}",
            "object": kind,
            "created": 0,
            "model": "fake",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @staticmethod
    def _error(message: str, code: str, param: str | None = None) -> dict:
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error" if code != "server_error" else "server_error",
                "param": param,
                "code": code,
            }
        }

    # -- wire --------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
        self._send_raw(h, status, json.dumps(payload).encode(), headers)

    @staticmethod
    def _send_raw(h: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()

    @staticmethod
    def _client_connected(h: BaseHTTPRequestHandler) -> bool:
        """False when the client has closed its end (it timed out or died):
        an answer written now would reach no one, so it does not count as completed."""
        sock = h.connection
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            if not readable:
                return True
            return sock.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

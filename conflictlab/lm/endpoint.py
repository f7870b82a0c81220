"""A robust client for OpenAI-compatible endpoints, and a durable per-request cache.

* :class:`Endpoint`: where and how to send (base URL, model id, the *name*
  of the environment variable holding the key, retry, concurrency and rate
  limits, and the decoding fields the endpoint accepts).
* :class:`EndpointClient`: ``post(route, body)`` and ``post_many(route,
  bodies)`` with retries, backoff, ``Retry-After``, bounded concurrency and
  optional requests/tokens-per-minute limits; answers from a
  :class:`RequestCache` when one is given; counts what it did in
  :class:`EndpointStats` (:func:`usage_table` turns those into a table;
  :func:`process_usage`, for all clients this process built).
* :class:`RequestCache`: every well-formed response, one JSON line each, in
  append-only files that survive ``kill -9``; any job reuses any other's.

Why httpx + tenacity and not the ``openai`` SDK: we decide exactly which
failures retry (a 200 whose body is truncated or has no ``choices``, a
dropped connection, 408/409/429/5xx) and which fail at once (other 4xx);
``Retry-After`` is honoured under our own cap (``max_backoff_s``); and one
client sends vLLM's non-OpenAI extensions (token-id prompts,
``return_token_ids``) as plain JSON, with no SDK ``extra_body`` workarounds.

The key is read from the environment when a client is built and goes only
into the ``Authorization`` header: never into settings, logs, errors, the
cache or the usage table (a server body that echoes it is redacted).
"""

from __future__ import annotations

import copy
import dataclasses
import email.utils
import hashlib
import json
import logging
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pyarrow as pa
import tenacity

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
WINDOW_S = 60.0  # the rate limits are per minute


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible API and how to use it.

    ``base_url`` ends in ``/v1``; ``model`` is the served model id.
    ``api_key_env`` is the *name* of the environment variable that holds the
    key (None: no ``Authorization`` header). Each request is tried at most
    ``max_attempts`` times (the first included); the wait before retry k is
    uniform in [0, min(max_backoff_s, backoff_s * 2**(k-1))] ("full jitter"),
    raised to the server's ``Retry-After`` when it sends one, never above
    ``max_backoff_s``. ``concurrency`` requests are in flight at once;
    ``requests_per_minute`` / ``tokens_per_minute`` (None: no limit) are
    enforced over a sliding 60 s window, tokens counted as estimated prompt
    tokens (len(JSON body)/4) plus the request's token limit.

    The last four fields describe what the endpoint accepts:
    ``token_limit_param`` is ``"max_completion_tokens"`` for reasoning models
    (GPT-5, o-series), which reject ``max_tokens``; ``send_temperature`` and
    ``send_seed`` False omit those fields (reasoning models reject
    ``temperature``); ``logprobs`` False: the endpoint returns no logprobs,
    so callers use a generation-based read-out. ``extra_body`` holds fields
    a provider takes beyond OpenAI's (``{"reasoning_effort": "none"}`` turns
    Gemini 2.5 Flash's thinking off), added to every decoding request.
    ``reasoning_tokens`` is added to every request's token limit: a model
    that thinks before it answers (GPT-5, Gemini 2.5 with thinking) counts
    its hidden reasoning within that limit, so without an allowance a judge's
    20-token verdict or a one-letter read-out ends in reasoning with no
    reply. Providers bill the tokens used, not the limit.
    """

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 600.0
    max_attempts: int = 8
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    token_limit_param: str = "max_tokens"
    send_temperature: bool = True
    send_seed: bool = True
    logprobs: bool = True
    extra_body: Mapping | None = dataclasses.field(default=None, hash=False)
    reasoning_tokens: int = 0

    def __post_init__(self):
        # Checked here rather than only in from_settings: a zero concurrency
        # or rate would otherwise hang or divide by zero far from the config.
        for name in ("base_url", "model"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"endpoint {name} must be a non-empty string, got {getattr(self, name)!r}")
        for name in ("max_attempts", "concurrency"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"endpoint {name} must be a positive integer, got {value!r}")
        for name in ("timeout_s", "requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is None and name != "timeout_s":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"endpoint {name} must be a positive number, got {value!r}")
        if (
            isinstance(self.reasoning_tokens, bool)
            or not isinstance(self.reasoning_tokens, int)
            or self.reasoning_tokens < 0
        ):
            raise ValueError(f"endpoint reasoning_tokens must be an integer >= 0, got {self.reasoning_tokens!r}")
        for name in ("backoff_s", "max_backoff_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"endpoint {name} must be a number >= 0, got {value!r}")
        if self.extra_body is not None and not isinstance(self.extra_body, Mapping):
            raise ValueError(f"endpoint extra_body must be a mapping of body fields, got {self.extra_body!r}")
        if self.token_limit_param not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                "endpoint token_limit_param must be 'max_tokens' or 'max_completion_tokens', got "
                f"{self.token_limit_param!r}"
            )

    @classmethod
    def from_settings(cls, settings: Mapping) -> Endpoint:
        """An endpoint from a config mapping (``base_url``, ``model`` and any
        other field above). ValueError naming an unknown or missing key, or a
        limit that is not positive."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(f"unknown endpoint setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        missing = [name for name in ("base_url", "model") if name not in settings]
        if missing:
            raise ValueError(f"endpoint setting(s) {', '.join(missing)} missing")
        return cls(**settings)

    def api_key(self) -> str | None:
        """The key from ``os.environ[api_key_env]`` (None when no variable is
        named). KeyError naming the variable, never a value, when it is unset or empty."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise KeyError(
                f"endpoint {self.base_url}: environment variable {self.api_key_env} (the API key) is not set or empty"
            )
        return key

    def decoding_fields(self, max_new_tokens: int, seed: int) -> dict:
        """The body fields of greedy decoding that this endpoint accepts:
        ``{token_limit_param: max_new_tokens + reasoning_tokens, "temperature": 0.0,
        "seed": seed}``, without temperature / seed where ``send_temperature`` /
        ``send_seed`` is False, with ``extra_body``'s fields."""
        fields: dict = {**(self.extra_body or {}), self.token_limit_param: max_new_tokens + self.reasoning_tokens}
        if self.send_temperature:
            fields["temperature"] = 0.0
        if self.send_seed:
            fields["seed"] = seed
        return fields

    def url(self, route: str) -> str:
        """``base_url`` joined with ``route`` (``"/chat/completions"`` or ``"chat/completions"``)."""
        return self.base_url.rstrip("/") + "/" + route.lstrip("/")


class EndpointError(RuntimeError):
    """A request given up: after ``max_attempts`` tries, or at once on a
    status that does not retry. The message names the URL and route, the
    last HTTP status (or the exception kind), the request's row label and
    the attempts made; never the key or any header."""

    def __init__(self, message: str, *, url: str = "", status: int | None = None, row: str = "", attempts: int = 0):
        # Defaults, so that an unpickled copy (message only) can be built.
        super().__init__(message)
        self.url, self.status, self.row, self.attempts = url, status, row, attempts


class RequestCache:
    """Durable per-request cache: key = sha256 of the route and the canonical JSON of the full request body
    (the body holds the model id). Each process appends to its own {folder}/{writer}.jsonl, one JSON line per
    completed response, flushed after each line (a kill -9 keeps every line written; a partial last line from
    a killed writer is skipped on read, and counted in a log message). All *.jsonl files of the folder are read
    at construction, so any job's completed requests are reused by any other. Thread-safe.

    A line is ``{"key": ..., "route": ..., "response": {...}}``. The base URL
    is not in the key on purpose: a vLLM server started per job listens on a
    new port each time, and its answers are the same. ``writer`` must be
    unique among processes writing at the same time (a job name and shard).
    """

    def __init__(self, folder, *, writer: str):
        if not writer or "/" in writer or writer.startswith("."):
            raise ValueError(f"cache writer must be a plain file name, got {writer!r}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"{writer}.jsonl"
        self._lock = threading.Lock()
        self._file = None
        self._entries: dict[str, dict] = {}
        skipped = 0
        for path in sorted(self.folder.glob("*.jsonl")):
            with open(path, "rb") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                        self._entries[entry["key"]] = entry["response"]
                    except (ValueError, KeyError, TypeError):
                        skipped += 1
        if skipped:
            log.warning(
                "request cache %s: skipped %d unreadable line(s) (a writer killed mid-line)", self.folder, skipped
            )
        self.skipped = skipped

    @staticmethod
    def key(route: str, body: dict) -> str:
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(f"{route}\n{canonical}".encode()).hexdigest()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> dict | None:
        """The cached response (a copy, so callers may change it), or None."""
        with self._lock:
            response = self._entries.get(key)
        return None if response is None else copy.deepcopy(response)

    def put(self, key: str, response: dict, *, route: str = "") -> None:
        line = json.dumps({"key": key, "route": route, "response": response}, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is None:
                # A writer killed mid-line leaves a partial last line; start on
                # a fresh line so that it does not swallow our first record.
                torn = self.path.exists() and self.path.stat().st_size > 0 and self._last_byte() != b"\n"
                self._file = open(self.path, "a", encoding="utf-8")
                if torn:
                    self._file.write("\n")
            self._file.write(line)
            self._file.flush()
            self._entries[key] = copy.deepcopy(response)

    def _last_byte(self) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class EndpointStats:
    """Thread-safe counters of one client. They obey
    ``requests == cache_hits + answered + failed`` and
    ``sent == answered + failed + retries`` (every request that was sent ends
    answered or failed, and each retry is one more attempt)."""

    requests: int = 0  # distinct requests asked of the client
    cache_hits: int = 0  # answered from the cache, nothing sent
    sent: int = 0  # HTTP attempts sent (retries included)
    answered: int = 0  # requests answered by the endpoint (HTTP 200, well-formed)
    retries: int = 0
    failed: int = 0  # requests given up after max_attempts or a non-retryable status
    prompt_tokens: int = 0  # from each answered response's "usage" (0 when absent)
    completion_tokens: int = 0
    waited_s: float = 0.0  # seconds spent in backoff / Retry-After / rate-limit waits
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **amounts) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def as_dict(self) -> dict:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if not f.name.startswith("_")}


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits over a sliding 60 s
    window, on an injected clock and sleep (so tests need no real time).

    ``acquire(tokens)`` blocks until one more request of ``tokens`` fits
    both budgets, records it at the current time, and returns the seconds
    waited. A request larger than the whole token budget goes alone, once
    the window is empty, rather than waiting forever. Thread-safe: the
    decision is taken under a lock, the sleep outside it.
    """

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        clock=time.monotonic,
        sleep=time.sleep,
    ):
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self.clock, self.sleep = clock, sleep
        self._lock = threading.Lock()
        self._sent: deque[tuple[float, float]] = deque()  # (time, tokens), oldest first
        self._tokens = 0.0

    def acquire(self, tokens: float) -> float:
        if self.rpm is None and self.tpm is None:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self.clock()
                while self._sent and self._sent[0][0] <= now - WINDOW_S:
                    self._tokens -= self._sent.popleft()[1]
                wait = self._wait_needed(now, tokens)
                if wait <= 0:
                    self._sent.append((now, tokens))
                    self._tokens += tokens
                    return waited
            self.sleep(wait)
            waited += wait

    def _wait_needed(self, now: float, tokens: float) -> float:
        """Seconds until the oldest requests that must leave the window have left it (0: fits now)."""
        if not self._sent:
            return 0.0
        count, used, need = len(self._sent), self._tokens, 0.0
        for t, size in self._sent:
            fits_requests = self.rpm is None or count + 1 <= self.rpm
            fits_tokens = self.tpm is None or used + tokens <= self.tpm
            if fits_requests and fits_tokens:
                return need
            count, used, need = count - 1, used - size, t + WINDOW_S - now
        return need  # the window must empty: an oversize request goes alone


def _retry_after_s(value: str | None) -> float | None:
    """``Retry-After`` in seconds: a number (float allowed) or an HTTP-date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _Retryable(Exception):
    """A failed attempt worth another try (retrying status or malformed 200)."""

    def __init__(self, status: int | None, detail: str, retry_after_s: float | None = None):
        super().__init__(detail)
        self.status, self.detail, self.retry_after_s = status, detail, retry_after_s


class _Fatal(Exception):
    """A status that another try will not change (400, 401, 404, ...)."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, _Retryable):
        return True
    # A wrong scheme or a request httpx itself refuses to write stays wrong.
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
        return False
    return isinstance(exc, (httpx.TimeoutException, httpx.TransportError))


def _completion_tokens_limit(body: dict) -> int:
    """The request's token limit over all its prompts (a completions request
    with n prompts may generate n times the limit)."""
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or 0
    prompt = body.get("prompt")
    prompts = len(prompt) if isinstance(prompt, list) and prompt and isinstance(prompt[0], (list, str)) else 1
    return int(limit) * prompts * int(body.get("n") or 1)


class EndpointClient:
    """Sends requests to one :class:`Endpoint`; see the module docstring.

    ``cache``: answer repeated requests from it, and add every well-formed
    answer to it. ``transport`` replaces the network (tests:
    ``httpx.MockTransport``). ``sleep`` and ``clock`` drive every wait
    (backoff, Retry-After, rate limits); ``rng`` draws the jitter. The key is
    read here, so a missing one fails before anything is sent.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        cache: RequestCache | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ):
        self.endpoint = endpoint
        self.cache = cache
        self.stats = EndpointStats()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._key = endpoint.api_key()
        self._limiter = RateLimiter(endpoint.requests_per_minute, endpoint.tokens_per_minute, clock=clock, sleep=sleep)
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        limits = httpx.Limits(max_connections=endpoint.concurrency, max_keepalive_connections=endpoint.concurrency)
        self._http = httpx.Client(
            headers=headers,
            timeout=endpoint.timeout_s,
            **({"transport": transport} if transport is not None else {"limits": limits}),
        )
        with _CLIENTS_LOCK:
            _CLIENTS.append(self)

    def __enter__(self) -> EndpointClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:  # the default would show nothing secret either, but be explicit
        return f"EndpointClient({self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    def post(self, route: str, body: dict, *, row: str = "") -> dict:
        """The JSON response to one request (from the cache when it holds
        one). EndpointError when it is given up."""
        self.stats.add(requests=1)
        return self._post(route, body, row, RequestCache.key(route, body))

    def post_many(self, route: str, bodies: Sequence[dict], *, rows: Sequence[str]) -> list[dict]:
        """One response per body, in order; ``rows[i]`` labels body i in logs
        and errors. At most ``endpoint.concurrency`` requests are in flight;
        identical bodies are sent once. Every answer is cached as it arrives,
        so a failure keeps the others; once all have finished, the first
        failure (in input order) is raised, noting how many failed."""
        if len(rows) != len(bodies):
            raise ValueError(f"{len(bodies)} bodies but {len(rows)} row labels")
        keys = [RequestCache.key(route, body) for body in bodies]
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        unique = list(first.values())
        self.stats.add(requests=len(unique))
        results: dict[str, dict] = {}
        errors: list[tuple[int, BaseException]] = []
        if unique:
            with ThreadPoolExecutor(max_workers=min(self.endpoint.concurrency, len(unique))) as pool:
                futures = {i: pool.submit(self._post, route, bodies[i], rows[i], keys[i]) for i in unique}
                for i, future in futures.items():
                    try:
                        results[keys[i]] = future.result()
                    except BaseException as err:  # noqa: BLE001 - re-raised below, after the others finish
                        errors.append((i, err))
        if errors:
            errors.sort(key=lambda e: e[0])
            err = errors[0][1]
            if len(errors) > 1:
                err.add_note(f"{len(errors)} of {len(unique)} requests to {self.endpoint.url(route)} failed")
            raise err
        return [copy.deepcopy(results[key]) if first[key] != i else results[key] for i, key in enumerate(keys)]

    def _post(self, route: str, body: dict, row: str, key: str) -> dict:
        if self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                self.stats.add(cache_hits=1)
                return cached
        url = self.endpoint.url(route)
        content = json.dumps(body).encode()
        tokens = len(content) / 4 + _completion_tokens_limit(body)

        def attempt() -> dict:
            waited = self._limiter.acquire(tokens)
            if waited:
                self.stats.add(waited_s=waited)
            self.stats.add(sent=1)
            response = self._http.post(url, content=content)
            return self._read(response)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            self.stats.add(retries=1)
            exc = state.outcome.exception()
            log.info(
                "endpoint %s: %s on row %r, attempt %d of %d; retrying in %.2f s",
                url,
                self._describe(exc),
                row,
                state.attempt_number,
                self.endpoint.max_attempts,
                state.upcoming_sleep,
            )

        def sleep(seconds: float) -> None:
            self.stats.add(waited_s=seconds)
            self._sleep(seconds)

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.endpoint.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception(_is_retryable),
            before_sleep=before_sleep,
            sleep=sleep,
            reraise=True,
        )
        attempts = 0
        try:
            for attempt_state in retrying:
                attempts = attempt_state.retry_state.attempt_number
                with attempt_state:
                    response = attempt()
        except (_Retryable, _Fatal, httpx.HTTPError) as exc:
            self.stats.add(failed=1)
            status = getattr(exc, "status", None)
            detail = self._redact(getattr(exc, "detail", "") or str(exc))[:500]
            raise EndpointError(
                f"endpoint {url}: {self._describe(exc)} on row {row!r} after {attempts} attempt(s)"
                + (f": {detail}" if detail else ""),
                url=url,
                status=status,
                row=row,
                attempts=attempts,
            ) from None
        except BaseException:
            self.stats.add(failed=1)
            raise
        usage = response.get("usage") or {}
        self.stats.add(
            answered=1,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        if self.cache is not None:
            self.cache.put(key, response, route=route)
        return response

    def _read(self, response: httpx.Response) -> dict:
        status = response.status_code
        if status == 200:
            try:
                data = json.loads(response.content)
            except ValueError:
                raise _Retryable(200, f"body is not JSON: {response.text[:200]!r}") from None
            if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                raise _Retryable(200, f"body has no choices list: {response.text[:200]!r}")
            return data
        detail = response.text[:500]
        if status in RETRY_STATUSES:
            raise _Retryable(status, detail, _retry_after_s(response.headers.get("retry-after")))
        raise _Fatal(status, detail)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Full jitter, raised to Retry-After, capped at max_backoff_s."""
        k = state.attempt_number
        ceiling = min(self.endpoint.max_backoff_s, self.endpoint.backoff_s * 2 ** (k - 1))
        with self._rng_lock:
            wait = self._rng.uniform(0, ceiling)
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after_s", None)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.endpoint.max_backoff_s)

    def _describe(self, exc: BaseException | None) -> str:
        """``HTTP 503`` (with a short, redacted prefix of a malformed 200 body) or the exception kind."""
        if isinstance(exc, (_Retryable, _Fatal)):
            note = "" if exc.status != 200 else f" ({self._redact(exc.detail)[:80]})"
            return f"HTTP {exc.status}{note}"
        return type(exc).__name__

    def _redact(self, text: str) -> str:
        # Some APIs echo the (wrong) key in a 401 body.
        return text.replace(self._key, "***") if self._key else text


# Every client this process built, for process_usage: a job's script writes
# its usage table without threading each client through to its last line.
_CLIENTS: list[EndpointClient] = []
_CLIENTS_LOCK = threading.Lock()

USAGE_SCHEMA = pa.schema(
    [
        pa.field("job", pa.string()),
        pa.field("endpoint", pa.string()),
        pa.field("model", pa.string()),
        *(
            pa.field(name, pa.int64())
            for name in (
                "requests",
                "cache_hits",
                "sent",
                "answered",
                "retries",
                "failed",
                "prompt_tokens",
                "completion_tokens",
            )
        ),
        pa.field("waited_s", pa.float64()),
    ]
)


def usage_table(job: str, clients: Sequence[EndpointClient]) -> pa.Table:
    """One row per client (``USAGE_SCHEMA``): what ``job`` asked of each endpoint."""
    rows = [
        {"job": job, "endpoint": client.endpoint.base_url, "model": client.endpoint.model, **client.stats.as_dict()}
        for client in clients
    ]
    return pa.Table.from_pylist(rows, schema=USAGE_SCHEMA)


def process_usage(job: str) -> pa.Table:
    """:func:`usage_table` of every client built in this process so far (none: no rows)."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS)
    return usage_table(job, clients)

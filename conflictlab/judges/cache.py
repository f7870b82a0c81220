"""Every judge reply, stored: (judge, template, input hash) -> reply.

A cache folder holds one Parquet file per writer (a workflow job), so that
jobs running side by side never write the same file; a lookup reads them
all. The folder is not a rule output: Snakemake does not delete it when a
job reruns, which is the point — a forced rerun, or a rerun after an edit
elsewhere, asks the judge only what it has not answered before.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.io import write_parquet
from conflictlab.judges.requests import JudgeRequest

log = logging.getLogger(__name__)

CACHE_SCHEMA = pa.schema(
    [
        pa.field("judge", pa.string(), nullable=False),
        pa.field("template", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("reply", pa.string(), nullable=False),
    ]
)


class JudgeCache:
    """Replies of one judge under ``folder``; this writer's file is ``{writer}.parquet``."""

    def __init__(self, folder: str | os.PathLike, *, judge: str, writer: str):
        self.folder = Path(folder)
        self.judge = judge
        self.path = self.folder / f"{writer}.parquet"
        self.replies: dict[str, str] = {}
        self.own: dict[str, dict] = {}
        for path in sorted(self.folder.glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                if row["judge"] == judge:
                    self.replies[row["key"]] = row["reply"]
                    if path == self.path:
                        self.own[row["key"]] = row

    def get(self, request: JudgeRequest) -> str | None:
        return self.replies.get(request.key())

    def put(self, request: JudgeRequest, reply: str) -> None:
        key = request.key()
        self.replies[key] = reply
        self.own[key] = {"judge": self.judge, "template": request.template, "key": key, "reply": reply}

    def save(self) -> None:
        rows = sorted(self.own.values(), key=lambda r: (r["template"], r["key"]))
        write_parquet(pa.Table.from_pylist(rows, schema=CACHE_SCHEMA), self.path, CACHE_SCHEMA)


def cached_replies(requests: Sequence[JudgeRequest], ask: Callable[[list[JudgeRequest]], list[str]], cache: JudgeCache) -> tuple[list[str], int]:
    """The reply to every request: from ``cache`` where stored, else from
    ``ask`` (called once, on the distinct missing requests), stored and saved.
    Returns (replies in request order, number of requests sent to the judge)."""
    missing: dict[str, JudgeRequest] = {}
    for request in requests:
        if cache.get(request) is None:
            missing.setdefault(request.key(), request)
    if missing:
        asked = list(missing.values())
        for request, reply in zip(asked, ask(asked), strict=True):
            cache.put(request, reply)
        cache.save()
    log.info("judge %s: %d requests, %d sent to the judge, %d from the cache", cache.judge, len(requests), len(missing), len(requests) - len(missing))
    return [cache.get(request) for request in requests], len(missing)


class JudgeSession:
    """``ask(requests) -> replies`` through a judge behind its cache.

    ``open_judge`` (a context manager factory, e.g. a partial of
    :func:`conflictlab.judges.backends.open_judge`) is entered only when a
    request misses the cache, so a rerun whose replies are all stored loads
    no model and starts no server. ``calls`` counts requests sent to the judge.
    """

    def __init__(self, open_judge, cache: JudgeCache):
        self._open = open_judge
        self._stack = contextlib.ExitStack()
        self._judge = None
        self.cache = cache
        self.calls = 0

    def _ask_judge(self, requests: list[JudgeRequest]) -> list[str]:
        if self._judge is None:
            self._judge = self._stack.enter_context(self._open())
        return self._judge.ask(requests)

    def ask(self, requests: Sequence[JudgeRequest]) -> list[str]:
        replies, sent = cached_replies(requests, self._ask_judge, self.cache)
        self.calls += sent
        return replies

    def __enter__(self) -> "JudgeSession":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        log.info("judge %s: %d requests sent to the judge in this job", self.cache.judge, self.calls)

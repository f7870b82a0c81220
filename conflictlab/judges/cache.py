"""Every judge reply, stored: (judge, template, input hash) -> reply.

A cache folder is shared by every judge job, and by jobs running side by
side, under one protocol that needs no lock:

* **Append only.** A file, once there, is never rewritten or removed. Each
  save writes the replies a job added since its last save to a new file
  ``{writer}-{digest}.parquet`` (digest: SHA-256 of its rows), so two writers
  never write one name with different content, and the same replies give the
  same name and the same bytes.
* **Atomic.** The file is written under a hidden temporary name in the folder
  and renamed into place (:func:`conflictlab.io.write_parquet`): a reader sees
  a whole file or none; a job killed mid-save leaves at most a hidden
  ``.*.tmp`` folder, which no lookup reads.
* **Lookups read every ``*.parquet``** directly in the folder (files of
  earlier layouts, one per writer, included); where two files answer one
  request, the later file in name order wins (both hold the judge's reply to
  the same input).

In the workflow the folder is the output of rule ``judge_cache`` (an
``update`` output, never deleted when a job reruns) and an input of every
judge job (rules/judges.smk), so a forced rerun asks the judge only what it
has not answered before.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.io import read_tables, write_parquet
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


def cache_files(folder: str | os.PathLike) -> list[Path]:
    """The finished cache files of ``folder`` in name order (temporaries are hidden folders)."""
    return sorted(path for path in Path(folder).glob("*.parquet") if path.is_file())


class JudgeCache:
    """Replies of one judge under ``folder``; this job's saves are ``{writer}-{digest}.parquet``."""

    def __init__(self, folder: str | os.PathLike, *, judge: str, writer: str):
        if not writer or "/" in writer or writer.startswith("."):
            raise ValueError(f"judge cache writer {writer!r}: a file-name prefix without '/' or a leading '.'")
        self.folder = Path(folder)
        self.judge = judge
        self.writer = writer
        self.replies: dict[str, str] = {}
        self.pending: dict[str, dict] = {}  # replies not saved yet
        self.saved: list[Path] = []  # files this cache wrote
        files = cache_files(self.folder)
        stored = read_tables(files, columns=["judge", "key", "reply"], schema=CACHE_SCHEMA)
        mine = stored.filter(pc.equal(stored.column("judge"), judge))
        self.replies.update(zip(mine.column("key").to_pylist(), mine.column("reply").to_pylist()))

    def get(self, request: JudgeRequest) -> str | None:
        return self.replies.get(request.key())

    def put(self, request: JudgeRequest, reply: str) -> None:
        key = request.key()
        self.replies[key] = reply
        self.pending[key] = {"judge": self.judge, "template": request.template, "key": key, "reply": reply}

    def save(self) -> Path | None:
        """Write the pending replies to a new file; None when there are none."""
        if not self.pending:
            return None
        rows = sorted(self.pending.values(), key=lambda r: (r["template"], r["key"]))
        digest = hashlib.sha256()
        for row in rows:
            digest.update("\0".join((row["judge"], row["template"], row["key"], row["reply"])).encode() + b"\n")
        path = self.folder / f"{self.writer}-{digest.hexdigest()[:16]}.parquet"
        if not path.is_file():  # there already: the same rows, whole
            write_parquet(pa.Table.from_pylist(rows, schema=CACHE_SCHEMA), path, CACHE_SCHEMA)
        self.saved.append(path)
        self.pending = {}
        return path


def cached_replies(
    requests: Sequence[JudgeRequest], ask: Callable[[list[JudgeRequest]], list[str]], cache: JudgeCache
) -> tuple[list[str], int]:
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
    log.info(
        "judge %s: %d requests, %d sent to the judge, %d from the cache",
        cache.judge,
        len(requests),
        len(missing),
        len(requests) - len(missing),
    )
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

    def __enter__(self) -> JudgeSession:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        log.info("judge %s: %d requests sent to the judge in this job", self.cache.judge, self.calls)

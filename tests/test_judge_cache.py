"""The judge reply cache under concurrency: append-only, atomic saves
(conflictlab.judges.cache). Two processes writing the same folder at once lose
nothing, a reader never sees a half-written file, and a crash mid-save leaves
no file that a lookup reads."""

import json
import multiprocessing
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conflictlab.judges.cache import JudgeCache, cache_files, cached_replies
from conflictlab.judges.requests import JudgeRequest

ROUNDS = 40
PER_ROUND = 3


def request(name: str) -> JudgeRequest:
    return JudgeRequest(
        template="verdict_v1", messages=(("user", f"Is {name} supported?"),), fields=("verdict",), options=("0", "1")
    )


def reply_to(req: JudgeRequest) -> str:
    """A deterministic judge: the same request gets the same reply in any process."""
    return json.dumps({"verdict": str(int(req.key(), 16) % 2), "key": req.key()[:8]})


def asked(me: str, round_: int) -> list[JudgeRequest]:
    """Round ``round_`` of writer ``me``: its own requests and ones every writer asks."""
    own = [request(f"{me}-{round_}-{i}") for i in range(PER_ROUND)]
    shared = [request(f"shared-{round_}-{i}") for i in range(PER_ROUND)]
    return own + shared


def write_rounds(folder: str, me: str, writer: str, start, results) -> None:
    """One process: ROUNDS times, a fresh cache (a lookup of every file there,
    while the other process writes) answers its requests and saves the new replies."""
    start.wait(timeout=60)
    seen = {}
    for round_ in range(ROUNDS):
        cache = JudgeCache(folder, judge="j", writer=writer)
        requests = asked(me, round_)
        replies, _ = cached_replies(requests, lambda reqs: [reply_to(r) for r in reqs], cache)
        seen.update({r.key(): reply for r, reply in zip(requests, replies)})
    results.put((me, seen))


@pytest.mark.parametrize("same_writer", [False, True], ids=["two writers", "one writer name in two processes"])
def test_two_processes_writing_one_cache_folder_at_once_lose_nothing(tmp_path, same_writer):
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    writers = {"a": "job" if same_writer else "job_a", "b": "job" if same_writer else "job_b"}
    processes = [
        context.Process(target=write_rounds, args=(str(tmp_path), me, writer, start, results))
        for me, writer in writers.items()
    ]
    for process in processes:
        process.start()
    start.set()
    seen = dict(results.get(timeout=300) for _ in processes)
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0

    expected = {r.key(): reply_to(r) for me in writers for round_ in range(ROUNDS) for r in asked(me, round_)}
    assert len(expected) == (2 + 1) * PER_ROUND * ROUNDS
    for me in writers:
        assert {key: seen[me][key] for key in seen[me]} == {key: expected[key] for key in seen[me]}
    # a fresh reader finds every reply either process saved, and reads every file whole
    stored = JudgeCache(tmp_path, judge="j", writer="reader").replies
    assert stored == expected
    files = cache_files(tmp_path)
    assert all(pq.read_metadata(path).num_rows > 0 for path in files)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries left behind
    # append only: no file holds a reply twice over, nothing was rewritten into one big file
    rows = sum(pq.read_metadata(path).num_rows for path in files)
    assert len(expected) <= rows <= len(expected) + ROUNDS * PER_ROUND  # shared replies at most once per writer


def test_a_save_writes_a_new_file_and_never_rewrites_one(tmp_path):
    cache = JudgeCache(tmp_path, judge="j", writer="w")
    first = [request(f"r{i}") for i in range(3)]
    cached_replies(first, lambda reqs: [reply_to(r) for r in reqs], cache)
    (saved,) = cache_files(tmp_path)
    before = saved.read_bytes(), saved.stat().st_mtime_ns
    cached_replies(first + [request("r3")], lambda reqs: [reply_to(r) for r in reqs], cache)
    files = cache_files(tmp_path)
    assert len(files) == 2 and saved in files and (saved.read_bytes(), saved.stat().st_mtime_ns) == before
    assert {path.name.split("-")[0] for path in files} == {"w"}
    (new,) = [path for path in files if path != saved]
    assert pq.read_metadata(new).num_rows == 1  # only the reply added since the last save
    # the same replies give the same name and bytes: a second writer of them adds nothing
    other = JudgeCache(tmp_path / "other", judge="j", writer="w")
    cached_replies(first, lambda reqs: [reply_to(r) for r in reqs], other)
    assert [p.name for p in cache_files(tmp_path / "other")] == [saved.name]
    assert (tmp_path / "other" / saved.name).read_bytes() == saved.read_bytes()


def test_files_of_the_earlier_layout_are_read(tmp_path):
    import pyarrow as pa

    from conflictlab.io import write_parquet
    from conflictlab.judges.cache import CACHE_SCHEMA

    req = request("old")
    rows = [{"judge": "j", "template": req.template, "key": req.key(), "reply": "stored"}]
    write_parquet(pa.Table.from_pylist(rows, schema=CACHE_SCHEMA), tmp_path / "faithfulness.parquet", CACHE_SCHEMA)
    assert JudgeCache(tmp_path, judge="j", writer="faithfulness").get(req) == "stored"


def crash_mid_save(folder: str) -> None:
    """Save one batch whole, then die (no cleanup of any kind) half-way through writing the next."""
    cache = JudgeCache(folder, judge="j", writer="crashing")
    cached_replies([request("kept")], lambda reqs: [reply_to(r) for r in reqs], cache)

    original = pq.write_table

    def half_then_die(table, where, **kwargs):
        original(table, where, **kwargs)
        data = Path(where).read_bytes()
        Path(where).write_bytes(data[: len(data) // 2])
        os._exit(3)

    pq.write_table = half_then_die
    cached_replies([request("lost")], lambda reqs: [reply_to(r) for r in reqs], cache)


def test_a_crash_mid_save_leaves_no_partial_file_visible(tmp_path):
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=crash_mid_save, args=(str(tmp_path),))
    process.start()
    process.join(timeout=120)
    assert process.exitcode == 3
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers and all(
        p.is_dir() and p.name.endswith(".tmp") for p in leftovers
    )  # the half-written file is hidden in there
    assert len(cache_files(tmp_path)) == 1  # only the whole file
    cache = JudgeCache(tmp_path, judge="j", writer="next")  # reads without error
    assert cache.get(request("kept")) == reply_to(request("kept")) and cache.get(request("lost")) is None


def test_a_failed_save_in_process_leaves_nothing_and_keeps_its_replies(tmp_path, monkeypatch):
    cache = JudgeCache(tmp_path, judge="j", writer="w")

    def half_then_fail(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(pq, "write_table", half_then_fail)
        with pytest.raises(OSError, match="disk full"):
            cached_replies([request("x")], lambda reqs: [reply_to(r) for r in reqs], cache)
    assert list(tmp_path.iterdir()) == []
    assert cache.save() is not None  # the reply was kept: the next save writes it
    assert JudgeCache(tmp_path, judge="j", writer="r").get(request("x")) == reply_to(request("x"))

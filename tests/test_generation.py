from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from conflictlab.contextconflict.generation import build_request
from conflictlab.lm.batching import BatchPolicy
from conflictlab.lm.generation import Completion, DecodingParams, HFBackend
from conflictlab.lm.shards import GenerationJob, Request, run_sharded, run_sharded_variants
from conflictlab.lm.shared_prefix import MIN_SHARED_TOKENS

from .conftest import DEMO


class CountingBackend:
    """Echoes each prompt's length; can be told to die after some calls."""

    name = "fake"

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.prompts_seen = 0
        self.fail_after = fail_after

    def generate(self, prompts, params):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt("killed")
        self.calls += 1
        self.prompts_seen += len(prompts)
        return [Completion([7] * len(p), f"len={len(p)}", "stop") for p in prompts]


def _requests(n):
    return [Request(f"t/s/{i}", "reasoning_combined", f"prompt {i}", list(range(i + 1))) for i in range(n)]


def _job():
    return GenerationJob(
        model="m", model_checksum="abc", backend="fake", params=DecodingParams(max_new_tokens=4), shard_size=2
    )


def test_killed_run_resumes_without_regenerating_finished_shards(tmp_path):
    requests = _requests(5)  # shards of 2, 2, 1
    dying = CountingBackend(fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        run_sharded(_job(), requests, lambda: dying, tmp_path / "shards")
    finished = sorted(p.name for p in (tmp_path / "shards").iterdir())
    assert len(finished) == 2 and all(name.endswith(".parquet") for name in finished)
    for name in finished:  # complete, readable files only
        assert pq.read_table(tmp_path / "shards" / name).num_rows == 2

    resumed = CountingBackend()
    table = run_sharded(_job(), requests, lambda: resumed, tmp_path / "shards")
    assert resumed.prompts_seen == 1  # only the last shard
    fresh = run_sharded(_job(), requests, CountingBackend, tmp_path / "fresh")
    assert table.equals(fresh)
    assert table.column("sample_id").to_pylist() == [r.sample_id for r in requests]


def test_fully_resumed_job_never_loads_the_model(tmp_path):
    run_sharded(_job(), _requests(3), CountingBackend, tmp_path)

    def must_not_load():
        raise AssertionError("backend loaded although every shard exists")

    assert run_sharded(_job(), _requests(3), must_not_load, tmp_path).num_rows == 3


def test_changed_settings_do_not_reuse_shards(tmp_path):
    run_sharded(_job(), _requests(2), CountingBackend, tmp_path)
    other = GenerationJob(
        model="m", model_checksum="abc", backend="fake", params=DecodingParams(max_new_tokens=8), shard_size=2
    )
    backend = CountingBackend()
    run_sharded(other, _requests(2), lambda: backend, tmp_path)
    assert backend.prompts_seen == 2


def test_variants_share_shards_and_resume_only_the_missing_ones(tmp_path):
    """Each variant writes its own shards; a shard is generated once for the
    variants that miss it, and a finished variant is never asked again."""
    jobs = [
        GenerationJob(
            model=f"m@{v}", model_checksum="abc", backend="fake", params=DecodingParams(max_new_tokens=4), shard_size=2
        )
        for v in ("base", "steered")
    ]
    requests = _requests(3)
    requests[2].status = "too_long"
    calls = []

    def generate(indices, variants):
        calls.append((list(indices), list(variants)))
        return [[Completion([v] * len(requests[i].prompt_ids), f"v{v}", "stop") for i in indices] for v in variants]

    dirs = [tmp_path / "base", tmp_path / "steered"]
    tables = run_sharded_variants(jobs, requests, generate, dirs)
    assert calls == [([0, 1], [0, 1])]  # the last shard holds only a too-long request
    assert [t.column("response").to_pylist() for t in tables] == [["v0", "v0", None], ["v1", "v1", None]]
    assert tables[1].column("model").to_pylist() == ["m@steered"] * 3
    for path in (dirs[1]).iterdir():
        path.unlink()
    calls.clear()
    again = run_sharded_variants(jobs, requests, generate, dirs)
    assert calls == [([0, 1], [1])]  # only the variant whose shards are gone
    assert all(a.equals(b) for a, b in zip(again, tables))


def test_too_long_requests_are_recorded_not_generated(tmp_path):
    requests = _requests(3)
    requests[1].status, requests[1].message = "too_long", "over"
    backend = CountingBackend()
    rows = run_sharded(_job(), requests, lambda: backend, tmp_path).to_pylist()
    assert backend.prompts_seen == 2
    assert rows[1]["status"] == "too_long" and rows[1]["response"] is None
    assert rows[0]["response"] == "len=1" and rows[0]["n_response_tokens"] == 1


def _bare_backend(batch_size: int) -> HFBackend:
    """An HFBackend without a model, whose batches a test fakes (prompts of zeros share no long prefix)."""
    backend = HFBackend.__new__(HFBackend)
    backend.policy = BatchPolicy(batch_size=batch_size)
    backend.lm = SimpleNamespace(is_encoder_decoder=False)
    backend.min_shared = MIN_SHARED_TOKENS
    return backend


def test_batch_size_halves_on_out_of_memory():
    backend = _bare_backend(batch_size=8)
    sizes = []

    def fake_batch(prompts, params):
        sizes.append(len(prompts))
        if len(prompts) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [Completion([], str(len(p)), "stop") for p in prompts]

    backend._generate_batch = fake_batch
    prompts = [[0] * n for n in (3, 9, 1, 5, 7)]
    out = backend.generate(prompts, DecodingParams())
    assert [c.text for c in out] == ["3", "9", "1", "5", "7"]  # input order restored
    assert backend.policy.batch_size == 2
    assert sizes == [5, 4, 2, 2, 1]  # 8 -> 4 -> 2, then longest-first batches of 2


def test_other_runtime_errors_are_not_swallowed():
    backend = _bare_backend(batch_size=4)

    def broken(prompts, params):
        raise RuntimeError("shape mismatch")

    backend._generate_batch = broken
    with pytest.raises(RuntimeError, match="shape mismatch"):
        backend.generate([[1]], DecodingParams())


@pytest.mark.slow
def test_too_long_prompt_is_flagged_or_truncated_never_cut_silently(tiny_llama_dir):
    from transformers import AutoTokenizer

    from conflictlab.contextconflict.dataset import load_released

    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    sample = load_released(DEMO, "perspective").tables()[0].to_pylist()[0]
    full = build_request(tokenizer, sample, "summarization_simple", limit=8192, max_new_tokens=64)
    assert full.status == "ok" and full.message is None

    limit = len(full.prompt_ids) + 64 - 40  # 40 tokens too many
    flagged = build_request(tokenizer, sample, "summarization_simple", limit=limit, max_new_tokens=64)
    assert flagged.status == "too_long"
    assert f"exceeds the context of {limit}" in flagged.message

    cut = build_request(
        tokenizer, sample, "summarization_simple", limit=limit, max_new_tokens=64, on_too_long="truncate_longest"
    )
    assert cut.status == "ok"
    assert len(cut.prompt_ids) + 64 <= limit
    assert "truncated" in cut.message
    assert sample["question"] in cut.prompt and "[…]" in cut.prompt
    assert cut.prompt.endswith("<|im_start|>assistant\n")


@pytest.mark.slow
def test_hf_batched_left_padded_equals_one_by_one(tiny_llama_dir):
    from transformers import AutoTokenizer

    from conflictlab.contextconflict.dataset import load_released

    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    samples = load_released(DEMO, "temporal").tables()[0].to_pylist()[:4]
    prompts = [
        build_request(tokenizer, s, "reasoning_combined", limit=8192, max_new_tokens=8).prompt_ids for s in samples
    ]
    assert len({len(p) for p in prompts}) > 1  # real padding happens
    params = DecodingParams(max_new_tokens=8)
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")
    batched = HFBackend(lm, batch_size=4).generate(prompts, params)
    single = HFBackend(lm, batch_size=1).generate(prompts, params)
    assert [c.token_ids for c in batched] == [c.token_ids for c in single]
    assert all(len(c.token_ids) == 8 and c.finish_reason == "length" for c in batched)


def test_finished_jobs_leave_no_empty_shard_folders(tmp_path):
    from conflictlab.lm.shards import finish_shards

    shards = tmp_path / "responses" / "m" / ".shards"
    for conflict_type in ("temporal", "ambiguity"):
        run_sharded(_job(), _requests(3), CountingBackend, shards / conflict_type)
    finish_shards(shards / "temporal")
    assert shards.is_dir() and not (shards / "temporal").exists()  # ambiguity's shards are still there
    finish_shards(shards / "ambiguity")
    assert not shards.exists() and (tmp_path / "responses" / "m").is_dir()


@pytest.mark.slow
def test_a_batch_size_change_never_reuses_shards_of_a_killed_run(tiny_llama_dir, tmp_path):
    from conflictlab.contextconflict.dataset import load_released
    from conflictlab.contextconflict.generation import generate_responses

    samples = load_released(DEMO, "temporal").tables()[0].slice(0, 4)
    settings = {
        "backend": "hf",
        "templates": {"reasoning": "reasoning_combined"},
        "max_new_tokens": 4,
        "max_model_len": None,
        "on_too_long": "skip",
        "seed": 0,
        "shard_size": 2,
        "dtype": None,
        "batch_size": 8,
    }

    def run(settings, backend):
        return generate_responses(
            samples,
            tiny_llama_dir,
            model="m",
            settings=settings,
            shard_dir=tmp_path,
            make_backend=lambda limit: backend,
        )

    with pytest.raises(KeyboardInterrupt):
        run(settings, CountingBackend(fail_after=1))  # one shard of two finished
    other = CountingBackend()
    run({**settings, "batch_size": 4}, other)
    assert other.prompts_seen == 4  # nothing reused from batch size 8
    same = CountingBackend()
    run(settings, same)
    assert same.prompts_seen == 2  # batch size 8 again: its finished shard is reused


@pytest.mark.slow
def test_subsets_are_generated_in_one_pooled_job_and_split_back(tiny_llama_dir, tmp_path):
    """generate_subsets hands the rows of every table to the backend together
    (one call for a shard) and returns each table's responses, in its order,
    as generating that table alone would."""
    from conflictlab.contextconflict.dataset import load_released
    from conflictlab.contextconflict.generation import generate_responses, generate_subsets

    tables = [load_released(DEMO, t).tables()[0].slice(0, n) for t, n in (("temporal", 3), ("perspective", 2))]
    settings = {
        "backend": "hf",
        "templates": {"reasoning": "reasoning_combined", "summarization": "summarization_simple"},
        "max_new_tokens": 4,
        "max_model_len": None,
        "on_too_long": "skip",
        "seed": 0,
        "shard_size": 64,
        "dtype": None,
        "batch_size": 8,
    }
    pooled_backend = CountingBackend()
    pooled = generate_subsets(
        tables,
        tiny_llama_dir,
        model="m",
        settings=settings,
        shard_dir=tmp_path / "pooled",
        make_backend=lambda limit: pooled_backend,
    )
    assert pooled_backend.calls == 1 and pooled_backend.prompts_seen == 5
    assert [t.num_rows for t in pooled] == [3, 2]
    for i, (table, got) in enumerate(zip(tables, pooled)):
        alone = generate_responses(
            table,
            tiny_llama_dir,
            model="m",
            settings=settings,
            shard_dir=tmp_path / f"alone{i}",
            make_backend=lambda limit: CountingBackend(),
        )
        assert got.column("sample_id").to_pylist() == table.column("sample_id").to_pylist()
        assert got.to_pylist() == alone.to_pylist()

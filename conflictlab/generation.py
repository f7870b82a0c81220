"""Response generation: one narrow backend interface, two implementations.

A backend turns token-id prompts into greedy completions::

    backend.generate(prompts: list[list[int]], params: DecodingParams) -> list[Completion]

``HFBackend`` (transformers; the CPU default) batches left-padded prompts
sorted by length and halves its batch size on out-of-memory. ``VLLMBackend``
sends every prompt of a shard to vLLM in one call (the throughput path on
GPU). Both receive identical token ids, rendered once by
:mod:`conflictlab.prompts`, so their outputs are comparable token for token.

Jobs are resumable: requests are cut into shards, each written atomically
under a name that hashes everything that determines its content; a restarted
job with the same inputs and settings reuses the shards it finds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.batching import longest_first, pad_batch
from conflictlab.io import write_parquet
from conflictlab.prompts import build_messages, encode_messages

log = logging.getLogger(__name__)

RESPONSE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("template", pa.string(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("response", pa.string()),
        pa.field("response_token_ids", pa.list_(pa.int32())),
        pa.field("n_prompt_tokens", pa.int32(), nullable=False),
        pa.field("n_response_tokens", pa.int32()),
        pa.field("finish_reason", pa.string()),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("model_checksum", pa.string(), nullable=False),
        pa.field("decoding", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("message", pa.string()),
    ]
)

STATUS_OK, STATUS_TOO_LONG = "ok", "too_long"


@dataclass(frozen=True)
class DecodingParams:
    """Greedy decoding (the paper's setting): only the length is a choice."""

    max_new_tokens: int = 512
    seed: int = 0

    def to_json(self) -> str:
        return json.dumps({"do_sample": False, **asdict(self)}, sort_keys=True)


@dataclass
class Completion:
    token_ids: list[int]  # generated tokens, without the stop token
    text: str
    finish_reason: str  # "stop" | "length"


class Backend(Protocol):
    name: str

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]: ...


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


class HFBackend:
    """transformers ``generate``, batched and left-padded.

    ``dtype`` defaults to float32 on CPU (the exact reference; CPUs without
    bf16 instructions run bf16 slowly, and on ones with avx512_bf16 it is ~1.9x
    faster, see ``benchmarks/precision.py``) and bfloat16 on GPU. ``steering`` (a :class:`conflictlab.steering.Steering`)
    is hooked into every ``generate`` call.
    """

    name = "hf"

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        dtype: str | None = None,
        device: str | None = None,
        batch_size: int = 8,
        steering=None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = dtype or ("float32" if self.device == "cpu" else "bfloat16")
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).to(self.device).eval()
        self.batch_size = batch_size
        self.steering = steering
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else min(self.eos_ids)

    def _generate_batch(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        import torch

        ids, mask = pad_batch(prompts, self.pad_id, side="left")
        width = ids.shape[1]
        torch.manual_seed(params.seed)
        steered = self.steering.hooks(self.model) if self.steering is not None else contextlib.nullcontext()
        with steered, torch.inference_mode():
            out = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                max_new_tokens=params.max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.pad_id,
                eos_token_id=sorted(self.eos_ids),
            )
        completions = []
        for row in out[:, width:].tolist():
            stop = next((i for i, tok in enumerate(row) if tok in self.eos_ids), None)
            tokens = row if stop is None else row[:stop]
            completions.append(
                Completion(tokens, self.tokenizer.decode(tokens, skip_special_tokens=True), "length" if stop is None else "stop")
            )
        return completions

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        """Longest prompts first, so an out-of-memory shows in the first batch."""
        order = longest_first(prompts)
        results: list[Completion | None] = [None] * len(prompts)
        start = 0
        while start < len(order):
            batch = order[start : start + self.batch_size]
            try:
                completions = self._generate_batch([prompts[i] for i in batch], params)
            except (RuntimeError, MemoryError) as err:
                if not _is_oom(err) or self.batch_size == 1:
                    raise
                self.batch_size //= 2
                log.warning("out of memory at batch size %d; retrying with %d", 2 * self.batch_size, self.batch_size)
                _empty_cache()
                continue
            for i, completion in zip(batch, completions):
                results[i] = completion
            start += len(batch)
        return results  # type: ignore[return-value]


def _empty_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


class VLLMBackend:
    """vLLM ``LLM.generate`` on token-id prompts, all of a shard in one call."""

    name = "vllm"

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        dtype: str = "bfloat16",
        max_model_len: int | None = None,
        tensor_parallel_size: int = 1,
        seed: int = 0,
        **engine_args,
    ):
        from vllm import LLM

        self.llm = LLM(
            model=str(model_dir),
            dtype=dtype,
            max_model_len=max_model_len,
            tensor_parallel_size=tensor_parallel_size,
            seed=seed,
            **engine_args,
        )
        self.eos_ids = set(self.llm.get_tokenizer().all_special_ids) & _eos_ids(model_dir)

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        from vllm import SamplingParams

        sampling = SamplingParams(temperature=0.0, max_tokens=params.max_new_tokens, seed=params.seed)
        outputs = self.llm.generate([{"prompt_token_ids": list(p)} for p in prompts], sampling, use_tqdm=True)
        completions = []
        for output in outputs:
            best = output.outputs[0]
            tokens = list(best.token_ids)
            if best.finish_reason == "stop" and tokens and tokens[-1] in self.eos_ids:
                tokens = tokens[:-1]
            completions.append(Completion(tokens, best.text, best.finish_reason))
        return completions


def _eos_ids(model_dir) -> set[int]:
    from transformers import GenerationConfig

    eos = GenerationConfig.from_pretrained(model_dir).eos_token_id
    return set(eos if isinstance(eos, list) else [eos])


# --------------------------------------------------------------------------
# Requests: prompts rendered once, checked against the context window.


@dataclass
class Request:
    sample_id: str
    template: str
    prompt: str
    prompt_ids: list[int]
    status: str = STATUS_OK
    message: str | None = None


def context_limit(model_dir: str | os.PathLike, configured: int | None) -> int:
    """The context window to respect: configured, else the model's own."""
    if configured:
        return int(configured)
    config = json.loads((Path(model_dir) / "config.json").read_text())
    text_config = config.get("text_config", config)
    return int(text_config["max_position_embeddings"])


def build_request(
    tokenizer,
    sample: dict,
    template: str,
    *,
    limit: int,
    max_new_tokens: int,
    on_too_long: str = "skip",
) -> Request:
    """Render one sample; never cut the question, never right-truncate silently.

    A prompt whose length plus ``max_new_tokens`` exceeds ``limit`` gets
    ``status=too_long``; with ``on_too_long="truncate_longest"`` the longest
    evidence piece is shortened (by tokens, marked with ``[…]``) until the
    prompt fits, and the cut is recorded in ``message``.
    """
    evidence = list(sample["evidence"])
    budget = limit - max_new_tokens
    cuts: list[str] = []
    for _ in range(4 * len(evidence) + 4):
        text, ids = encode_messages(tokenizer, build_messages(template, sample["question"], evidence))
        over = len(ids) - budget
        if over <= 0:
            message = "; ".join(cuts) if cuts else None
            return Request(sample["sample_id"], template, text, ids, STATUS_OK, message)
        if on_too_long != "truncate_longest":
            break
        longest = max(range(len(evidence)), key=lambda i: len(evidence[i]))
        piece_ids = tokenizer(evidence[longest], add_special_tokens=False)["input_ids"]
        # Cut what is over (plus a margin: re-tokenising the cut text can
        # merge tokens), keeping at least 16 tokens of this piece; if that is
        # not enough the next pass cuts the then-longest piece.
        keep = max(16, len(piece_ids) - over - 8)
        if keep >= len(piece_ids):
            break
        evidence[longest] = tokenizer.decode(piece_ids[:keep]) + " […]"
        cuts.append(f"evidence {longest + 1} truncated from {len(piece_ids)} to {keep} tokens")
    return Request(
        sample["sample_id"],
        template,
        text,
        ids,
        STATUS_TOO_LONG,
        f"prompt has {len(ids)} tokens; with max_new_tokens={max_new_tokens} it exceeds the context of {limit}",
    )


# --------------------------------------------------------------------------
# Sharded, resumable execution.


@dataclass
class GenerationJob:
    """Everything that fixes a job's output besides the requests themselves."""

    model: str
    model_checksum: str
    backend: str
    params: DecodingParams
    shard_size: int = 64
    extra_key: dict = field(default_factory=dict)

    def shard_name(self, index: int, requests: Sequence[Request]) -> str:
        digest = hashlib.sha256()
        digest.update(json.dumps([self.model_checksum, self.backend, self.params.to_json(), self.extra_key], sort_keys=True).encode())
        for r in requests:
            digest.update(r.sample_id.encode() + b"\0" + bytes(str(r.prompt_ids), "ascii") + b"\0" + r.status.encode())
        return f"shard-{index:05d}-{digest.hexdigest()[:16]}.parquet"


def _rows(job: GenerationJob, requests: Sequence[Request], completions: Sequence[Completion | None]) -> list[dict]:
    rows = []
    for request, completion in zip(requests, completions):
        rows.append(
            {
                "sample_id": request.sample_id,
                "template": request.template,
                "prompt": request.prompt,
                "response": None if completion is None else completion.text,
                "response_token_ids": None if completion is None else completion.token_ids,
                "n_prompt_tokens": len(request.prompt_ids),
                "n_response_tokens": None if completion is None else len(completion.token_ids),
                "finish_reason": None if completion is None else completion.finish_reason,
                "backend": job.backend,
                "model": job.model,
                "model_checksum": job.model_checksum,
                "decoding": job.params.to_json(),
                "seed": job.params.seed,
                "status": request.status,
                "message": request.message,
            }
        )
    return rows


def run_sharded(
    job: GenerationJob,
    requests: Sequence[Request],
    make_backend: Callable[[], Backend],
    shard_dir: str | os.PathLike,
) -> pa.Table:
    """Generate every ``ok`` request shard by shard; reuse finished shards.

    ``make_backend`` is called at most once, when the first shard needs
    generating, so a fully resumed job never loads the model. Returns the
    table in request order.
    """
    backend: Backend | None = None
    shard_dir = Path(shard_dir)
    shard_dir.mkdir(parents=True, exist_ok=True)
    tables = []
    reused = 0
    for index, start in enumerate(range(0, len(requests), job.shard_size)):
        shard = list(requests[start : start + job.shard_size])
        path = shard_dir / job.shard_name(index, shard)
        if path.exists():
            tables.append(pq.read_table(path, schema=RESPONSE_SCHEMA))
            reused += 1
            continue
        todo = [i for i, r in enumerate(shard) if r.status == STATUS_OK]
        completions: list[Completion | None] = [None] * len(shard)
        if todo:
            if backend is None:
                backend = make_backend()
            for i, completion in zip(todo, backend.generate([shard[i].prompt_ids for i in todo], job.params)):
                completions[i] = completion
        table = pa.Table.from_pylist(_rows(job, shard, completions), schema=RESPONSE_SCHEMA)
        write_parquet(table, path, RESPONSE_SCHEMA)
        tables.append(table)
        log.info("shard %d: %d requests (%d generated) -> %s", index, len(shard), len(todo), path.name)
    log.info("%d shards reused from an earlier run", reused)
    if not tables:
        return RESPONSE_SCHEMA.empty_table()
    return pa.concat_tables(tables)


def finish_shards(shard_dir: str | os.PathLike) -> None:
    """Remove a job's shards once its output file is written."""
    shutil.rmtree(shard_dir, ignore_errors=True)


def generate_responses(
    samples: pa.Table,
    model_dir: str | os.PathLike,
    *,
    model: str,
    settings: dict,
    shard_dir: str | os.PathLike,
    steering=None,
) -> pa.Table:
    """All responses of one (model, samples table) job.

    ``settings`` is the config's ``generation`` mapping: ``backend``,
    ``templates`` (per task family), ``max_new_tokens``, ``max_model_len``,
    ``on_too_long``, ``seed``, ``batch_size``, ``shard_size``, ``dtype``,
    ``tensor_parallel_size`` and ``vllm`` (extra engine arguments).
    ``steering`` (a :class:`conflictlab.steering.Steering`, hf backend only)
    steers every generation.
    """
    from transformers import AutoTokenizer

    from conflictlab.models import read_manifest

    manifest = read_manifest(model_dir)
    checksum = ",".join(f"{k}:{v}" for k, v in sorted(manifest["weights_sha256"].items()))
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    limit = context_limit(model_dir, settings.get("max_model_len"))
    params = DecodingParams(max_new_tokens=settings["max_new_tokens"], seed=settings["seed"])
    requests = [
        build_request(
            tokenizer,
            sample,
            settings["templates"][sample["task_family"]],
            limit=limit,
            max_new_tokens=params.max_new_tokens,
            on_too_long=settings["on_too_long"],
        )
        for sample in samples.to_pylist()
    ]
    too_long = sum(r.status == STATUS_TOO_LONG for r in requests)
    log.info("%d requests, %d too long for a context of %d tokens", len(requests), too_long, limit)

    backend_name = settings["backend"]
    if steering is not None and backend_name != "hf":
        raise ValueError(f"steering runs on the hf backend (transformers hooks), not {backend_name!r}")

    def make_backend() -> Backend:
        if backend_name == "hf":
            return HFBackend(model_dir, dtype=settings.get("dtype"), batch_size=settings["batch_size"], steering=steering)
        return VLLMBackend(
            model_dir,
            dtype=settings.get("dtype") or "bfloat16",
            max_model_len=limit,
            tensor_parallel_size=settings.get("tensor_parallel_size", 1),
            seed=settings["seed"],
            **settings.get("vllm", {}),
        )

    job = GenerationJob(
        model=model,
        model_checksum=checksum,
        backend=backend_name,
        params=params,
        shard_size=settings["shard_size"],
        extra_key={"dtype": settings.get("dtype"), "limit": limit, "steering": None if steering is None else steering.key()},
    )
    return run_sharded(job, requests, make_backend, shard_dir)

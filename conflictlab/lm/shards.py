"""Sharded, resumable generation jobs and the response table they write.

A job's requests (token-id prompts rendered by a benchmark, or its messages
for a chat endpoint) are cut into
shards; each shard is written atomically under a name that hashes everything
that determines its content, so a restarted job with the same inputs and
settings reuses the shards it finds and generates only the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.io import write_parquet
from conflictlab.lm.chat import CONTENT_FILTER, REFUSAL
from conflictlab.lm.generation import Backend, Completion, DecodingParams

log = logging.getLogger(__name__)

RESPONSE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("template", pa.string(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("response", pa.string()),  # the final channel for reasoning models (conflictlab.lm.channels)
        pa.field("response_token_ids", pa.list_(pa.int32())),
        pa.field("reasoning", pa.string()),  # what came before the final channel; null for other models
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
# A chat endpoint's refusal or content-filter stop: no response, never an answer.
STATUS_REFUSED, STATUS_FILTERED = "refused", "content_filter"
NO_ANSWER_STATUS = {REFUSAL: STATUS_REFUSED, CONTENT_FILTER: STATUS_FILTERED}  # by finish_reason


@dataclass
class Request:
    sample_id: str
    template: str
    prompt: str  # the rendered prompt text; for a chat endpoint the messages as JSON
    prompt_ids: list[int]  # empty for a chat endpoint
    status: str = STATUS_OK
    message: str | None = None
    messages: list[dict] | None = None  # what a chat backend is sent instead of prompt_ids

    @property
    def payload(self):
        """What the backend generates from: messages for a chat backend, else token ids."""
        return self.prompt_ids if self.messages is None else self.messages


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
        digest.update(
            json.dumps(
                [self.model_checksum, self.backend, self.params.to_json(), self.extra_key], sort_keys=True
            ).encode()
        )
        for r in requests:
            payload = str(r.prompt_ids) if r.messages is None else r.prompt
            digest.update(r.sample_id.encode() + b"\0" + payload.encode() + b"\0" + r.status.encode())
        return f"shard-{index:05d}-{digest.hexdigest()[:16]}.parquet"


def _row(job: GenerationJob, request: Request, completion: Completion | None) -> dict:
    status, message = request.status, request.message
    if completion is not None and completion.finish_reason in NO_ANSWER_STATUS:
        status = NO_ANSWER_STATUS[completion.finish_reason]
        message = f"the endpoint stopped the reply: finish_reason {completion.finish_reason}"
    n_prompt = len(request.prompt_ids)
    n_response = None
    if completion is not None:
        n_prompt = completion.n_prompt_tokens if completion.n_prompt_tokens is not None else n_prompt
        n_response = completion.n_tokens if completion.n_tokens is not None else len(completion.token_ids)
    return {
        "sample_id": request.sample_id,
        "template": request.template,
        "prompt": request.prompt,
        "response": None if completion is None else completion.text,
        # A chat endpoint returns text only; its token ids are not ours to record.
        "response_token_ids": None if completion is None or request.messages is not None else completion.token_ids,
        "reasoning": None,
        "n_prompt_tokens": n_prompt,
        "n_response_tokens": n_response,
        "finish_reason": None if completion is None else completion.finish_reason,
        "backend": job.backend,
        "model": job.model,
        "model_checksum": job.model_checksum,
        "decoding": job.params.to_json(),
        "seed": job.params.seed,
        "status": status,
        "message": message,
    }


def _rows(job: GenerationJob, requests: Sequence[Request], completions: Sequence[Completion | None]) -> list[dict]:
    return [_row(job, request, completion) for request, completion in zip(requests, completions)]


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
    backend: list[Backend] = []

    def generate(indices: list[int], variants: list[int]) -> list[list[Completion]]:
        if not backend:
            backend.append(make_backend())
        payloads = [requests[i].payload for i in indices]
        if requests[indices[0]].messages is not None:  # a chat backend names each request's row in its errors
            return [backend[0].generate(payloads, job.params, rows=[requests[i].sample_id for i in indices])]
        return [backend[0].generate(payloads, job.params)]

    return run_sharded_variants([job], requests, generate, [shard_dir])[0]


def run_sharded_variants(
    jobs: Sequence[GenerationJob],
    requests: Sequence[Request],
    generate: Callable[[list[int], list[int]], list[list[Completion]]],
    shard_dirs: Sequence[str | os.PathLike],
) -> list[pa.Table]:
    """:func:`run_sharded` for several jobs (variants) over the same requests.

    Job v writes its shards to ``shard_dirs[v]``. For each shard,
    ``generate(indices, variants)`` is called once with the ``ok`` requests'
    indices into ``requests`` and the variants whose shard is missing, and
    returns their completions ``[variant][request]``; so variants can share
    work per shard (:meth:`conflictlab.lm.generation.HFBackend.generate_variants`).
    Returns one table per job, in request order.
    """
    if len({job.shard_size for job in jobs}) != 1:
        raise ValueError("variants of one sharded run need the same shard_size")
    shard_size = jobs[0].shard_size
    dirs = [Path(d) for d in shard_dirs]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    tables: list[list[pa.Table]] = [[] for _ in jobs]
    reused = 0
    for index, start in enumerate(range(0, len(requests), shard_size)):
        shard = list(requests[start : start + shard_size])
        paths = [d / job.shard_name(index, shard) for job, d in zip(jobs, dirs)]
        missing = [v for v, path in enumerate(paths) if not path.exists()]
        for v, path in enumerate(paths):
            if v not in missing:
                tables[v].append(pq.read_table(path, schema=RESPONSE_SCHEMA))
                reused += 1
        if not missing:
            continue
        todo = [i for i, r in enumerate(shard) if r.status == STATUS_OK]
        generated = generate([start + i for i in todo], missing) if todo else [[] for _ in missing]
        for v, completions_of_todo in zip(missing, generated):
            completions: list[Completion | None] = [None] * len(shard)
            for i, completion in zip(todo, completions_of_todo):
                completions[i] = completion
            table = pa.Table.from_pylist(_rows(jobs[v], shard, completions), schema=RESPONSE_SCHEMA)
            write_parquet(table, paths[v], RESPONSE_SCHEMA)
            tables[v].append(table)
            log.info("shard %d: %d requests (%d generated) -> %s", index, len(shard), len(todo), paths[v])
    log.info("%d shards reused from an earlier run", reused)
    return [pa.concat_tables(t) if t else RESPONSE_SCHEMA.empty_table() for t in tables]


def finish_shards(shard_dir: str | os.PathLike) -> None:
    """Remove a job's shards once its output file is written, and the
    ``.shards`` folder above them when no other job's shards are left in it."""
    shard_dir = Path(shard_dir)
    shutil.rmtree(shard_dir, ignore_errors=True)
    for parent in shard_dir.parents:
        if parent.name != ".shards":
            continue
        with contextlib.suppress(OSError):  # not empty: another job's shards
            parent.rmdir()
        break

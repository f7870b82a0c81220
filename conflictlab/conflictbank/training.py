"""Embedded knowledge conflicts (ConflictBank §3.3, C.2): continued
pre-training on default and conflicting evidence text at a fixed ratio.

The paper trains Qwen1.5-4B, Mistral-7B and LLaMA3-8B for 4,500 steps
(lr 2e-5, batch 256) at default : conflicting ratios 1:0, 2:1, 1:1 and 2:3,
then reads OAR without evidence and with the default evidence. Every ratio
trains for the same number of optimiser steps on packed blocks of the same
length, so on the same number of tokens, and the conflicting texts are nested
(2:3's include 1:1's): only the mixture differs. With a fixed budget, a larger
conflicting share means fewer passes over each default text; the manifest
records the passes (``epochs``).

Training runs through transformers' ``Trainer``: in the calling process, or
in ``processes`` processes on this machine that :func:`continue_pretraining`
starts with ``torch.distributed.run`` (DDP: every process holds the whole
model; FSDP: parameters, gradients and optimiser state sharded over them,
GPUs only). The configured batch is the global one, batch_size ×
gradient_accumulation blocks per optimiser step whatever the number of
processes (:func:`split_batch`), so the processes change the arithmetic's
order, not the blocks of a step.

Checkpoints (every ``save_steps``, but not at the last step, which the
saved model folder ends) are only resumed from when complete: the
Trainer writes ``checkpoint-N/``, then, once every process has written its
part, a completion mark holding the step, the run's fingerprint and every
file's size is flushed to disk and renamed into place, and older checkpoints
are deleted. A later run resumes from the newest checkpoint whose mark matches
its own settings and whose files are present at the recorded sizes and
structurally readable (:func:`checkpoint_problem`); every other checkpoint
folder is deleted with a warning, so a kill at any moment leaves a checkpoint
to resume from or a fresh start, not a folder that fails every later run. The
result is saved as a prepared model folder whose manifest records how it was
made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import CONFLICT_KINDS

log = logging.getLogger(__name__)

STRATEGIES = ("ddp", "fsdp")
COMPLETE_MARK = "conflictlab_checkpoint.json"
_CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")


@dataclass(frozen=True)
class TrainingSettings:
    """One continued pre-training run (batch = batch_size × gradient_accumulation
    blocks of ``max_length`` tokens each)."""

    max_steps: int
    learning_rate: float = 2e-5
    batch_size: int = 8
    gradient_accumulation: int = 1
    max_length: int = 256
    save_steps: int = 500
    seed: int = 0


def conflicting_order(records: pa.Table, *, seed: int) -> list[str]:
    """Every conflicting evidence text of ``records`` in one seeded order:
    each conflict kind's texts permuted, then taken in turn (misinformation,
    temporal, semantic, misinformation, …), so every prefix is balanced over
    the kinds to within one text. The order does not depend on a ratio."""
    rng = np.random.default_rng(seed)
    kinds = [records.column(f"{kind}_evidence").to_pylist() for kind in CONFLICT_KINDS]
    shuffled = [[texts[i] for i in rng.permutation(len(texts))] for texts in kinds]
    return [text for turn in zip(*shuffled) for text in turn]


def mixture_corpus(records: pa.Table, ratio: tuple[int, int], *, seed: int) -> list[str]:
    """Every record's default evidence plus round(n · c / d) conflicting texts
    for ``ratio`` (d, c), shuffled with ``seed``.

    The conflicting texts are the first ones of :func:`conflicting_order`, so
    the pools are nested: with the same records and seed, 2:3's conflicting
    texts include 1:1's, which include 2:1's; a larger share adds conflicting
    texts and changes none. ValueError when the records have too few."""
    default = records.column("default_evidence").to_pylist()
    pool = conflicting_order(records, seed=seed)
    wanted = round(len(default) * ratio[1] / ratio[0])
    if wanted > len(pool):
        raise ValueError(f"ratio {ratio[0]}:{ratio[1]} needs {wanted} conflicting texts; the records have {len(pool)}")
    texts = default + pool[:wanted]
    order = np.random.default_rng([seed, 1]).permutation(len(texts))
    return [texts[i] for i in order]


def corpus_sha256(texts: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode()).hexdigest()


def pack_blocks(sequences: Sequence[Sequence[int]], block_length: int) -> np.ndarray:
    """Token id ``sequences`` concatenated and cut into blocks, shape
    (ceil(total / block_length), block_length).

    The last block is completed from the start of the stream, so no token is
    dropped and every block is full: each optimiser step then trains on
    exactly batch × ``block_length`` tokens whatever the mixture, and equal
    steps mean equal tokens at every ratio (the paper: 4,500 steps, 1.06 B
    tokens at each, §C.2)."""
    stream = np.fromiter((token for sequence in sequences for token in sequence), dtype=np.int64)
    if stream.size == 0:
        raise ValueError("no tokens to pack")
    n_blocks = -(-stream.size // block_length)
    stream = np.resize(stream, n_blocks * block_length)  # np.resize repeats the stream from its start
    return stream.reshape(n_blocks, block_length)


def tokenize_for_packing(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Each text's ids with the tokenizer's own special tokens, ended by EOS
    (the document separator once texts are packed)."""
    sequences = []
    for text in texts:
        ids = list(tokenizer(text)["input_ids"])
        if tokenizer.eos_token_id is not None and (not ids or ids[-1] != tokenizer.eos_token_id):
            ids.append(tokenizer.eos_token_id)
        sequences.append(ids)
    return sequences


@dataclass(frozen=True)
class Distribution:
    """How many processes train and how they share the model: ``ddp`` (every
    process holds the whole model and optimiser state; gradients averaged) or
    ``fsdp`` (parameters, gradients and optimiser state sharded; for models
    whose training state does not fit one GPU; GPUs only, two processes or
    more)."""

    processes: int = 1
    strategy: str = "ddp"

    def __post_init__(self):
        if self.processes < 1:
            raise ValueError(f"distributed.processes must be at least 1, got {self.processes}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"distributed.strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.strategy == "fsdp" and self.processes < 2:
            raise ValueError(
                "distributed.strategy fsdp shards the model over processes: set processes to 2 or more (ddp for one)"
            )


def split_batch(batch_size: int, gradient_accumulation: int, processes: int) -> tuple[int, int]:
    """(blocks per forward pass, accumulation steps) of each of ``processes``
    processes for a global batch of ``batch_size`` × ``gradient_accumulation``
    blocks per optimiser step.

    The accumulation is divided first, so a process holds ``batch_size``
    blocks at a time as a single process did (the batch size is a memory
    setting); the batch is divided only by what the accumulation could not
    take. ValueError when the global batch does not split evenly."""
    shared = math.gcd(gradient_accumulation, processes)
    rest = processes // shared
    if batch_size % rest:
        raise ValueError(
            f"a global batch of {batch_size} x {gradient_accumulation} blocks does not split over {processes} "
            "processes: "
            f"make batch_size x gradient_accumulation a multiple of {processes} (gradient_accumulation first)"
        )
    return batch_size // rest, gradient_accumulation // shared


# --------------------------------------------------------------------------
# Checkpoints: complete or not used.


def run_fingerprint(record: dict) -> str:
    """SHA-256 of what decides a run's trajectory (settings, corpus, base
    weights, process layout); a checkpoint is resumed only by a run with the
    same fingerprint."""
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def mark_complete(folder: str | os.PathLike, *, step: int, fingerprint: str) -> None:
    """Write ``folder``'s completion mark: every other file's size, after
    flushing each to disk, then the mark itself by rename, so that a mark
    exists only beside files that were whole when it was written."""
    folder = Path(folder)
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != COMPLETE_MARK:
            _fsync(path)
            files[path.relative_to(folder).as_posix()] = path.stat().st_size
    staged = folder / f".{COMPLETE_MARK}.tmp"
    staged.write_text(json.dumps({"step": step, "fingerprint": fingerprint, "files": files}, indent=1))
    _fsync(staged)
    os.replace(staged, folder / COMPLETE_MARK)
    _fsync(folder)


def _safetensors_problem(path: Path) -> str | None:
    size = path.stat().st_size
    with open(path, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            return "shorter than a safetensors header"
        length = int.from_bytes(prefix, "little")
        if 8 + length > size:
            return "cut inside its safetensors header"
        try:
            header = json.loads(handle.read(length))
        except ValueError:
            return "unreadable safetensors header"
    end = max((entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"), default=0)
    return None if size == 8 + length + end else f"{size} bytes where its header describes {8 + length + end}"


def checkpoint_problem(folder: str | os.PathLike, fingerprint: str) -> str | None:
    """Why the checkpoint ``folder`` cannot be resumed by the run with
    ``fingerprint``, or None when it can: its completion mark must name this
    step and run; every file it lists must be there at its recorded size;
    weights, optimiser and scheduler state and trainer_state.json must be
    among them; safetensors files must match their headers, torch files must
    open as archives and trainer_state.json must name the step."""
    folder = Path(folder)
    step = int(_CHECKPOINT_NAME.match(folder.name).group(1))
    try:
        mark = json.loads((folder / COMPLETE_MARK).read_text())
    except FileNotFoundError:
        present = sorted(path.name for path in folder.iterdir())
        return f"no completion mark: its writing did not finish, or a version without marks wrote it (holds {present})"
    except (OSError, ValueError) as error:
        return f"unreadable completion mark ({error})"
    if not isinstance(mark, dict) or not isinstance(mark.get("files"), dict):
        return "unreadable completion mark (not the expected fields)"
    if mark.get("step") != step:
        return f"its mark names step {mark.get('step')}"
    if mark.get("fingerprint") != fingerprint:
        return "written by a run with other settings, corpus, base weights or process layout"
    files = mark["files"]
    try:
        return _files_problem(folder, step, files)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        # a damaged file can break the checks themselves; such a checkpoint is unusable all the same
        return f"unreadable ({type(error).__name__}: {error})"


def _files_problem(folder: Path, step: int, files: dict) -> str | None:
    for name, size in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, {size} when the checkpoint was completed"
    top = {name.split("/")[0] for name in files}
    needed = {
        "weights": any(name.endswith(".safetensors") or name.startswith("pytorch_model_fsdp") for name in top),
        "optimiser state": any(name.startswith("optimizer") for name in top),
        "scheduler state": "scheduler.pt" in top,
        "trainer state": "trainer_state.json" in top,
    }
    if missing := [what for what, present in needed.items() if not present]:
        return f"no {' or '.join(missing)}"
    for name in files:
        path = folder / name
        if path.suffix == ".safetensors" and (problem := _safetensors_problem(path)):
            return f"{name}: {problem}"
        if path.suffix in (".pt", ".pth", ".bin"):
            try:
                zipfile.ZipFile(path).close()
            except (zipfile.BadZipFile, OSError) as error:
                return f"{name} does not open ({error})"
    state_step = json.loads((folder / "trainer_state.json").read_text()).get("global_step")
    return None if state_step == step else f"trainer_state.json names step {state_step}"


def _checkpoints(checkpoint_dir: Path) -> list[tuple[int, Path]]:
    """(step, folder) of every checkpoint-N folder, newest first."""
    if not checkpoint_dir.is_dir():
        return []
    found = [
        (int(m.group(1)), path)
        for path in checkpoint_dir.iterdir()
        if path.is_dir() and (m := _CHECKPOINT_NAME.match(path.name))
    ]
    return sorted(found, reverse=True)


def _delete_checkpoint(folder: Path) -> None:
    # The mark goes first: a deletion cut short leaves a folder that is plainly incomplete.
    (folder / COMPLETE_MARK).unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


def resumable_checkpoint(checkpoint_dir: str | os.PathLike, fingerprint: str) -> Path | None:
    """The newest checkpoint under ``checkpoint_dir`` that the run with
    ``fingerprint`` can resume from (:func:`checkpoint_problem`), or None.

    Every checkpoint folder it cannot use is deleted with a warning saying
    why: a later run would meet the same folder, and the Trainer would write
    the same step into it again beside the stale files."""
    chosen = None
    found = _checkpoints(Path(checkpoint_dir))
    for _, folder in found:
        problem = checkpoint_problem(folder, fingerprint)
        if problem is None:
            chosen = chosen or folder
            continue
        log.warning("deleting checkpoint %s, which cannot be resumed: %s", folder, problem)
        _delete_checkpoint(folder)
    if found and chosen is None:
        log.warning("no usable checkpoint under %s: training starts again from the base model", checkpoint_dir)
    return chosen


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _completion_callback(fingerprint: str):
    """A TrainerCallback that marks each checkpoint complete once every
    process has written its part, then deletes the older ones; and writes
    none at the last step, after which the model folder is saved (weights
    and optimiser state: some 5-8 of a 12-step SmolLM2 run's 40 CPU s, AMD
    EPYC Zen 3)."""
    from transformers import TrainerCallback

    class MarkComplete(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step >= state.max_steps:
                control.should_save = False
            return control

        def on_save(self, args, state, control, **kwargs):
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            _barrier()  # the other processes' parts (DDP: their RNG states; FSDP: their shards) are written
            if state.is_world_process_zero:
                mark_complete(folder, step=state.global_step, fingerprint=fingerprint)
                for _, older in _checkpoints(folder.parent):
                    if older != folder:
                        _delete_checkpoint(older)
            _barrier()

    return MarkComplete()


# --------------------------------------------------------------------------
# Training.


class _Blocks:
    """A map-style dataset of packed blocks (rows of :func:`pack_blocks`);
    every position is a label, there is no padding."""

    def __init__(self, blocks: np.ndarray):
        self.blocks = blocks

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, index: int) -> dict:
        ids = self.blocks[index].tolist()
        return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": ids}


@dataclass(frozen=True)
class _Job:
    """What each training process needs (pickled for the processes that
    torch.distributed.run starts)."""

    base_dir: str
    out_dir: str
    checkpoint_dir: str
    settings: TrainingSettings
    distribution: Distribution
    batch: tuple[int, int]  # per process: blocks per forward pass, accumulation steps
    fingerprint: str
    resume: str | None
    fields: dict  # the saved folder's manifest fields; the loss per step is added to fields["training"]
    provenance: dict = field(default_factory=dict)
    blocks_path: str | None = None


def _train(job: _Job, blocks: np.ndarray, callbacks: Sequence = ()) -> None:
    """Train in this process (one of ``job.distribution.processes``) and save
    the model folder from the first process."""
    import torch

    from conflictlab.lm.loading import keep_freed_memory, without_unused_probes

    # every step frees and reallocates its activations, gradients and optimiser temporaries
    keep_freed_memory()
    without_unused_probes()
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments, default_data_collator

    from conflictlab.lm.registry import save_model_folder

    tokenizer = AutoTokenizer.from_pretrained(job.base_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(job.base_dir, dtype=torch.float32)
    settings, fsdp = job.settings, job.distribution.strategy == "fsdp"
    cpu = not torch.cuda.is_available()
    distributed = {}
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        distributed = {"ddp_backend": "gloo" if cpu else "nccl", "ddp_find_unused_parameters": False}
    if fsdp:
        # FULL_STATE_DICT: checkpoints hold whole weights and optimiser state, resumable by the same layout
        fsdp_config = {"version": 2, "state_dict_type": "FULL_STATE_DICT"}
        if getattr(model, "_no_split_modules", None):
            fsdp_config["transformer_layer_cls_to_wrap"] = list(model._no_split_modules)
        distributed.update(fsdp=True, fsdp_config=fsdp_config)
    arguments = TrainingArguments(
        output_dir=job.checkpoint_dir,
        max_steps=settings.max_steps,
        per_device_train_batch_size=job.batch[0],
        gradient_accumulation_steps=job.batch[1],
        learning_rate=settings.learning_rate,
        save_strategy="steps",
        save_steps=settings.save_steps,
        logging_steps=1,
        report_to=[],
        seed=settings.seed,
        data_seed=settings.seed,
        use_cpu=cpu,
        disable_tqdm=True,
        **distributed,
    )
    trainer = Trainer(
        model=model,
        args=arguments,
        train_dataset=_Blocks(blocks),
        data_collator=default_data_collator,
        callbacks=[_completion_callback(job.fingerprint), *callbacks],
    )
    if fsdp and not trainer.is_fsdp_enabled:
        raise RuntimeError(
            "distributed.strategy is fsdp, but accelerate did not enable FSDP (it runs FSDP on GPUs only)"
        )
    trainer.train(resume_from_checkpoint=job.resume)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    final = trainer.model
    if fsdp:
        # the full weights exist on no process: save_model gathers them (every process takes part) for the first to
        # reload
        staging = Path(job.checkpoint_dir) / "final"
        trainer.save_model(str(staging))
        final = (
            AutoModelForCausalLM.from_pretrained(staging, dtype=torch.float32)
            if trainer.is_world_process_zero()
            else None
        )
    if trainer.is_world_process_zero():
        training = {**job.fields["training"], "loss": losses, **job.provenance}
        save_model_folder(final, tokenizer, job.out_dir, {**job.fields, "training": training})
    trainer.accelerator.wait_for_everyone()


def _die_with_parent() -> None:
    """Linux: have this process killed when its parent dies, so that the
    processes of a killed job stop writing checkpoints that its next run
    reads (elsewhere a no-op)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _launch(job: _Job, blocks: np.ndarray, callbacks: Sequence, folder: Path) -> None:
    """Run :func:`_train` in ``job.distribution.processes`` processes started
    by torch.distributed.run on this machine; their output goes to this
    module's log. RuntimeError when one fails."""
    processes = job.distribution.processes
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # tokenised once here; each process maps the file instead of holding its own copy
    dtype = np.int32 if blocks.max() < 2**31 else np.int64
    np.save(folder / "blocks.npy", blocks.astype(dtype))
    job = replace(job, blocks_path=str(folder / "blocks.npy"))
    try:
        payload = pickle.dumps((job, list(callbacks)))
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise TypeError(
            f"callbacks must be picklable (instances of module-level classes) to reach {processes} processes: {error}"
        ) from error
    (folder / "job.pickle").write_bytes(payload)
    threads = int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)
    env = {**os.environ, "OMP_NUM_THREADS": str(max(1, threads // processes))}
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={processes}",
        "-m",
        "conflictlab.conflictbank.training",
        str(folder / "job.pickle"),
    ]
    log.info(
        "starting %d training processes (%s, OMP_NUM_THREADS=%s each): %s",
        processes,
        job.distribution.strategy,
        env["OMP_NUM_THREADS"],
        " ".join(command),
    )
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, preexec_fn=_die_with_parent
    ) as process:
        for line in process.stdout:
            if line := line.rstrip().split("\r")[-1]:  # a progress bar's last state
                log.info("| %s", line)
    if process.returncode:
        raise RuntimeError(
            f"the {processes} training processes failed (torch.distributed.run exit status {process.returncode}; "
            "their output is above); a rerun resumes from the last complete checkpoint"
        )


@contextlib.contextmanager
def _exclusive(path: Path):
    """Hold an exclusive lock on ``path``; the system releases it when this
    process ends, however it ends."""
    import fcntl

    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(
                f"{path.parent}: another process is training into these checkpoints (one left running by a killed "
                "workflow?); "
                "end it, then run again"
            ) from None
        yield


def continue_pretraining(
    base_dir: str | os.PathLike,
    texts: Sequence[str],
    out_dir: str | os.PathLike,
    *,
    checkpoint_dir: str | os.PathLike,
    settings: TrainingSettings,
    name: str,
    provenance: dict | None = None,
    callbacks: Sequence = (),
    processes: int = 1,
    strategy: str = "ddp",
) -> dict:
    """Train the model in ``base_dir`` on ``texts``; save it to ``out_dir``.

    The texts are packed (:func:`pack_blocks`) into blocks of ``max_length``.
    One process trains here; more (``processes``, ``strategy``: see
    :class:`Distribution`) are started with torch.distributed.run, and
    ``callbacks`` (TrainerCallbacks) must then be picklable.

    Resumes from the newest complete checkpoint under ``checkpoint_dir`` of a
    run with the same settings, corpus, base weights and process layout (a
    killed run continues, not restarts), deleting those it cannot use (see
    the module's docstring); the checkpoints are removed once the folder is
    saved. Returns the saved folder's manifest, whose ``training`` entry
    holds the settings, the process layout, the corpus checksum and size
    (texts, packed blocks, passes), the tokens per optimiser step, the base
    weights' checksum, the step it resumed from and the loss per step.
    """
    import torch

    from conflictlab.lm.loading import load_tokenizer
    from conflictlab.lm.registry import read_manifest, weights_checksum

    distribution = Distribution(processes, strategy)
    batch = split_batch(settings.batch_size, settings.gradient_accumulation, processes)
    if torch.cuda.is_available() and processes > torch.cuda.device_count():
        raise ValueError(f"{processes} training processes need as many GPUs; {torch.cuda.device_count()} are visible")
    if strategy == "fsdp" and not torch.cuda.is_available():
        raise ValueError("distributed.strategy fsdp needs GPUs (accelerate runs FSDP on GPUs only); use ddp on CPUs")
    blocks = pack_blocks(tokenize_for_packing(load_tokenizer(base_dir), texts), settings.max_length)
    blocks_per_step = settings.batch_size * settings.gradient_accumulation
    trajectory = {
        **asdict(settings),
        "processes": processes,
        "strategy": strategy,
        "base_weights_sha256": weights_checksum(base_dir),
        "corpus_sha256": corpus_sha256(texts),
    }
    checkpoint_dir = Path(checkpoint_dir)
    if checkpoint_dir.is_file():  # Snakemake leaves an empty file where a job's log folder was removed
        checkpoint_dir.unlink()
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    with _exclusive(checkpoint_dir / ".lock"):
        fingerprint = run_fingerprint(trajectory)
        resume = resumable_checkpoint(checkpoint_dir, fingerprint)
        shutil.rmtree(checkpoint_dir / "final", ignore_errors=True)
        if resume:
            log.info("resuming %s from %s", name, resume)
        training = {
            **asdict(settings),
            "processes": processes,
            "strategy": strategy,
            "per_process_batch_size": batch[0],
            "per_process_gradient_accumulation": batch[1],
            "base": str(base_dir),
            "base_weights_sha256": trajectory["base_weights_sha256"],
            "corpus_sha256": trajectory["corpus_sha256"],
            "corpus_texts": len(texts),
            "corpus_blocks": len(blocks),
            "tokens_per_step": blocks_per_step * settings.max_length,
            # passes over the corpus, so over each default text: fixed steps make it fewer as the conflicting share
            # grows
            "epochs": settings.max_steps * blocks_per_step / len(blocks),
            "resumed_from": resume.name if resume else None,
        }
        job = _Job(
            base_dir=str(base_dir),
            out_dir=str(out_dir),
            checkpoint_dir=str(checkpoint_dir),
            settings=settings,
            distribution=distribution,
            batch=batch,
            fingerprint=fingerprint,
            resume=str(resume) if resume else None,
            fields={
                "name": name,
                "source": f"trained:{base_dir}",
                "source_sha256": None,
                "dtype": "float32",
                "training": training,
            },
            provenance=dict(provenance or {}),
        )
        if processes == 1:
            _train(job, blocks, callbacks)
        else:
            _launch(job, blocks, callbacks, checkpoint_dir / "launch")
        manifest = read_manifest(out_dir)
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
    return manifest


def _worker(job_path: str) -> None:
    """One process of :func:`_launch` (torch.distributed.run sets RANK, WORLD_SIZE, ...)."""
    _die_with_parent()
    rank = int(os.environ.get("RANK", "0"))
    logging.basicConfig(
        level=logging.INFO if rank == 0 else logging.WARNING,
        format=f"%(asctime)s %(levelname)s rank {rank} %(name)s: %(message)s",
        force=True,
    )
    job, callbacks = pickle.loads(Path(job_path).read_bytes())
    _train(job, np.load(job.blocks_path, mmap_mode="r"), callbacks)


if __name__ == "__main__":
    # the module proper, not this __main__ copy, so that pickled references resolve to one set of classes
    from conflictlab.conflictbank.training import _worker as worker

    worker(sys.argv[1])

"""ConflictBank continued pre-training: the global batch over processes,
checkpoints that are resumed only when complete, a kill at any point, and
two processes (DDP over gloo) against one."""

import importlib
import json
import logging
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conflictlab.conflictbank.dataset import build_records, read_jsonl

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo" / "conflictbank" / "QA_dataset.jsonl"

# Largest weight difference of a resumed run against an uninterrupted one, and
# of two processes against one, and the losses' relative difference (float32,
# 6 steps of a tiny random model at lr 1e-3). Observed: resumed runs 0
# (identical bytes), two processes 2.5e-6, losses 8e-8.
RESUME_ATOL = 1e-6
PROCESSES_ATOL = 1e-5
LOSS_RTOL = 1e-5


def demo_records():
    return build_records(read_jsonl(DEMO), source="d").tables()[0]


# --------------------------------------------------------------------------
# The global batch over processes (no model).


def test_split_batch_keeps_the_global_batch_dividing_accumulation_first():
    from conflictlab.conflictbank.training import split_batch

    assert split_batch(2, 1, 1) == (2, 1)
    assert split_batch(2, 1, 2) == (1, 1)  # the demo's batch of 2 over two processes
    assert split_batch(8, 32, 8) == (8, 4)  # the paper's 256 over 8 GPUs: each still holds 8 blocks at a time
    assert split_batch(4, 2, 4) == (2, 1)
    for batch, accumulation, processes in ((2, 1, 1), (2, 1, 2), (8, 32, 8), (4, 2, 4), (6, 4, 12)):
        b, a = split_batch(batch, accumulation, processes)
        assert b * a * processes == batch * accumulation
    with pytest.raises(ValueError, match="does not split over 3 processes"):
        split_batch(8, 32, 3)


def test_distribution_refuses_what_it_cannot_run():
    from conflictlab.conflictbank.training import Distribution

    assert Distribution() == Distribution(1, "ddp")
    with pytest.raises(ValueError, match="at least 1"):
        Distribution(0)
    with pytest.raises(ValueError, match="one of"):
        Distribution(2, "deepspeed")
    with pytest.raises(ValueError, match="2 or more"):
        Distribution(1, "fsdp")


# --------------------------------------------------------------------------
# Which checkpoint a run resumes from (files only, no model).


def fake_checkpoint(folder: Path, step: int, *, fingerprint: str | None = "run", world: int = 1) -> Path:
    """A checkpoint folder in the Trainer's DDP layout with small stand-in
    files (torch files are zip archives, as torch.save writes them), marked
    complete when ``fingerprint`` is given."""
    from safetensors.numpy import save_file

    from conflictlab.conflictbank.training import mark_complete

    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    save_file({"w": np.zeros((4, 4), dtype=np.float32)}, str(folder / "model.safetensors"))
    names = ["optimizer.pt", "scheduler.pt", "training_args.bin"]
    names += [f"rng_state_{rank}.pth" for rank in range(world)] if world > 1 else ["rng_state.pth"]
    for name in names:
        with zipfile.ZipFile(folder / name, "w") as archive:
            archive.writestr("data.pkl", b"x" * 64)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if fingerprint is not None:
        mark_complete(folder, step=step, fingerprint=fingerprint)
    return folder


def plant_partial_checkpoint(folder: Path) -> Path:
    """What a kill -9 during the weights' write left (the reported bug):
    config files and a temporary weights file, no weights."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "generation_config.json").write_text("{}")
    (folder / ".tmpk3j2_model.safetensors").write_bytes(b"\0" * 4096)
    return folder


def test_checkpoint_problem_names_every_way_a_checkpoint_is_unusable(tmp_path):
    from conflictlab.conflictbank.training import COMPLETE_MARK, checkpoint_problem, mark_complete

    good = fake_checkpoint(tmp_path / "checkpoint-4", 4, world=2)
    assert checkpoint_problem(good, "run") is None
    assert "other settings" in checkpoint_problem(good, "another run")
    assert "no completion mark" in checkpoint_problem(plant_partial_checkpoint(tmp_path / "checkpoint-6"), "run")

    def broken(step, damage):
        folder = fake_checkpoint(tmp_path / f"checkpoint-{step}", step)
        damage(folder)
        return checkpoint_problem(folder, "run")

    assert "optimizer.pt is missing" in broken(10, lambda f: (f / "optimizer.pt").unlink())
    assert "has 100 bytes" in broken(12, lambda f: (f / "model.safetensors").write_bytes(b"\0" * 100))
    assert "unreadable completion mark" in broken(14, lambda f: (f / COMPLETE_MARK).write_text("{"))

    def remarked(step, damage):
        # damaged before the mark, so that only the structural checks can see it
        folder = fake_checkpoint(tmp_path / f"checkpoint-{step}", step, fingerprint=None)
        damage(folder)
        mark_complete(folder, step=step, fingerprint="run")
        return checkpoint_problem(folder, "run")

    assert "no optimiser state" in remarked(20, lambda f: (f / "optimizer.pt").unlink())
    assert "header describes" in remarked(
        22, lambda f: (f / "model.safetensors").write_bytes((f / "model.safetensors").read_bytes()[:-8])
    )
    assert "does not open" in remarked(24, lambda f: (f / "optimizer.pt").write_bytes(b"PK\3\4 cut short"))
    assert "names step 3" in remarked(26, lambda f: (f / "trainer_state.json").write_text('{"global_step": 3}'))
    # damage that breaks the checks themselves still reads as unusable, not as an error
    assert "unreadable" in remarked(
        28, lambda f: save_file_with_header(f / "model.safetensors", {"w": {"dtype": "F32"}})
    )
    assert "unreadable completion mark" in broken(30, lambda f: (f / COMPLETE_MARK).write_text("[]"))


def save_file_with_header(path: Path, header: dict) -> None:
    encoded = json.dumps(header).encode()
    path.write_bytes(len(encoded).to_bytes(8, "little") + encoded)


def test_resumable_checkpoint_takes_the_newest_complete_one_and_deletes_the_unusable(tmp_path, caplog):
    from conflictlab.conflictbank.training import resumable_checkpoint

    root = tmp_path / "ckpt"
    assert resumable_checkpoint(root, "run") is None  # no folder yet: a fresh start, silently
    older = fake_checkpoint(root / "checkpoint-2", 2)
    newer = fake_checkpoint(root / "checkpoint-4", 4)
    other = fake_checkpoint(root / "checkpoint-8", 8, fingerprint="a run with other settings")
    plant_partial_checkpoint(root / "checkpoint-6")
    with caplog.at_level(logging.WARNING, logger="conflictlab.conflictbank.training"):
        assert resumable_checkpoint(root, "run") == newer
    assert sorted(p.name for p in root.iterdir()) == ["checkpoint-2", "checkpoint-4"]  # an older complete one may stay
    assert older.is_dir() and not other.exists()
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "checkpoint-6" in warned and "no completion mark" in warned and "checkpoint-8" in warned

    caplog.clear()
    plant_partial_checkpoint(tmp_path / "only" / "checkpoint-12")
    with caplog.at_level(logging.WARNING, logger="conflictlab.conflictbank.training"):
        assert resumable_checkpoint(tmp_path / "only", "run") is None
    assert "starts again from the base model" in caplog.text
    assert list((tmp_path / "only").iterdir()) == []


def test_one_run_at_a_time_trains_into_a_checkpoint_folder(tmp_path):
    from conflictlab.conflictbank.training import _exclusive

    with _exclusive(tmp_path / ".lock"):
        with pytest.raises(RuntimeError, match="another process is training into these checkpoints"):
            with _exclusive(tmp_path / ".lock"):
                pass
    with _exclusive(tmp_path / ".lock"):  # released with its holder
        pass


# --------------------------------------------------------------------------
# Training a tiny random model (tests/conftest.py marks these slow).

# On one pytest-xdist worker (--dist loadgroup), which builds the module's
# reference runs once; two DDP runs side by side would also share 2 cores four ways.
same_worker = pytest.mark.xdist_group("conflictbank_training")

# TrainerCallbacks must be importable by name to reach the processes that
# torch.distributed.run starts; written to a file at run time so that
# collecting this module does not import transformers.
CALLBACKS = '''
import json, os, signal
from pathlib import Path

from transformers import TrainerCallback


class RecordBatches(TrainerCallback):
    """Writes the input ids of every forward pass of this process to
    batches-<rank>.json in ``folder`` when training ends."""

    def __init__(self, folder):
        self.folder, self.batches = str(folder), []

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        model.register_forward_pre_hook(
            lambda module, args, kwargs: self.batches.append(kwargs["input_ids"].tolist()), with_kwargs=True
        )

    def on_train_end(self, args, state, control, **kwargs):
        Path(self.folder, f"batches-{os.environ.get('RANK', '0')}.json").write_text(json.dumps(self.batches))


class KillAfterSave(TrainerCallback):
    """SIGKILL the process of ``rank`` once the checkpoint of ``step`` is
    saved (and, by the callback before this one, marked complete)."""

    def __init__(self, step, rank):
        self.step, self.rank = step, rank

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step and int(os.environ.get("RANK", "0")) == self.rank:
            os.kill(os.getpid(), signal.SIGKILL)
'''

# Killed while writing the second checkpoint: the weights are written, half
# the optimiser state reaches the disk, then SIGKILL.
KILLED_WHILE_SAVING = """
import os, pickle, signal, sys

import torch

from conflictlab.conflictbank.training import continue_pretraining

real_save = torch.save


def save_then_die(obj, f, *args, **kwargs):
    real_save(obj, f, *args, **kwargs)
    if str(f).endswith(os.path.join("checkpoint-4", "optimizer.pt")):
        os.truncate(f, os.path.getsize(f) // 2)
        os.kill(os.getpid(), signal.SIGKILL)


torch.save = save_then_die
continue_pretraining(**pickle.loads(open(sys.argv[1], "rb").read()))
"""


@pytest.fixture(scope="module")
def callbacks(tmp_path_factory):
    """The module CALLBACKS, importable here and in the processes started
    with the PYTHONPATH that :func:`distributed_env` sets."""
    folder = tmp_path_factory.mktemp("callbacks")
    (folder / "cbt_callbacks.py").write_text(CALLBACKS)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("cbt_callbacks")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("cbt_callbacks", None)


@pytest.fixture
def distributed_env(monkeypatch, callbacks):
    """The callbacks module and this checkout on the started processes' path."""
    monkeypatch.setenv("PYTHONPATH", f"{Path(callbacks.__file__).parent}:{REPO}")


def run_settings():
    from conflictlab.conflictbank.training import TrainingSettings

    # 6 steps of 2 blocks: all within the first of the corpus's passes, checkpoints at 2, 4 and 6
    return TrainingSettings(max_steps=6, learning_rate=1e-3, batch_size=2, max_length=32, save_steps=2)


def corpus():
    from conflictlab.conflictbank.training import mixture_corpus

    return mixture_corpus(demo_records().slice(0, 4), (2, 3), seed=0)


def train(model_dir, folder: Path, **kwargs) -> dict:
    from conflictlab.conflictbank.training import continue_pretraining

    options = dict(checkpoint_dir=folder / "ckpt", settings=run_settings(), name="t")
    return continue_pretraining(model_dir, corpus(), folder / "trained", **{**options, **kwargs})


def weights(folder: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def max_difference(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float(np.abs(a[k] - b[k]).max()) for k in a)


def block_index(model_dir) -> dict:
    """{block's token ids: its row in the packed corpus}."""
    from transformers import AutoTokenizer

    from conflictlab.conflictbank.training import pack_blocks, tokenize_for_packing

    blocks = pack_blocks(
        tokenize_for_packing(AutoTokenizer.from_pretrained(model_dir), corpus()), run_settings().max_length
    )
    assert len(blocks) >= run_settings().max_steps * 2  # every step within the first pass
    return {tuple(row): index for index, row in enumerate(blocks.tolist())}


def steps_of_blocks(folder: Path, processes: int, index: dict) -> list[list[int]]:
    """The packed blocks of each optimiser step, the processes' forward
    passes in rank order (accumulation 1: one forward pass per step each)."""
    per_rank = [json.loads((folder / f"batches-{rank}.json").read_text()) for rank in range(processes)]
    assert len({len(batches) for batches in per_rank}) == 1
    return [
        [index[tuple(row)] for rank in range(processes) for row in per_rank[rank][step]]
        for step in range(len(per_rank[0]))
    ]


@pytest.fixture(scope="module")
def one_process(tiny_llama_dir, tmp_path_factory, callbacks):
    """The uninterrupted single-process run every other run is compared with."""
    folder = tmp_path_factory.mktemp("one-process")
    manifest = train(tiny_llama_dir, folder, callbacks=[callbacks.RecordBatches(folder)])
    return folder, manifest


@pytest.fixture(scope="module")
def two_processes(tiny_llama_dir, tmp_path_factory, callbacks):
    """The same run in two processes (DDP over gloo, one thread each)."""
    folder = tmp_path_factory.mktemp("two-processes")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", f"{Path(callbacks.__file__).parent}:{REPO}")
        manifest = train(tiny_llama_dir, folder, processes=2, callbacks=[callbacks.RecordBatches(folder)])
    return folder, manifest


@same_worker
def test_training_lowers_loss_saves_a_registry_folder_and_resumes(tiny_llama_dir, tmp_path):
    from transformers import AutoTokenizer, TrainerCallback

    from conflictlab.conflictbank.ratio import MixtureRatio
    from conflictlab.conflictbank.training import (
        TrainingSettings,
        continue_pretraining,
        mixture_corpus,
        pack_blocks,
        tokenize_for_packing,
    )
    from conflictlab.lm.loading import load
    from conflictlab.lm.registry import read_manifest

    texts = mixture_corpus(demo_records().slice(0, 2), MixtureRatio.from_label("2:1").parts(), seed=0)
    assert len(texts) == 3
    blocks = len(pack_blocks(tokenize_for_packing(AutoTokenizer.from_pretrained(tiny_llama_dir), texts), 64))
    settings = TrainingSettings(
        max_steps=2 * blocks, learning_rate=5e-4, batch_size=1, max_length=64, save_steps=blocks
    )

    class Killed(RuntimeError):
        pass

    class KillAfterCheckpoint(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            raise Killed(f"killed after saving step {state.global_step}")

    checkpoints, out = tmp_path / "ckpt", tmp_path / "trained"
    with pytest.raises(Killed, match=f"step {blocks}"):
        continue_pretraining(
            tiny_llama_dir,
            texts,
            out,
            checkpoint_dir=checkpoints,
            settings=settings,
            name="t",
            callbacks=[KillAfterCheckpoint()],
        )
    assert (checkpoints / f"checkpoint-{blocks}").is_dir() and not out.exists()

    class RecordSaves(TrainerCallback):
        steps: list[int] = []

        def on_save(self, args, state, control, **kwargs):
            self.steps.append(state.global_step)

    manifest = continue_pretraining(
        tiny_llama_dir, texts, out, checkpoint_dir=checkpoints, settings=settings, name="t", callbacks=[RecordSaves()]
    )
    training = manifest["training"]
    assert training["resumed_from"] == f"checkpoint-{blocks}"
    assert RecordSaves.steps == []  # step 2 x blocks is the last: the model folder is saved, not a checkpoint
    assert (
        len(training["loss"]) == 2 * blocks
    )  # the first epoch's from the checkpoint's state, the second's after resuming
    assert (training["corpus_blocks"], training["tokens_per_step"], training["epochs"]) == (blocks, 64, 2.0)
    assert (
        training["processes"],
        training["per_process_batch_size"],
        training["per_process_gradient_accumulation"],
    ) == (1, 1, 1)
    # batch 1: each epoch sees each packed block once, so compare epochs
    assert sum(training["loss"][blocks:]) < sum(training["loss"][:blocks])
    assert read_manifest(out)["training"]["corpus_sha256"] == training["corpus_sha256"]
    assert not checkpoints.exists()
    lm = load(out, dtype="float32")
    assert lm.model.config.num_hidden_layers == load(tiny_llama_dir, dtype="float32").model.config.num_hidden_layers


@same_worker
def test_a_partial_checkpoint_gives_a_fresh_start_equal_to_an_uninterrupted_run(
    tiny_llama_dir, tmp_path, one_process, caplog
):
    plant_partial_checkpoint(tmp_path / "ckpt" / "checkpoint-4")
    with caplog.at_level(logging.WARNING, logger="conflictlab.conflictbank.training"):
        manifest = train(tiny_llama_dir, tmp_path)
    assert "no completion mark" in caplog.text and "starts again from the base model" in caplog.text
    assert manifest["training"]["resumed_from"] is None
    reference_folder, reference = one_process
    np.testing.assert_allclose(manifest["training"]["loss"], reference["training"]["loss"], rtol=LOSS_RTOL)
    assert max_difference(weights(tmp_path / "trained"), weights(reference_folder / "trained")) <= RESUME_ATOL


@same_worker
def test_a_kill_while_writing_a_checkpoint_resumes_from_the_previous_one(tiny_llama_dir, tmp_path, one_process, caplog):
    driver = tmp_path / "driver.py"
    driver.write_text(KILLED_WHILE_SAVING)
    arguments = tmp_path / "arguments.pickle"
    arguments.write_bytes(
        pickle.dumps(
            {
                "base_dir": str(tiny_llama_dir),
                "texts": corpus(),
                "out_dir": str(tmp_path / "trained"),
                "checkpoint_dir": str(tmp_path / "ckpt"),
                "settings": run_settings(),
                "name": "t",
            }
        )
    )
    killed = subprocess.run(
        [sys.executable, str(driver), str(arguments)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "ckpt").glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    assert (tmp_path / "ckpt" / "checkpoint-4" / "model.safetensors").is_file() and not (tmp_path / "trained").exists()

    with caplog.at_level(logging.WARNING, logger="conflictlab.conflictbank.training"):
        manifest = train(tiny_llama_dir, tmp_path)
    assert "checkpoint-4, which cannot be resumed: no completion mark" in caplog.text
    assert manifest["training"]["resumed_from"] == "checkpoint-2"
    reference_folder, reference = one_process
    np.testing.assert_allclose(manifest["training"]["loss"], reference["training"]["loss"], rtol=LOSS_RTOL)
    assert max_difference(weights(tmp_path / "trained"), weights(reference_folder / "trained")) <= RESUME_ATOL
    assert not (tmp_path / "ckpt").exists()


@same_worker
def test_two_processes_train_on_the_same_blocks_with_the_same_losses_as_one(tiny_llama_dir, one_process, two_processes):
    index = block_index(tiny_llama_dir)
    (one_folder, one), (two_folder, two) = one_process, two_processes
    steps = steps_of_blocks(one_folder, 1, index)
    assert len(steps) == 6 and all(len(blocks) == 2 for blocks in steps)
    assert steps_of_blocks(two_folder, 2, index) == steps
    assert len(set(sum(steps, []))) == 12  # 12 distinct blocks: the order is a permutation, not a repeat
    assert (two["training"]["per_process_batch_size"], two["training"]["tokens_per_step"]) == (
        1,
        one["training"]["tokens_per_step"],
    )
    np.testing.assert_allclose(two["training"]["loss"], one["training"]["loss"], rtol=LOSS_RTOL)
    assert max_difference(weights(two_folder / "trained"), weights(one_folder / "trained")) <= PROCESSES_ATOL


@same_worker
def test_two_processes_killed_after_a_checkpoint_resume_from_it(
    tiny_llama_dir, tmp_path, distributed_env, callbacks, two_processes, one_process, caplog
):
    with pytest.raises(RuntimeError, match="training processes failed"):
        train(tiny_llama_dir, tmp_path, processes=2, callbacks=[callbacks.KillAfterSave(step=2, rank=1)])
    assert [p.name for p in (tmp_path / "ckpt").glob("checkpoint-*")] == ["checkpoint-2"]
    plant_partial_checkpoint(tmp_path / "ckpt" / "checkpoint-4")  # as if the kill had come during the next save
    with caplog.at_level(logging.WARNING, logger="conflictlab.conflictbank.training"):
        manifest = train(tiny_llama_dir, tmp_path, processes=2)
    assert "checkpoint-4, which cannot be resumed" in caplog.text
    assert manifest["training"]["resumed_from"] == "checkpoint-2"
    np.testing.assert_allclose(manifest["training"]["loss"], two_processes[1]["training"]["loss"], rtol=LOSS_RTOL)
    assert max_difference(weights(tmp_path / "trained"), weights(two_processes[0] / "trained")) <= RESUME_ATOL
    assert max_difference(weights(tmp_path / "trained"), weights(one_process[0] / "trained")) <= PROCESSES_ATOL

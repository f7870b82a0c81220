"""Embedded knowledge conflicts (ConflictBank §3.3, C.2): continued
pre-training on default and conflicting evidence text at a fixed ratio.

The paper trains Qwen1.5-4B, Mistral-7B and LLaMA3-8B for 4,500 steps
(lr 2e-5, batch 256) at default : conflicting ratios 1:0, 2:1, 1:1 and 2:3,
then reads OAR without evidence and with the default evidence. Every ratio
trains for the same number of optimiser steps on packed blocks of the same
length, so on the same number of tokens, and the conflicting texts are nested
(2:3's include 1:1's): only the mixture differs. With a fixed budget, a larger
conflicting share means fewer passes over each default text; the manifest
records the passes (``epochs``). Training runs
through transformers' ``Trainer`` (checkpoints every ``save_steps``, resumed
from the last one after a kill; ``accelerate launch`` spreads it over GPUs),
and the result is saved as a prepared model folder whose manifest records
how it was made.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.conflictbank.dataset import CONFLICT_KINDS

log = logging.getLogger(__name__)


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
) -> dict:
    """Train the model in ``base_dir`` on ``texts``; save it to ``out_dir``.

    Resumes from the last checkpoint under ``checkpoint_dir`` when one exists
    (a killed run continues, not restarts); the checkpoints are removed once
    the folder is saved. Returns the saved folder's manifest, whose
    ``training`` entry holds the settings, the corpus checksum and size
    (texts, packed blocks, passes), the tokens per optimiser step, the base
    weights' checksum, the step it resumed from and the loss per step. The
    texts are packed (:func:`pack_blocks`) into blocks of ``max_length``.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments, default_data_collator
    from transformers.trainer_utils import get_last_checkpoint

    from conflictlab.lm.registry import save_model_folder, weights_checksum

    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    checkpoint_dir = Path(checkpoint_dir)
    resume = get_last_checkpoint(str(checkpoint_dir)) if checkpoint_dir.is_dir() else None
    arguments = TrainingArguments(
        output_dir=str(checkpoint_dir),
        max_steps=settings.max_steps,
        per_device_train_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.gradient_accumulation,
        learning_rate=settings.learning_rate,
        save_strategy="steps",
        save_steps=settings.save_steps,
        logging_steps=1,
        report_to=[],
        seed=settings.seed,
        data_seed=settings.seed,
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=True,
    )
    blocks = pack_blocks(tokenize_for_packing(tokenizer, texts), settings.max_length)
    trainer = Trainer(
        model=model,
        args=arguments,
        train_dataset=_Blocks(blocks),
        data_collator=default_data_collator,
        callbacks=list(callbacks),
    )
    if resume:
        log.info("resuming %s from %s", name, resume)
    trainer.train(resume_from_checkpoint=resume)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    blocks_per_step = arguments.world_size * settings.batch_size * settings.gradient_accumulation
    training = {
        **asdict(settings),
        "base": str(base_dir),
        "base_weights_sha256": weights_checksum(base_dir),
        "corpus_sha256": corpus_sha256(texts),
        "corpus_texts": len(texts),
        "corpus_blocks": len(blocks),
        "tokens_per_step": blocks_per_step * settings.max_length,
        # passes over the corpus, so over each default text: fixed steps make it fewer as the conflicting share grows
        "epochs": settings.max_steps * blocks_per_step / len(blocks),
        "resumed_from": Path(resume).name if resume else None,
        "loss": losses,
    }
    manifest = save_model_folder(
        trainer.model,
        tokenizer,
        out_dir,
        {"name": name, "source": f"trained:{base_dir}", "source_sha256": None, "dtype": "float32", "training": {**training, **(provenance or {})}},
    )
    shutil.rmtree(checkpoint_dir, ignore_errors=True)
    return manifest

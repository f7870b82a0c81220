"""Embedded knowledge conflicts (ConflictBank §3.3, C.2): continued
pre-training on default and conflicting evidence text at a fixed ratio.

The paper trains Qwen1.5-4B, Mistral-7B and LLaMA3-8B for 4,500 steps
(lr 2e-5, batch 256) at default : conflicting ratios 1:0, 2:1, 1:1 and 2:3,
then reads OAR without evidence and with the default evidence. Training runs
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
    """One continued pre-training run (batch = batch_size × gradient_accumulation)."""

    max_steps: int
    learning_rate: float = 2e-5
    batch_size: int = 8
    gradient_accumulation: int = 1
    max_length: int = 256
    save_steps: int = 500
    seed: int = 0


def parse_ratio(text: str) -> tuple[int, int]:
    """``"2:3"`` -> (2, 3): parts of default and of conflicting text."""
    try:
        default, conflicting = (int(part) for part in str(text).split(":"))
    except ValueError:
        raise ValueError(f"ratio {text!r}: expected 'default:conflicting', e.g. '2:1'") from None
    if default <= 0 or conflicting < 0:
        raise ValueError(f"ratio {text!r}: the default part must be positive and the conflicting part non-negative")
    return default, conflicting


def mixture_corpus(records: pa.Table, ratio: tuple[int, int], *, seed: int) -> list[str]:
    """Every record's default evidence plus conflicting evidence (drawn with
    ``seed`` from all three conflict kinds, without replacement) in the
    proportion ``ratio``, shuffled. ValueError when the pool is too small."""
    default = records.column("default_evidence").to_pylist()
    pool = [text for kind in CONFLICT_KINDS for text in records.column(f"{kind}_evidence").to_pylist()]
    wanted = round(len(default) * ratio[1] / ratio[0])
    if wanted > len(pool):
        raise ValueError(f"ratio {ratio[0]}:{ratio[1]} needs {wanted} conflicting texts; the records have {len(pool)}")
    rng = np.random.default_rng(seed)
    texts = default + [pool[i] for i in rng.permutation(len(pool))[:wanted]]
    return [texts[i] for i in rng.permutation(len(texts))]


def corpus_sha256(texts: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode()).hexdigest()


class _TokenizedTexts:
    """A map-style dataset of tokenized texts (each cut to ``max_length``)."""

    def __init__(self, tokenizer, texts: Sequence[str], max_length: int):
        self.items = [tokenizer(text, truncation=True, max_length=max_length) for text in texts]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict:
        return {"input_ids": self.items[index]["input_ids"], "attention_mask": self.items[index]["attention_mask"]}


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
    ``training`` entry holds the settings, the corpus checksum, the base
    weights' checksum, the step it resumed from and the loss per step.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments
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
    trainer = Trainer(
        model=model,
        args=arguments,
        train_dataset=_TokenizedTexts(tokenizer, texts, settings.max_length),
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        callbacks=list(callbacks),
    )
    if resume:
        log.info("resuming %s from %s", name, resume)
    trainer.train(resume_from_checkpoint=resume)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    training = {
        **asdict(settings),
        "base": str(base_dir),
        "base_weights_sha256": weights_checksum(base_dir),
        "corpus_sha256": corpus_sha256(texts),
        "corpus_texts": len(texts),
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

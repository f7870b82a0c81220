"""How many GPUs a model takes, and where a split model takes its inputs.

A 70B-class model in bfloat16 (Qwen2.5-72B-Instruct: 145 GB of weights) does
not fit one GPU. :func:`weight_bytes` sizes a prepared folder from its
safetensors headers (names, dtypes and shapes; no weight is read), and
:func:`gpus_needed` turns that into the fewest GPUs of a given memory that
hold it: the weights plus ``headroom`` (20 %: key/value cache, activations and
the CUDA context of a batch) within ``usable`` (90 %, vLLM's default
``gpu_memory_utilization``) of each GPU. The two fractions are rules of thumb,
not measurements.

Two consumers:

* :func:`conflictlab.lm.loading.load` (transformers) spreads a model over
  :func:`gpus_to_use` GPUs with ``device_map="balanced"`` and the per-GPU
  budgets of :func:`gpu_max_memory`; accelerate's hooks then move each
  layer's inputs to the layer's GPU, and :func:`input_device` says where the
  input ids go (the input embedding's GPU).
* vLLM shards a model by tensor parallelism over a number of GPUs that must
  divide the attention heads: :func:`check_tensor_parallel` refuses a size
  that does not, or that leaves the shards too big for the GPUs, before an
  engine spends minutes starting.

This module imports torch only inside :func:`visible_gpus`,
:func:`gpu_memory_gb` and :func:`input_device`, so the sizing runs (and is
tested) without it.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterator
from pathlib import Path

HEADROOM = 0.2
USABLE = 0.9
GB = 1e9

# Bytes per element of a torch dtype name (conflictlab.lm.loading.DTYPES).
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# Floating safetensors dtypes, which a model is cast from into the loading
# dtype; every other stored dtype (8-bit floats, integers: quantised blocks
# and their scales) stays as stored.
CAST_DTYPES = {"F64", "F32", "F16", "BF16"}
STORED_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "F4": 0.5,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U64": 8,
    "U32": 4,
    "U16": 2,
    "U8": 1,
    "BOOL": 1,
}


def safetensors_files(model_dir: str | os.PathLike) -> list[Path]:
    """The weight files of a prepared folder: those its index names, else every
    ``*.safetensors`` (FileNotFoundError when there is none)."""
    folder = Path(model_dir)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return [folder / name for name in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"{folder}: no safetensors weights to size (prepare the model with prepare_model)")
    return files


def safetensors_header(path: str | os.PathLike) -> dict:
    """One file's tensor table, ``{name: {"dtype", "shape", "data_offsets"}}``,
    read from its header (an 8-byte little-endian length, then JSON)."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    return header


def stored_tensors(model_dir: str | os.PathLike) -> Iterator[tuple[str, str, int]]:
    """``(name, stored dtype, element count)`` of every tensor in the folder."""
    for path in safetensors_files(model_dir):
        for name, entry in safetensors_header(path).items():
            yield name, entry["dtype"], math.prod(entry["shape"])


def weight_bytes(model_dir: str | os.PathLike, dtype: str) -> int:
    """Bytes the folder's weights take once loaded in ``dtype`` (a torch dtype
    name): floating tensors at ``dtype``'s width, others as stored."""
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype {dtype!r} is not one of {tuple(DTYPE_BYTES)}")
    total = 0.0
    for name, stored, count in stored_tensors(model_dir):
        if stored not in STORED_BYTES:
            raise ValueError(f"{model_dir}: tensor {name} has dtype {stored}, which the sizing does not know")
        total += count * (DTYPE_BYTES[dtype] if stored in CAST_DTYPES else STORED_BYTES[stored])
    return int(total)


def gpus_needed(
    model_dir: str | os.PathLike,
    gpu_memory_gb: float,
    dtype: str,
    *,
    headroom: float = HEADROOM,
    usable: float = USABLE,
) -> int:
    """The fewest GPUs of ``gpu_memory_gb`` GB (10^9 bytes) each that hold the
    model in ``dtype`` with ``headroom`` (a fraction of the weights) within
    ``usable`` of each GPU's memory; at least 1."""
    need = weight_bytes(model_dir, dtype) * (1 + headroom)
    return max(1, math.ceil(need / (gpu_memory_gb * GB * usable)))


def gpus_to_use(
    model_dir: str | os.PathLike, dtype: str, requested: int | None, *, visible: int, gpu_memory_gb: float
) -> int:
    """GPUs :func:`conflictlab.lm.loading.load` spreads a model over:
    ``requested`` (a job's GPUs), or for None the fewest that hold it.
    ValueError when that is fewer than :func:`gpus_needed` or more than the
    ``visible`` GPUs."""
    needed = gpus_needed(model_dir, gpu_memory_gb, dtype)
    gpus = requested or needed
    if gpus < needed:
        raise ValueError(
            f"{model_dir} needs {needed} GPUs of {gpu_memory_gb:.0f} GB in {dtype} "
            f"({weight_bytes(model_dir, dtype) / GB:.1f} GB of weights + {HEADROOM:.0%}), {gpus} requested: "
            f"set the model's gpus in config (models.<name>.gpus) to {needed} or more"
        )
    if gpus > visible:
        raise ValueError(
            f"{model_dir} is to be spread over {gpus} GPUs but {visible} are visible to this job "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"
        )
    return gpus


def gpu_max_memory(gpus: int, gpu_memory_gb: float, *, usable: float = USABLE) -> dict[int, int]:
    """Per-GPU weight budgets for transformers' ``max_memory``: ``usable`` of
    each of GPUs 0..gpus-1, and nothing for the CPU or disk, so a model that
    does not fit fails rather than running from host memory."""
    return {index: int(gpu_memory_gb * GB * usable) for index in range(gpus)}


def attention_heads(model_dir: str | os.PathLike) -> int:
    """``num_attention_heads`` of the folder's config.json (its text model's, for a multimodal one)."""
    config = json.loads((Path(model_dir) / "config.json").read_text())
    config = config.get("text_config", config)
    return int(config["num_attention_heads"])


def smallest_tensor_parallel(needed: int, heads: int) -> int | None:
    """The smallest divisor of ``heads`` that is at least ``needed`` (None if ``needed`` exceeds ``heads``)."""
    return next((size for size in range(needed, heads + 1) if heads % size == 0), None)


def check_tensor_parallel(model_dir: str | os.PathLike, size: int, *, dtype: str, gpu_memory_gb: float | None) -> None:
    """ValueError when vLLM cannot shard the model over ``size`` GPUs: ``size``
    does not divide the attention heads, or (``gpu_memory_gb`` known) the
    shards exceed the GPUs by :func:`gpus_needed`. The message names the size
    to request."""
    heads = attention_heads(model_dir)
    needed = 1 if gpu_memory_gb is None else gpus_needed(model_dir, gpu_memory_gb, dtype)
    if heads % size == 0 and size >= needed:
        return
    fit = smallest_tensor_parallel(needed, heads)
    reason = (
        f"does not divide its {heads} attention heads"
        if heads % size
        else f"is below the {needed} GPUs of {gpu_memory_gb:.0f} GB it needs in {dtype}"
    )
    remedy = (
        f"request {fit} GPUs (models.<name>.gpus, or generation.tensor_parallel_size)"
        if fit
        else "no tensor-parallel size holds it"
    )
    raise ValueError(f"{model_dir}: a tensor-parallel size of {size} {reason}; {remedy}")


def visible_gpus() -> int:
    """CUDA devices this process may use (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_memory_gb(index: int = 0) -> float | None:
    """Total memory of CUDA device ``index`` in GB (10^9 bytes); None without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(index).total_memory / GB


def input_device(model):
    """The torch device a model takes its input ids on: its input embedding's
    (accelerate's execution device when the model is dispatched, whose
    embedding weight may sit on the meta device until its hook loads it)."""
    import torch

    embedding = model.get_input_embeddings()
    hook = getattr(embedding, "_hf_hook", None)
    device = getattr(hook, "execution_device", None)
    if device is not None:
        return torch.device(f"cuda:{device}" if isinstance(device, int) else device)
    return embedding.weight.device

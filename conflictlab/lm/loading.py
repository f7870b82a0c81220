"""Loading a prepared model once, with every default decided here.

:func:`load` returns a :class:`LoadedModel`: the transformers model and its
tokenizer plus what every operation needs to agree on (device, dtype, pad
id, end-of-sequence ids, whether a chat template exists). Defaults, written
once: CUDA when available; float32 on the CPU (the exact reference) and
bfloat16 on a GPU; a float32 model on the CPU gets its linear layers packed
for oneDNN (:mod:`conflictlab.lm.packed_linear`) where that CPU runs oneDNN's
kernels faster than MKL's (:func:`packing_pays`), and elsewhere for the calls
of a few rows (a decoding step), where oneDNN's are faster there too
(``pack`` forces either way), unless it is an encoder-decoder model; a CPU
model attends with grouped key/value heads kept grouped under a mask
(:mod:`conflictlab.lm.attention`, same outputs).

``dtype="auto"`` picks the faster precision the hardware offers: bfloat16 on
a GPU or on a CPU with native bfloat16 instructions (``avx512_bf16`` or
``amx_bf16``), float32 on other CPUs, where PyTorch emulates bfloat16: on the
Intel Xeon of this project's machines without those instructions, a SmolLM2
forward (8 × 400 tokens, one thread) took 67 s in bfloat16 against 15 s in
float32, while on the AMD EPYC with ``avx512_bf16`` bfloat16 generation was
1.76x faster than float32 (``benchmarks/precision.py``). Results under
``auto`` therefore depend on the CPU kind: the resolved dtype is logged.

An encoder-decoder model (its config's ``is_encoder_decoder``: T5, FLAN-T5)
loads with ``AutoModelForSeq2SeqLM`` (:func:`model_class`); the prompt goes to
the encoder and the decoder generates or scores the continuation. It serves
greedy and contrastive generation (:mod:`conflictlab.lm.generation`) and the
continuation log-likelihoods of :mod:`conflictlab.lm.contrastive_likelihood`;
the operations that read one decoder stream over prompt and continuation
(hidden states, steering hooks, the Shapley scorers, option logits) refuse it
with :class:`DecoderOnlyOperation` (:func:`require_decoder_only`), and a
config that asks for them is refused before any job
(:func:`conflictlab.run_config.capability_problems`).

A model too big for one GPU is spread over several (``device_map="balanced"``,
:mod:`conflictlab.lm.placement` sizes it): on CUDA, ``load`` puts it on the
fewest GPUs that hold it, or on ``gpus`` of them when the caller knows how many
its job has. An explicit ``device_map`` (accelerate's: module name -> GPU
index, ``"cpu"`` or ``"disk"``) places it by hand; that is how the tests run a
split model on a CPU machine. A split model is not packed, and its
``device`` is where its input ids go (the input embedding's device):
accelerate's hooks move every layer's inputs to that layer's device.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

log = logging.getLogger(__name__)

DTYPES = ("float32", "bfloat16", "float16")
# A job's model-load phases in its log (benchmarks/default_run.py reads them).
LOAD_FORMAT = "model load: %.2f CPU s importing torch and transformers, %.2f CPU s loading %s"
AUTO = "auto"
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def default_dtype(device: str) -> str:
    return "float32" if device == "cpu" else "bfloat16"


@dataclass(frozen=True)
class CpuKind:
    """What /proc/cpuinfo says of the CPU's kind: vendor, family, model, flags."""

    vendor: str = ""
    family: int | None = None
    model: int | None = None
    flags: frozenset = frozenset()


def cpu_kind(cpuinfo: str | None = None) -> CpuKind:
    """The first processor's :class:`CpuKind` from Linux's /proc/cpuinfo text
    (read when None; an empty kind where it cannot be read)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as handle:
                cpuinfo = handle.read()
        except OSError:
            return CpuKind()
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if fields:  # the blank line after the first processor
                break
            continue
        fields.setdefault(key.strip(), value.strip())

    def number(key: str) -> int | None:
        return int(fields[key]) if fields.get(key, "").isdigit() else None

    return CpuKind(
        vendor=fields.get("vendor_id", ""),
        family=number("cpu family"),
        model=number("model"),
        flags=frozenset(fields.get("flags", "").split()),
    )


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether the CPU lists a bfloat16 instruction set (Linux /proc/cpuinfo flags)."""
    return any(flag in cpu_kind(cpuinfo).flags for flag in NATIVE_BF16_FLAGS)


def packing_pays(kind=None) -> bool:
    """Whether oneDNN's packed kernels beat MKL's on this CPU (``kind``: a
    :class:`CpuKind`, this machine's when None).

    Everywhere but on AMD's Zen 3 (family 25 without AVX-512; Zen 4 is family
    25 with it). There, side by side in one process, one thread, 8 prompts of
    100, 400 and 800 tokens, three rounds (``python benchmarks/linear_kernels.py
    --forward --model <folder>``): SmolLM2-135M took 1.09x as long packed as with MKL, Gemma-3-270M
    1.06x; one 1536 x 576 layer over 640 rows 15.1 against 13.1 ms. A fixed
    rule rather than a timing at load: a timing under load could pick differently
    from job to job, and the two kernels round differently. Where it says no,
    :func:`load` still packs for the few rows of a decoding step, where
    oneDNN wins there as well (``benchmarks/linear_kernels.py --decode``).
    """
    kind = kind or cpu_kind()
    zen3 = kind.vendor == "AuthenticAMD" and kind.family == 25 and "avx512f" not in kind.flags
    return not zen3


def resolve_dtype(dtype: str | None, device: str, *, cpuinfo: str | None = None) -> str:
    """``dtype`` itself, or for None the device default, or for ``"auto"``
    bfloat16 where the hardware computes it natively and float32 elsewhere."""
    if dtype is None:
        return default_dtype(device)
    if dtype == AUTO:
        return "bfloat16" if device != "cpu" or cpu_has_native_bf16(cpuinfo) else "float32"
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {DTYPES + (AUTO,)}")
    return dtype


def vllm_dtype(dtype: str | None) -> str:
    """The precision of a vLLM engine (in process or served): bfloat16 for
    None, else :func:`resolve_dtype` on this machine's default device."""
    return "bfloat16" if dtype is None else resolve_dtype(dtype, default_device())


class DecoderOnlyOperation(ValueError):
    """An operation that needs a decoder-only model was given an encoder-decoder one."""


def model_class(config):
    """The transformers auto class of a model config: ``AutoModelForSeq2SeqLM``
    for an encoder-decoder model, else ``AutoModelForCausalLM``."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    return AutoModelForSeq2SeqLM if getattr(config, "is_encoder_decoder", False) else AutoModelForCausalLM


@dataclass
class LoadedModel:
    """A causal or encoder-decoder LM ready for inference (eval mode) and what describes it.

    ``pad_id``: the tokenizer's pad token, else the smallest end-of-sequence
    id (padding is always masked or never attended, so its id only has to be
    a valid token). ``eos_ids``: the generation config's end-of-sequence ids,
    else the tokenizer's. ``device``: where input ids go (for a split model,
    its input embedding's device); ``device_map``: a split model's placement
    (module name -> device), None for a model on one device.
    ``is_encoder_decoder``: the prompt goes to an encoder, the continuation
    to a decoder that starts from ``decoder_start_id``.
    """

    model: object
    tokenizer: object
    path: str
    device: str
    dtype: str
    pad_id: int
    eos_ids: frozenset[int]
    has_chat_template: bool
    packed_layers: int = 0
    packing: str = "none"  # which calls of the packed layers use oneDNN: "all", "few rows" or "none"
    attention: str = "sdpa"
    device_map: dict | None = None
    is_encoder_decoder: bool = False
    decoder_start_id: int | None = None

    @property
    def n_layers(self) -> int:
        return len(self.model.get_decoder().layers)

    @property
    def hidden_size(self) -> int:
        return self.model.config.get_text_config().hidden_size


def require_decoder_only(lm, operation: str) -> None:
    """Refuse ``operation`` (what it computes, for the message) on an encoder-decoder model; ``lm``: a
    :class:`LoadedModel` or a transformers model."""
    config = getattr(lm, "model", lm).config
    if config.is_encoder_decoder:
        name = getattr(lm, "path", config.name_or_path)
        raise DecoderOnlyOperation(
            f"{name} is an encoder-decoder model; {operation} reads one decoder stream over prompt and continuation, "
            "which it does not have (it runs greedy and contrastive generation and continuation log-likelihoods only)"
        )


def end_of_sequence_ids(generation_config, tokenizer) -> frozenset[int]:
    eos = getattr(generation_config, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return frozenset()
    return frozenset(eos if isinstance(eos, (list, tuple)) else [eos])


# What a plain generation config keeps of a model's own: its special tokens.
# Sampling settings (temperature, top_p, repetition_penalty, ...) are the
# caller's, through conflictlab.lm.generation.DecodingParams, for every method alike.
_TOKEN_FIELDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")


def plain_generation_config(generation_config):
    """A ``transformers.GenerationConfig`` holding only the special tokens of
    ``generation_config`` (a model's own), so that ``model.generate`` decodes
    as the caller says and as the contrastive loop does: greedy, no
    repetition penalty, no length rules the model card chose. Returns (the
    plain config, the dropped settings as a dict, for the log)."""
    from transformers import GenerationConfig

    own = generation_config.to_diff_dict() if generation_config is not None else {}
    kept = {key: own[key] for key in _TOKEN_FIELDS if own.get(key) is not None}
    dropped = {key: value for key, value in own.items() if key not in _TOKEN_FIELDS and key != "transformers_version"}
    return GenerationConfig(**kept), dropped


def load_tokenizer(model_dir: str | os.PathLike):
    """A model folder's tokenizer (``AutoTokenizer``), imported with transformers'
    unused probes off (:func:`without_unused_probes`): a job that reads its
    tokenizer before loading the model would otherwise import scikit-learn,
    pandas and scipy."""
    without_unused_probes()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


def folder_eos_ids(model_dir: str | os.PathLike, tokenizer=None) -> frozenset[int]:
    """:func:`end_of_sequence_ids` of a prepared folder, without loading its weights."""
    from transformers import GenerationConfig

    tokenizer = tokenizer or load_tokenizer(model_dir)
    return end_of_sequence_ids(GenerationConfig.from_pretrained(model_dir), tokenizer)


def padding_id(tokenizer, eos_ids: frozenset[int]) -> int:
    if tokenizer.pad_token_id is not None:
        return int(tokenizer.pad_token_id)
    if eos_ids:
        return min(eos_ids)
    raise ValueError(f"{tokenizer.name_or_path}: the tokenizer has neither a pad nor an end-of-sequence token")


def without_unused_probes() -> None:
    """Keep transformers from importing scikit-learn and scipy with its models.

    ``transformers.generation`` imports ``sklearn.metrics`` (and with it
    scipy.stats and pandas) whenever scikit-learn is installed, for assisted
    generation's confidence threshold alone; its object-detection losses
    import ``scipy.optimize`` whenever scipy is installed. Nothing here uses
    either: 1.0-2.0 and 0.5 of the ~8 CPU s that importing torch and
    transformers' models costs every model job (AMD EPYC Zen 3;
    docs/performance.md). Called before transformers' models are first
    imported, and before ``AutoTokenizer`` (whose import reaches assisted
    generation too: :func:`load_tokenizer`); a process that imported them
    already keeps what it has. The project's own modules import scikit-learn
    and scipy where they use them, unaffected.
    """
    remember_packages_distributions()
    remember_transformers_model_index()
    import transformers.utils

    transformers.utils.is_sklearn_available = lambda: False
    transformers.utils.is_scipy_available = lambda: False


def remember_packages_distributions(cache_file: str | os.PathLike | None = None) -> None:
    """Serve ``importlib.metadata.packages_distributions()`` from a file while
    the installed packages stay as they are.

    transformers calls it when first imported, to map import names to
    distributions: it reads the RECORD file of every installed distribution
    (some 49,000 lines in the project's environment), about 1 of the 6-8 CPU
    seconds every model job spends importing (AMD EPYC Zen 3,
    docs/performance.md). The mapping is kept in ``cache_file`` (default:
    ``packages-distributions-<digest of sys.prefix>.json`` under
    ``$XDG_CACHE_HOME/conflictlab`` or ``~/.cache/conflictlab``, one per
    environment) with the names and modification times of the metadata
    folders on ``sys.path`` (``name-version.dist-info``: installing,
    upgrading, reinstalling or removing a package changes them), and is
    computed afresh when they differ. A cache that cannot be read or
    written is simply not used. The function is replaced for the whole
    process; every caller gets its own copy of the mapping.
    """
    import importlib.metadata
    import sys
    from pathlib import Path

    from conflictlab.provenance import read_cached_json, store_cached_json, user_cache_file

    compute = getattr(
        importlib.metadata.packages_distributions, "__wrapped__", importlib.metadata.packages_distributions
    )
    if cache_file is None:
        # one file per environment: jobs of different environments would otherwise replace each other's map
        cache_file = user_cache_file("packages-distributions", sys.prefix)
        if cache_file is None:  # no home folder: nothing to keep the map in
            return
    cache_file = Path(cache_file)

    def environment() -> list:
        """The metadata folders on ``sys.path`` and when each was written: their names carry each
        distribution's version, their times a reinstall of the same version."""
        found = []
        for entry in sys.path:
            try:
                with os.scandir(entry or ".") as scan:
                    for item in scan:
                        if item.name.endswith((".dist-info", ".egg-info")):
                            found.append([os.path.join(entry, item.name), item.stat().st_mtime_ns])
            except OSError:
                continue
        return sorted(found)

    def packages_distributions() -> dict[str, list[str]]:
        key = environment()
        stored = read_cached_json(cache_file)
        try:
            if stored["environment"] == key:
                return {name: list(dists) for name, dists in stored["mapping"].items()}
        except (KeyError, TypeError, AttributeError):
            pass
        mapping = compute()
        store_cached_json(cache_file, {"environment": key, "mapping": mapping})
        return mapping

    packages_distributions.__wrapped__ = compute
    importlib.metadata.packages_distributions = packages_distributions


_IMPORT_UTILS = "transformers.utils.import_utils"


def remember_transformers_model_index(cache_file: str | os.PathLike | None = None) -> None:
    """Serve transformers' index of its model code from a file while that code stays as it is.

    Importing transformers reads every module under ``transformers/models``
    (some 2,400 files) for the names it exports, twice: for the package and
    for ``transformers.models``, whose two spellings of the folder miss each
    other in transformers' in-process cache. That is 0.6 of the 5-7 CPU s
    every model job spends importing (AMD EPYC Zen 3, docs/performance.md).
    The index is kept in ``cache_file`` (default:
    ``transformers-models-<digest of the folder>.json`` under the user's cache
    folder) with the name, size and time of every module of the folder, and
    is read afresh when any differs. The first read happens while
    ``transformers`` itself is being imported, so the index goes in through
    an import hook that patches ``transformers.utils.import_utils`` as it is
    imported (or straight into it where it is imported already). A cache
    that cannot be read or written is simply not used.
    """
    import sys

    if _IMPORT_UTILS in sys.modules:
        _serve_model_index(sys.modules[_IMPORT_UTILS], cache_file)
    elif not any(isinstance(finder, _ModelIndexHook) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ModelIndexHook(cache_file))


class _ModelIndexHook:
    """A meta path finder that hands :func:`_serve_model_index` the module
    ``transformers.utils.import_utils`` right after it runs."""

    def __init__(self, cache_file):
        self.cache_file = cache_file

    def find_spec(self, name, path, target=None):
        if name != _IMPORT_UTILS:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if module.__name__ == _IMPORT_UTILS:  # a loader may serve other modules too (a zip archive's)
                _serve_model_index(module, self.cache_file)

        spec.loader.exec_module = exec_module
        return spec


def _serve_model_index(import_utils, cache_file) -> None:
    from pathlib import Path

    from conflictlab.provenance import user_cache_file

    scan = import_utils.create_import_structure_from_path
    if getattr(scan, "serves_stored_index", False):
        return
    models = Path(import_utils.__file__).resolve().parent.parent / "models"
    cache_file = cache_file or user_cache_file("transformers-models", str(models))
    if cache_file is None:  # no home folder: nothing to keep the index in
        return
    held = {}

    def indexed(module_path):
        # transformers calls this for the folder and for its __init__.py, and for every subfolder while it scans
        try:
            folder = os.path.dirname(module_path) if os.path.isfile(module_path) else module_path
            if Path(folder).resolve() != models:
                return scan(module_path)
            if "index" not in held:
                held["index"] = stored_model_index(models, Path(cache_file), scan, scanner=import_utils.__file__)
            return held["index"]
        except Exception:  # noqa: BLE001 - the cache must never break transformers' import: scan as it would
            return scan(module_path)

    indexed.serves_stored_index, indexed.__wrapped__ = True, scan
    import_utils.create_import_structure_from_path = indexed


# Part of the index file's key: a change to how the index is written makes older files unreadable.
_INDEX_FORMAT = "1"


def stored_model_index(models, cache_file, scan, *, scanner) -> dict:
    """``scan(models)`` (transformers' import structure of its ``models``
    folder: subfolder name -> its structure, frozenset of backends -> module
    -> exported names), from ``cache_file`` while every module under
    ``models``, and ``scanner`` (the file of the scanning code), have the
    name, size and time they had when the file was written."""
    import hashlib

    from conflictlab.provenance import read_cached_json, store_cached_json

    stat = os.stat(scanner)
    sources = hashlib.sha256(f"{_INDEX_FORMAT}:{os.path.abspath(scanner)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    for root, folders, files in os.walk(models):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            stat = os.stat(os.path.join(root, name))
            sources.update(f"{os.path.relpath(root, models)}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    key = sources.hexdigest()
    stored = read_cached_json(cache_file)
    if isinstance(stored, dict) and stored.get("sources") == key:
        try:
            return _decode_index(stored["index"])
        except Exception:  # noqa: BLE001 - a file of another shape: scanned afresh and rewritten
            pass
    index = scan(os.fspath(models))
    store_cached_json(cache_file, {"sources": key, "index": _encode_index(index)})
    return index


def _encode_index(index: dict) -> list:
    """An import structure as JSON: its entries in order, a subfolder as
    ["folder", name, structure], backends as ["modules", backends, {module: names}]."""
    return [
        ["folder", key, _encode_index(value)]
        if isinstance(key, str)
        else ["modules", sorted(key), {module: sorted(names) for module, names in value.items()}]
        for key, value in index.items()
    ]


def _decode_index(entries: list) -> dict:
    index = {}
    for kind, key, value in entries:
        if kind == "folder":
            index[key] = _decode_index(value)
        else:
            index[frozenset(key)] = {module: set(names) for module, names in value.items()}
    return index


# glibc's mallopt parameters (malloc.h) and the values keep_freed_memory sets.
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_KEPT_MALLOC = {_M_MMAP_THRESHOLD: 256 << 20, _M_TRIM_THRESHOLD: 1 << 30, _M_TOP_PAD: 64 << 20}


def keep_freed_memory() -> bool:
    """Let this process reuse the memory it frees instead of handing it back.

    By default glibc serves every allocation above 32 MiB (a batch's
    activations, a layer's attention scores) with a fresh ``mmap`` and
    returns it with ``munmap`` when freed, so every forward pass faults in
    and zeroes the same pages again: system time, 10% of a CPU model job's
    CPU (docs/performance.md). With allocations under 256 MiB served from the
    heap and up to 1 GiB of freed heap kept, a batch reuses the previous
    batch's pages. Returns whether it applied (glibc only; elsewhere a no-op).
    """
    import ctypes
    import ctypes.util

    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return False
    return all(mallopt(param, value) == 1 for param, value in _KEPT_MALLOC.items())


def load(
    model_dir: str | os.PathLike,
    *,
    dtype: str | None = None,
    device: str | None = None,
    pack: bool | None = None,
    gpus: int | None = None,
    device_map: dict | None = None,
    offload_folder: str | os.PathLike | None = None,
) -> LoadedModel:
    """A prepared model folder (``resources/models/{name}``), in eval mode.

    ``dtype`` (None, ``"auto"`` or a torch dtype name) and ``device`` default
    as the module docstring says; ``pack`` packs float32 CPU linear layers for
    oneDNN (True: every call; None: every call where :func:`packing_pays`,
    elsewhere the calls of a few rows, :func:`conflictlab.lm.packed_linear.pack_few_row_calls`;
    False: none; a no-op on other precisions and devices and on a split model). On CUDA the model is spread over
    ``gpus`` GPUs (None: the fewest that hold it,
    :func:`conflictlab.lm.placement.gpus_to_use`); off CUDA ``gpus`` is
    ignored. ``device_map`` places it by hand instead (not with ``device`` or
    ``gpus``); ``offload_folder`` holds the weights of modules it puts on
    ``"disk"``.
    """
    from conflictlab.logs import process_cpu_seconds

    before_import = process_cpu_seconds()
    keep_freed_memory()
    without_unused_probes()
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from conflictlab.lm.attention import use_grouped_sdpa
    from conflictlab.lm.packed_linear import pack_few_row_calls, pack_linear_layers
    from conflictlab.lm.placement import gpu_max_memory, gpu_memory_gb, gpus_to_use, input_device, visible_gpus

    if device_map is not None and (device is not None or gpus is not None):
        raise ValueError("load: pass either device_map or device/gpus")
    placement: dict = {}
    if device_map is not None:
        on_gpu = any(not isinstance(d, str) or d.startswith("cuda") for d in device_map.values())
        dtype = resolve_dtype(dtype, "cuda" if on_gpu else "cpu")
        placement = {"device_map": device_map, "offload_folder": offload_folder}
    else:
        device = device or default_device()
        dtype = resolve_dtype(dtype, device)
        if device == "cuda":
            try:
                spread = gpus_to_use(model_dir, dtype, gpus, visible=visible_gpus(), gpu_memory_gb=gpu_memory_gb())
            except FileNotFoundError as unsized:  # weights in another format: as many GPUs as asked for
                log.warning("%s; placing it on %d GPU(s)", unsized, gpus or 1)
                spread = gpus or 1
            if spread > 1:
                placement = {"device_map": "balanced", "max_memory": gpu_max_memory(spread, gpu_memory_gb())}
    before_load = process_cpu_seconds()
    log.info("loading %s in %s on %s", model_dir, dtype, placement.get("device_map") if placement else device)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    auto = model_class(AutoConfig.from_pretrained(model_dir))
    if placement:
        model = auto.from_pretrained(model_dir, dtype=getattr(torch, dtype), **placement).eval()
        split = dict(model.hf_device_map)
        if device_map is None and {"cpu", "disk"} & set(map(str, split.values())):
            raise RuntimeError(f"{model_dir} did not fit its {len(placement['max_memory'])} GPUs: placement {split}")
        device = str(input_device(model))
        log.info("%s split over %s; inputs go to %s", model_dir, sorted(set(map(str, split.values()))), device)
    else:
        model = auto.from_pretrained(model_dir, dtype=getattr(torch, dtype)).to(device).eval()
        split = None
    eos_ids = end_of_sequence_ids(model.generation_config, tokenizer)
    model.generation_config, dropped = plain_generation_config(model.generation_config)
    if dropped:
        log.info("%s: its generation_config's %s not used (decoding follows DecodingParams)", model_dir, dropped)
    # T5's feed-forward reads its output layer's weight (its dtype), which a packed layer no longer holds.
    seq2seq = bool(model.config.is_encoder_decoder)
    packed, packing = 0, "none"
    if pack is not False and split is None and not seq2seq:
        if pack or packing_pays():
            packed, packing = pack_linear_layers(model), "all"
        else:
            packed, packing = pack_few_row_calls(model), "few rows"
    if packed:
        log.info("%s: %d linear layers packed for oneDNN (%s calls)", model_dir, packed, packing)
    else:  # nothing to pack (another precision or device)
        packing = "none"
    use_grouped_sdpa(model)
    log.info(LOAD_FORMAT, before_load - before_import, process_cpu_seconds() - before_load, model_dir)
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        path=str(model_dir),
        device=device,
        dtype=dtype,
        pad_id=padding_id(tokenizer, eos_ids),
        eos_ids=eos_ids,
        has_chat_template=bool(getattr(tokenizer, "chat_template", None)),
        packed_layers=packed,
        packing=packing,
        attention=model.config._attn_implementation,
        device_map=split,
        is_encoder_decoder=seq2seq,
        decoder_start_id=model.config.decoder_start_token_id if seq2seq else None,
    )

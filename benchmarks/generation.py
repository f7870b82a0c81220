"""Generation throughput on the same prompts: transformers batch 1 (the paper
code's way), transformers batched (left-padded, length-sorted) and vLLM.

    python benchmarks/generation.py [--model resources/models/smollm2-135m-instruct]
        [--n-prompts 12] [--max-new-tokens 64] [--no-vllm] [--vllm-arg gpu_memory_utilization=0.3]

Prints generated tokens per second of each and the ratios against batch 1.
"""

from __future__ import annotations

import argparse
import ast
import time

import pyarrow as pa
from transformers import AutoTokenizer

from conflictlab.contextconflict.dataset import CONFLICT_TYPES, TASK_FAMILY, load_released
from conflictlab.contextconflict.generation import build_request
from conflictlab.lm.batching import BatchPolicy
from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load

TEMPLATE = {"reasoning": "reasoning_combined", "summarization": "summarization_simple"}


def demo_prompts(tokenizer, n: int, root: str) -> list[list[int]]:
    samples = pa.concat_tables(load_released(root, t).tables()[0] for t in CONFLICT_TYPES).to_pylist()[:n]
    return [
        build_request(
            tokenizer, s, TEMPLATE[TASK_FAMILY[s["conflict_type"]]], limit=1 << 20, max_new_tokens=0
        ).prompt_ids
        for s in samples
    ]


def timed(backend, prompts, params) -> tuple[float, int]:
    start = time.perf_counter()
    completions = backend.generate(prompts, params)
    return time.perf_counter() - start, sum(len(c.token_ids) for c in completions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--data", default="resources/demo/data")
    parser.add_argument("--n-prompts", type=int, default=12)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=12)
    parser.add_argument("--dtype", default=None, help="default: float32 on CPU, bfloat16 on GPU")
    parser.add_argument("--no-vllm", action="store_true")
    parser.add_argument("--vllm-arg", action="append", default=[], help="KEY=VALUE engine argument")
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    prompts = demo_prompts(tokenizer, args.n_prompts, args.data)
    params = DecodingParams(max_new_tokens=args.max_new_tokens)
    results = {}
    hf = HFBackend(load(args.model, dtype=args.dtype), batch_size=1)
    hf.generate(prompts[:1], DecodingParams(max_new_tokens=2))  # warm-up
    results["hf batch 1"] = timed(hf, prompts, params)
    hf.policy = BatchPolicy(batch_size=args.batch_size)
    results[f"hf batched ({args.batch_size})"] = timed(hf, prompts, params)
    del hf
    if not args.no_vllm:
        extra = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in args.vllm_arg)}
        from conflictlab.lm.vllm_engine import VLLMBackend

        vllm = VLLMBackend(args.model, dtype=args.dtype or "bfloat16", max_model_len=4096, **extra)
        vllm.generate(prompts[:1], DecodingParams(max_new_tokens=2))  # warm-up
        results["vllm"] = timed(vllm, prompts, params)

    print(f"{len(prompts)} prompts, max_new_tokens={args.max_new_tokens}, model={args.model}")
    base_seconds, base_tokens = results["hf batch 1"]
    base_rate = base_tokens / base_seconds
    print(f"{'backend':<20}{'seconds':>10}{'tokens':>10}{'tokens/s':>12}{'vs batch 1':>12}")
    for name, (seconds, tokens) in results.items():
        rate = tokens / seconds
        print(f"{name:<20}{seconds:>10.2f}{tokens:>10d}{rate:>12.1f}{rate / base_rate:>11.2f}x")


if __name__ == "__main__":
    main()

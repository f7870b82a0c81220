"""Masked attention of grouped key/value heads on the CPU: transformers' way
(repeat the key/value heads, then SDPA) against SDPA on the grouped heads
(``enable_gqa``, :mod:`conflictlab.lm.attention`), side by side.

    python benchmarks/attention.py [--threads 1] [--context 300 1100]

Shapes are SmolLM2-135M's (9 query heads, 3 key/value heads, head size 64)
and Gemma-3-270M's (4 and 1, head size 256); a batch of 8 left-padded rows
(half of them with 200 padding positions), one decoding step over the
context and a prefill of the whole context. Prints milliseconds per layer
call, the ratio, and whether the outputs are bit-identical.
"""

from __future__ import annotations

import argparse
import time

SHAPES = {"smollm2-135m": (9, 3, 64), "gemma3-270m": (4, 1, 256)}


def per_call_ms(fn, seconds: float = 0.5) -> float:
    fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context", type=int, nargs="+", default=[300, 1100])
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()

    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"{cpu}, {args.threads} thread(s), batch {args.batch}")
    print(f"{'shape':14s} {'step':8s} {'context':>7s} {'repeat ms':>10s} {'grouped ms':>11s} {'ratio':>6s}  identical")
    for name, (heads, kv_heads, dim) in SHAPES.items():
        for context in args.context:
            for step, q_len in (("decode", 1), ("prefill", context)):
                b = args.batch
                q = torch.randn(b, heads, q_len, dim)
                k, v = torch.randn(b, kv_heads, context, dim), torch.randn(b, kv_heads, context, dim)
                mask = torch.ones(b, 1, q_len, context, dtype=torch.bool).tril(context - q_len)
                mask[: b // 2, :, :, : min(200, context // 2)] = False

                def repeated(q=q, k=k, v=v, mask=mask):
                    # repeat each KV head over its query group, as attention without GQA support must
                    b, kv_heads, context, dim = k.shape
                    groups = q.shape[1] // kv_heads
                    kk = k[:, :, None].expand(b, kv_heads, groups, context, dim).reshape(b, -1, context, dim)
                    vv = v[:, :, None].expand(b, kv_heads, groups, context, dim).reshape(b, -1, context, dim)
                    return sdpa(q, kk, vv, attn_mask=mask)

                def grouped(q=q, k=k, v=v, mask=mask):
                    return sdpa(q, k, v, attn_mask=mask, enable_gqa=True)

                same = torch.equal(repeated(), grouped())
                slow, fast = per_call_ms(repeated), per_call_ms(grouped)
                print(f"{name:14s} {step:8s} {context:7d} {slow:10.2f} {fast:11.2f} {slow / fast:6.2f}  {same}")


if __name__ == "__main__":
    main()

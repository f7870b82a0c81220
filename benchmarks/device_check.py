"""The GPU figures the README lacks, in one run, as ratios measured side by side.

    python benchmarks/device_check.py [--tiny] [--budget-s 420]

On a CUDA machine (bfloat16, random-init models of published shapes, so no
weights need to travel):

* generation: transformers batch 1 (the paper code's way) against batched,
   left-padded transformers, and vLLM when it is installed; tokens/s;
* the Shapley scorer: one full forward per subset at batch 1 (the paper
   code's way) against the model layer's prefix-sharing
   :class:`~conflictlab.lm.subsets.SubsetScorer`, both its paths (the
   walk, one node's children per forward, and the packed path, many games per
   forward), on paper-shaped synthetic games (``benchmarks/shapley.py``'s
   :func:`paper_shaped_games`: hundreds of games of 2-5 pieces), for
   Llama-3.2-1B's and Llama-3.1-8B's shapes; seconds, tokens/s, model FLOPs
   utilisation against the GPU's dense bfloat16 peak, speedup, max |Δv|;
* the activation pass: one forward per layer per prompt (the paper code's
   way) against :func:`~conflictlab.lm.hidden.hidden_states` (one batched
   forward, every layer).

Without CUDA every step runs on a tiny random model of the same architecture
(``--tiny`` forces that), so the plumbing is checked on any machine; the
figures are then meaningless and the output says so. Steps that need what is
missing (vLLM) are skipped with the reason printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

from shapley import GAME_SIZES, LLAMA_SHAPES, linear_weights, paper_flops, paper_shaped_games, scorer_flops

# Dense bfloat16 peak by a word of the device name: the H200 SXM has the
# H100's rate, from the vendor's datasheet as the lent machines' notes quote
# it ("about 990 TFLOP/s"). A PCIe or NVL part is slower: MFU then reads high.
BF16_PEAK = {"H200": 989e12, "H100": 989e12}
TINY = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vocab_size=512,
    tie_word_embeddings=True,
)


class _Decoder:
    """What HFBackend needs of a tokenizer when only token ids matter."""

    def decode(self, tokens, skip_special_tokens=True):
        return ""


def random_model(shape: dict, device: str, dtype):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from conflictlab.lm.loading import LoadedModel

    torch.manual_seed(0)
    shape = {k: v for k, v in shape.items()}
    config = LlamaConfig(max_position_embeddings=8192, rope_theta=500000.0, bos_token_id=1, eos_token_id=2, **shape)
    with torch.device(device):  # initialised where it runs: an 8B model never passes through host memory
        model = LlamaForCausalLM._from_config(config, dtype=dtype).eval()
    return LoadedModel(
        model=model,
        tokenizer=_Decoder(),
        path="random-init",
        device=device,
        dtype=str(dtype).split(".")[-1],
        pad_id=0,
        eos_ids=frozenset({2}),
        has_chat_template=False,
    )


def synchronize():
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn):
    synchronize()
    start = time.perf_counter()
    out = fn()
    synchronize()
    return time.perf_counter() - start, out


def random_prompts(n: int, length: int, vocab: int, seed: int = 0) -> list[list[int]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.integers(3, vocab, size=int(length * (0.6 + 0.4 * rng.random()))).tolist() for _ in range(n)]


def check_generation(lm, args) -> None:
    from conflictlab.lm.generation import DecodingParams, HFBackend

    prompts = random_prompts(args.n_prompts, args.prompt_len, lm.model.config.vocab_size)
    params = DecodingParams(max_new_tokens=args.new_tokens)
    rates = {}
    for name, batch in (("transformers, batch 1", 1), (f"transformers, batched ({len(prompts)})", len(prompts))):
        backend = HFBackend(lm, batch_size=batch)
        backend.generate(prompts[:1], DecodingParams(max_new_tokens=2))  # warm-up
        seconds, out = timed(lambda backend=backend: backend.generate(prompts, params))
        tokens = sum(len(c.token_ids) for c in out)
        rates[name] = (seconds, tokens)
    base = rates["transformers, batch 1"]
    print(
        f"\ngeneration: {len(prompts)} prompts of ~{args.prompt_len} tokens, {args.new_tokens} new tokens, {lm.dtype}"
    )
    for name, (seconds, tokens) in rates.items():
        print(
            f"    {name:<32} {seconds:8.2f} s {tokens / seconds:10.1f} tokens/s "
            f"{tokens / seconds / (base[1] / base[0]):7.2f}x"
        )
    if importlib.util.find_spec("vllm") is None:
        print("    vLLM: skipped (vllm is not installed on this machine)")
    else:
        print(
            "    vLLM: skipped (random-init weights are not a servable folder; run benchmarks/generation.py on a "
            "prepared model)"
        )


def check_shapley(name: str, lm, args) -> None:
    import torch

    from conflictlab.lm.subsets import SubsetScorer, reference_values

    games = paper_shaped_games(args.games, lm.model.config.vocab_size, GAME_SIZES[args.game_sizes])
    body, head = linear_weights(lm.model)
    reference_values(lm.model, games[0][1], [0, 1])  # warm-up
    slow_s, slow = timed(lambda: [reference_values(lm.model, g) for _, g in games])
    slow_flops = paper_flops(games, body, head)
    naive = sum(g.naive_tokens(range(1 << g.n)) for _, g in games)
    gpu = torch.cuda.get_device_name(0) if lm.device.startswith("cuda") else ""
    peak = next((value for word, value in BF16_PEAK.items() if word in gpu), None)

    def mfu(flops, seconds):
        return f"MFU {flops / seconds / peak:6.1%}" if peak else "MFU n/a (no bf16 peak for this device)"

    print(
        f"\nShapley scorer, {name} shape ({lm.dtype}): {len(games)} paper-shaped games "
        f"({GAME_SIZES[args.game_sizes]}), "
        f"{sum(1 << g.n for _, g in games)} coalitions"
    )
    print(
        f"    paper code's way (batch 1, full forward per subset) {slow_s:8.2f} s {naive / slow_s:10.0f} tokens/s   "
        f"{mfu(slow_flops, slow_s)}"
    )
    for mode in ("walk", "packed"):
        warm = SubsetScorer(lm.model, token_budget=args.token_budget, mode=mode)
        warm.values(games[0][1], [0, 1])
        scorer = SubsetScorer(lm.model, token_budget=args.token_budget, mode=mode)
        fast_s, fast = timed(lambda scorer=scorer: scorer.score([([g], None) for _, g in games]))
        diff = max(abs(f[m] - s[m]) for (f,), s in zip(fast, slow) for m in s)
        stats = scorer.stats
        print(
            f"    conflictlab SubsetScorer, {mode:<6}                   {fast_s:8.2f} s "
            f"{stats.tokens_forwarded / fast_s:10.0f} tokens/s   "
            f"{mfu(scorer_flops(stats, body, head), fast_s)}   speedup {slow_s / fast_s:.2f}x   max |dv| {diff:.2e}; "
            f"tokens forwarded {stats.tokens_forwarded} (+{stats.tokens_padded} padding) vs {naive} naive, "
            f"{stats.forwards} forwards"
        )
    print(
        "    (tokens/s: real tokens through the model; MFU: linear-layer FLOPs of the useful work, attention left out, "
        "over seconds and the dense bf16 peak)"
    )


def check_activations(lm, args) -> None:
    import torch

    from conflictlab.lm.hidden import hidden_states

    prompts = random_prompts(args.n_prompts * 2, args.prompt_len, lm.model.config.vocab_size, seed=2)
    layers = lm.model.get_decoder().layers
    hidden_states(lm, prompts[:2], batch_size=2)  # warm-up

    def per_layer():
        # The paper code's way: a separate forward (batch 1) for every layer it reads.
        for prompt in prompts:
            for layer in range(len(layers)):
                with torch.inference_mode():
                    lm.model(
                        input_ids=torch.tensor([prompt], device=lm.device), output_hidden_states=True
                    ).hidden_states[layer + 1]

    slow_s, _ = timed(per_layer)
    fast_s, _ = timed(lambda: hidden_states(lm, prompts, batch_size=16))
    print(f"\nactivations: {len(prompts)} prompts x {len(layers)} layers")
    print(f"    one forward per layer per prompt (paper code's way) {slow_s:8.2f} s")
    print(f"    hidden_states (one batched forward, every layer)    {fast_s:8.2f} s   speedup {slow_s / fast_s:.2f}x")


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tiny", action="store_true", help="tiny random models (plumbing only), the default without CUDA"
    )
    args = parser.parse_args()
    on_gpu = torch.cuda.is_available() and not args.tiny
    device, dtype = ("cuda", torch.bfloat16) if on_gpu else ("cpu", torch.float32)
    if on_gpu:
        print(
            f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, bfloat16, random-init weights of "
            "published shapes"
        )
        sizes = dict(n_prompts=32, prompt_len=512, new_tokens=128, game_sizes="gpu", token_budget=65536)
        # (shape, games): the 8B with half the games, so that the check stays within about 6 minutes
        shapes = {
            "llama-3.2-1b": (LLAMA_SHAPES["llama-3.2-1b"], 200),
            "llama-3.1-8b": (LLAMA_SHAPES["llama-3.1-8b"], 100),
        }
    else:
        why = "--tiny" if args.tiny else "no CUDA device"
        print(
            f"device: cpu ({why}): CUDA parts skipped (bfloat16 models of published shapes, their MFU against the "
            "GPU's peak); "
            "a tiny random model checks the plumbing; CPU figures, which mean little for a GPU"
        )
        sizes = dict(n_prompts=4, prompt_len=32, new_tokens=4, game_sizes="cpu", token_budget=4096)
        shapes = {"tiny": (TINY, 12)}
    for key, value in sizes.items():
        setattr(args, key, value)
    first = True
    for name, (shape, games) in shapes.items():
        args.games = games
        lm = random_model(shape, device, dtype)
        if first:  # generation and activations on the smaller model
            check_generation(lm, args)
            check_activations(lm, args)
            first = False
        check_shapley(name, lm, args)
        del lm
        if on_gpu:
            torch.cuda.empty_cache()
    print("\ndone")


if __name__ == "__main__":
    main()

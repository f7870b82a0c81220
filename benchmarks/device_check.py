"""The GPU figures the README lacks, in one run, as ratios measured side by side.

    python benchmarks/device_check.py [--tiny] [--budget-s 420]

On a CUDA machine (bfloat16, random-init models of published shapes, so no
weights need to travel):

* generation: transformers batch 1 (the paper code's way) against batched,
   left-padded transformers, and vLLM when it is installed; tokens/s;
* the Shapley scorer: one full forward per subset at batch 1 (the paper
   code's way) against the model layer's prefix-sharing
   :class:`~conflictlab.lm.subsets.SubsetScorer`, on synthetic games, for
   Llama-3.2-1B's and Llama-3.1-8B's shapes; seconds, speedup, max |Δv|;
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

LLAMA_SHAPES = {
    # Published configurations (hidden, layers, heads, kv heads, MLP, vocabulary).
    "llama-3.2-1b": dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True),
    "llama-3.1-8b": dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=14336, vocab_size=128256, tie_word_embeddings=False),
}
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128,
            vocab_size=512, tie_word_embeddings=True)


class _Decoder:
    """What HFBackend needs of a tokenizer when only token ids matter."""

    def decode(self, tokens, skip_special_tokens=True):
        return ""


def random_model(shape: dict, device: str, dtype):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from conflictlab.lm.loading import LoadedModel

    torch.manual_seed(0)
    config = LlamaConfig(max_position_embeddings=8192, rope_theta=500000.0, bos_token_id=1, eos_token_id=2, **shape)
    with torch.device(device):  # initialised where it runs: an 8B model never passes through host memory
        model = LlamaForCausalLM._from_config(config, dtype=dtype).eval()
    return LoadedModel(model=model, tokenizer=_Decoder(), path="random-init", device=device, dtype=str(dtype).split(".")[-1],
                       pad_id=0, eos_ids=frozenset({2}), has_chat_template=False)


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
        seconds, out = timed(lambda: backend.generate(prompts, params))
        tokens = sum(len(c.token_ids) for c in out)
        rates[name] = (seconds, tokens)
    base = rates["transformers, batch 1"]
    print(f"\ngeneration: {len(prompts)} prompts of ~{args.prompt_len} tokens, {args.new_tokens} new tokens, {lm.dtype}")
    for name, (seconds, tokens) in rates.items():
        print(f"    {name:<32} {seconds:8.2f} s {tokens / seconds:10.1f} tokens/s {tokens / seconds / (base[1] / base[0]):7.2f}x")
    if importlib.util.find_spec("vllm") is None:
        print("    vLLM: skipped (vllm is not installed on this machine)")
    else:
        print("    vLLM: skipped (random-init weights are not a servable folder; run benchmarks/generation.py on a prepared model)")


def synthetic_games(n_games: int, n_pieces: int, vocab: int, *, piece_len: int, response_len: int):
    import numpy as np

    from conflictlab.lm.subsets import Game

    rng = np.random.default_rng(1)
    ids = lambda n: rng.integers(3, vocab, size=n).tolist()  # noqa: E731
    return [
        Game(prefix=[1] + ids(24), pieces=[[ids(piece_len)] * n_pieces for _ in range(n_pieces)], suffix=ids(4), response=ids(response_len))
        for _ in range(n_games)
    ]


def check_shapley(name: str, lm, args) -> None:
    from conflictlab.lm.subsets import SubsetScorer, reference_values

    games = synthetic_games(args.games, args.pieces, lm.model.config.vocab_size, piece_len=args.piece_len, response_len=args.response_len)
    reference_values(lm.model, games[0], [0, 1])  # warm-up
    slow_s, slow = timed(lambda: [reference_values(lm.model, g) for g in games])
    scorer = SubsetScorer(lm.model, token_budget=args.token_budget)
    scorer.values(games[0], [0, 1])  # warm-up
    scorer = SubsetScorer(lm.model, token_budget=args.token_budget)
    fast_s, fast = timed(lambda: [scorer.values(g) for g in games])
    diff = max(abs(f[m] - s[m]) for f, s in zip(fast, slow) for m in s)
    print(f"\nShapley scorer, {name} shape ({lm.dtype}): {len(games)} games x {2 ** args.pieces} subsets, "
          f"pieces of {args.piece_len} tokens, responses of {args.response_len}")
    print(f"    paper code's way (batch 1, full forward per subset) {slow_s:8.2f} s")
    print(f"    conflictlab SubsetScorer (shared prefix, batched)   {fast_s:8.2f} s   speedup {slow_s / fast_s:.2f}x   "
          f"max |dv| {diff:.2e}; tokens forwarded {scorer.stats.tokens_forwarded} vs {scorer.stats.naive_tokens} naive")


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
                    lm.model(input_ids=torch.tensor([prompt], device=lm.device), output_hidden_states=True).hidden_states[layer + 1]

    slow_s, _ = timed(per_layer)
    fast_s, _ = timed(lambda: hidden_states(lm, prompts, batch_size=16))
    print(f"\nactivations: {len(prompts)} prompts x {len(layers)} layers")
    print(f"    one forward per layer per prompt (paper code's way) {slow_s:8.2f} s")
    print(f"    hidden_states (one batched forward, every layer)    {fast_s:8.2f} s   speedup {slow_s / fast_s:.2f}x")


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny random models (plumbing only), the default without CUDA")
    args = parser.parse_args()
    on_gpu = torch.cuda.is_available() and not args.tiny
    device, dtype = ("cuda", torch.bfloat16) if on_gpu else ("cpu", torch.float32)
    if on_gpu:
        print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, bfloat16, random-init weights of published shapes")
        sizes = dict(n_prompts=32, prompt_len=512, new_tokens=128, games=4, pieces=6, piece_len=96, response_len=256, token_budget=65536)
        shapes = LLAMA_SHAPES
    else:
        why = "--tiny" if args.tiny else "no CUDA device"
        print(f"device: cpu ({why}): tiny random model, checks the plumbing only; the figures below mean nothing")
        sizes = dict(n_prompts=4, prompt_len=32, new_tokens=4, games=1, pieces=3, piece_len=8, response_len=8, token_budget=4096)
        shapes = {"tiny": TINY}
    for key, value in sizes.items():
        setattr(args, key, value)
    first = True
    for name, shape in shapes.items():
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

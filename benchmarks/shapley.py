"""Coalition scoring for Shapley values: the paper code's way (one full forward
per subset, batch 1, log-softmax over the whole sequence) against
conflictlab's batched prefix-sharing scorer, on the same responses and scorer.

On CPU each method runs twice: with PyTorch's default fp32 kernels (MKL; the
paper's code as it runs) and with the linear layers packed for oneDNN
(:mod:`conflictlab.lm.packed_linear`; conflictlab as the workflow runs it), so
the algorithm's gain (same kernels) and the kernels' gain (same method) are
both printed, beside the total.

    python benchmarks/shapley.py [--scorer resources/models/smollm2-135m-instruct]
        [--responses results/responses/smollm2-135m-instruct] [--max-games 15]

``--random-init`` builds the scorer from its ``config.json`` with seeded
random weights instead of loading them: the speed is the same, and a folder
holding only the config and tokenizer files is small enough to send to a
lent GPU machine (the trained weights are not).

Each run is its own child process so that its peak memory (max RSS on
CPU, max allocated on GPU) is its own. Prints the speedups, max |Δv| against
the paper code's way, tokens forwarded against the naive count, the linear
layers' floating-point operations of each method (the bound on the
algorithm's speedup when both run at the same matrix-multiply rate), and
peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

SUMMARIZATION = ("ambiguity", "granularity", "perspective")


def load_games(scorer_dir: str, responses_dir: str, data_dir: str, max_games: int):
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from conflictlab.contextconflict.scoring import build_game

    tokenizer = AutoTokenizer.from_pretrained(scorer_dir)
    games = []
    for conflict_type in SUMMARIZATION:
        samples = {r["sample_id"]: r for r in pq.read_table(Path(data_dir) / f"{conflict_type}.parquet").to_pylist()}
        for reply in pq.read_table(Path(responses_dir) / f"{conflict_type}.parquet").to_pylist():
            if reply["status"] == "ok" and reply["response"].strip():
                s = samples[reply["sample_id"]]
                games.append((s["sample_id"], build_game(tokenizer, s["question"], s["evidence"], reply["response"])))
    return games[:max_games]


def run_method(args) -> None:
    """Child process: score every game with one method and kernel choice, print JSON."""
    import torch
    from transformers import AutoModelForCausalLM

    from conflictlab.lm.packed_linear import pack_linear_layers
    from conflictlab.lm.subsets import ScoreStats, SubsetScorer, reference_values

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = getattr(torch, args.dtype)
    if args.random_init:
        from transformers import AutoConfig

        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.scorer), dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.scorer, dtype=dtype)
    model = model.to(device).eval()
    # Weights counted before packing (packed layers hold no parameters).
    body = sum(p.numel() for name, p in model.get_decoder().named_parameters() if "embed" not in name)
    head = model.get_output_embeddings().weight.numel()
    if args.kernels == "packed" and not pack_linear_layers(model):
        raise SystemExit("--kernels packed: nothing to pack (needs float32 on the CPU with oneDNN)")
    games = load_games(args.scorer, args.responses, args.data, args.max_games)
    scorer = SubsetScorer(model, token_budget=args.token_budget)
    # One untimed pass over two subsets of the first game, so that neither
    # method pays for kernel start-up (CUDA context, allocator) in its time.
    _, first = games[0]
    warm = [0, (1 << first.n) - 1]
    if args.method == "paper":
        reference_values(model, first, warm)
    else:
        scorer.values(first, warm)
    scorer.stats = ScoreStats()
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    values = {}
    for sample_id, game in games:
        got = reference_values(model, game) if args.method == "paper" else scorer.values(game)
        values[sample_id] = {str(m): v for m, v in got.items()}
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = (
        torch.cuda.max_memory_allocated() / 2**20
        if device == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    # Multiply-adds of the linear layers (attention scores left out): the
    # decoder's weights once per forwarded token, the LM head's once per
    # position where logits are formed (every position for the paper's way).
    if args.method == "paper":
        tokens = sum(game.naive_tokens(range(1 << game.n)) for _, game in games)
        flops = 2 * (body + head) * tokens
    else:
        stats = scorer.stats
        flops = 2 * body * (stats.tokens_forwarded + stats.tokens_padded) + 2 * head * stats.head_positions
    print(json.dumps({"seconds": seconds, "values": values, "peak_mib": peak, "stats": vars(scorer.stats),
                      "device": device, "linear_flops": flops}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--responses", default="results/responses/smollm2-135m-instruct")
    parser.add_argument("--data", default="results/data")
    parser.add_argument("--max-games", type=int, default=15)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--token-budget", type=int, default=4096)
    parser.add_argument("--random-init", action="store_true", help="seeded random weights from the scorer's config.json")
    parser.add_argument("--method", choices=["paper", "conflictlab"], help=argparse.SUPPRESS)
    parser.add_argument("--kernels", choices=["default", "packed"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.method:
        run_method(args)
        return

    import torch

    kernels = ["default"] if torch.cuda.is_available() or args.dtype != "float32" else ["default", "packed"]
    runs = {}
    for method in ("paper", "conflictlab"):
        for kind in kernels:
            out = subprocess.run(
                [sys.executable, __file__, *sys.argv[1:], "--method", method, "--kernels", kind],
                capture_output=True, text=True, check=True,
            )
            runs[method, kind] = json.loads(out.stdout.strip().splitlines()[-1])
    reference = runs["paper", "default"]
    best = runs["conflictlab", kernels[-1]]
    print(f"{len(reference['values'])} games, {sum(map(len, reference['values'].values()))} coalitions, "
          f"scorer {args.scorer} ({args.dtype}, {best['device']})")
    label = {"paper": "paper code (batch 1, full)", "conflictlab": "conflictlab (shared prefix)",
             "default": "default (MKL on CPU)", "packed": "oneDNN packed"}
    print(f"{'method':<29}{'kernels':<21}{'seconds':>9}{'peak MiB':>10}{'max |dv|':>10}")
    for (method, kind), run in runs.items():
        dv = max(abs(reference["values"][s][m] - run["values"][s][m]) for s in reference["values"] for m in reference["values"][s])
        print(f"{label[method]:<29}{label[kind]:<21}{run['seconds']:>9.2f}{run['peak_mib']:>10.0f}{dv:>10.1e}")
    print(f"speedup, conflictlab ({label[kernels[-1]]}) against the paper code's way as it runs "
          f"({label['default']}): {reference['seconds'] / best['seconds']:.2f}x")
    for kind in kernels:
        print(f"  same kernels, {label[kind]}: {runs['paper', kind]['seconds'] / runs['conflictlab', kind]['seconds']:.2f}x (the algorithm)")
    if len(kernels) == 2:
        for method in ("paper", "conflictlab"):
            print(f"  same method, {label[method]}: {runs[method, 'default']['seconds'] / runs[method, 'packed']['seconds']:.2f}x (the kernels)")
    stats = best["stats"]
    print(
        f"tokens forwarded: {stats['tokens_forwarded']} (+{stats['tokens_padded']} padding) "
        f"vs naive {stats['naive_tokens']}: {stats['naive_tokens'] / stats['tokens_forwarded']:.2f}x fewer; "
        f"{stats['forwards']} forwards"
    )
    print(
        f"linear-layer FLOPs: paper {reference['linear_flops'] / 1e12:.2f} T, conflictlab {best['linear_flops'] / 1e12:.2f} T "
        f"({reference['linear_flops'] / best['linear_flops']:.2f}x fewer); GFLOP/s: "
        + ", ".join(f"{method} {kind} {run['linear_flops'] / run['seconds'] / 1e9:.0f}" for (method, kind), run in runs.items())
    )


if __name__ == "__main__":
    main()

"""Coalition scoring for Shapley values: the paper code's way (one full forward
per subset, batch 1, log-softmax over the whole sequence) against
conflictlab's prefix-sharing scorer, on the same responses and scorer. The
scorer runs both its paths (:class:`~conflictlab.lm.subsets.SubsetScorer`
``mode``): ``walk``, one trie node's children per forward and one game at a
time, and ``packed``, many games' nodes per forward in packed rows
(:mod:`conflictlab.lm.packed_subsets`); ``auto`` picks one per device.

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

``--synthetic N`` needs no model folder and no responses: N games of the
paper's shape (:func:`paper_shaped_games`: random token ids, 2-4 pieces on the CPU, 2-5 on a GPU)
scored by a random-weight Llama of ``--shape`` (default ``cpu-small``, Llama-3.2-1B's
proportions scaled down to run here)::

    python benchmarks/shapley.py --synthetic 200 --kernels workflow --threads 1 [--repeat 2]

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

LLAMA_SHAPES = {
    # Published configurations (hidden, layers, heads, kv heads, MLP, vocabulary).
    "llama-3.2-1b": dict(
        hidden_size=2048,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=8192,
        vocab_size=128256,
        tie_word_embeddings=True,
    ),
    "llama-3.1-8b": dict(
        hidden_size=4096,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=14336,
        vocab_size=128256,
        tie_word_embeddings=False,
    ),
    # Llama-3.2-1B's proportions (4x MLP, 4 query heads per key/value head, a
    # tied head of about a quarter of the weights) at a size the 2-core CPU runs.
    "cpu-small": dict(
        hidden_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=1,
        intermediate_size=512,
        vocab_size=4096,
        tie_word_embeddings=True,
    ),
    # SmolLM2-135M's published shape (the demo's scorer).
    "smollm2-135m": dict(
        hidden_size=576,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        intermediate_size=1536,
        vocab_size=49152,
        tie_word_embeddings=True,
    ),
}

# Token lengths of the paper-shaped games, (low, high) uniform: on the CPU
# scaled down by about 4 from the GPU's, which follow the release (questions
# of a sentence or two, evidence pieces of a paragraph, summaries of a few
# hundred tokens within the paper's 512-token limit).
GAME_SIZES = {
    "cpu": dict(n=(2, 4), prefix=(12, 32), piece=(16, 48), response=(24, 96)),
    "gpu": dict(n=(2, 5), prefix=(24, 64), piece=(48, 192), response=(96, 384)),
}


def paper_shaped_games(n_games: int, vocab: int, sizes: dict, seed: int = 1):
    """``n_games`` (id, :class:`~conflictlab.lm.subsets.Game`) of random ids:
    n pieces, each rendered per rank as the release's renumbering does, a
    4-token suffix; lengths drawn from ``sizes`` (see :data:`GAME_SIZES`)."""
    import numpy as np

    from conflictlab.lm.subsets import Game

    rng = np.random.default_rng(seed)
    draw = lambda key: int(rng.integers(sizes[key][0], sizes[key][1] + 1))  # noqa: E731
    ids = lambda k: rng.integers(3, vocab, size=k).tolist()  # noqa: E731
    games = []
    for g in range(n_games):
        n = draw("n")
        lengths = [draw("piece") for _ in range(n)]
        pieces = [
            [ids(2) + body for _ in range(n)] for body in (ids(k) for k in lengths)
        ]  # "[Evidence k]" differs per rank
        games.append(
            (
                f"synthetic/{g}",
                Game(prefix=[1] + ids(draw("prefix")), pieces=pieces, suffix=ids(4), response=ids(draw("response"))),
            )
        )
    return games


def random_llama(shape: str, device: str, dtype):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        max_position_embeddings=8192, rope_theta=500000.0, bos_token_id=1, eos_token_id=2, **LLAMA_SHAPES[shape]
    )
    with torch.device(device):  # initialised where it runs: an 8B model never passes through host memory
        return LlamaForCausalLM._from_config(config, dtype=dtype).eval()


def linear_weights(model) -> tuple[int, int]:
    """(decoder weights without the embedding, LM head weights): the
    multiply-adds per forwarded token and per position where logits are formed."""
    body = sum(p.numel() for name, p in model.get_decoder().named_parameters() if "embed" not in name)
    return body, model.get_output_embeddings().weight.numel()


def scorer_flops(stats, body: int, head: int) -> float:
    """Linear-layer FLOPs of the scorer's work (padding excluded: useful work only)."""
    return 2 * body * stats.tokens_forwarded + 2 * head * stats.head_positions


def paper_flops(games, body: int, head: int) -> float:
    """The paper code's way: every token of every subset through the decoder and the head."""
    return 2 * (body + head) * sum(game.naive_tokens(range(1 << game.n)) for _, game in games)


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
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.synthetic:
        model = random_llama(args.shape, device, dtype)
    elif args.random_init:
        from transformers import AutoConfig

        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.scorer), dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.scorer, dtype=dtype)
    model = model.to(device).eval()
    body, head = linear_weights(model)  # counted before packing (packed layers hold no parameters)
    if args.kernels == "packed" and not pack_linear_layers(model):
        raise SystemExit("--kernels packed: nothing to pack (needs float32 on the CPU with oneDNN)")
    if args.synthetic:
        games = paper_shaped_games(
            args.synthetic, model.config.vocab_size, GAME_SIZES["gpu" if device == "cuda" else "cpu"]
        )
    else:
        games = load_games(args.scorer, args.responses, args.data, args.max_games)
    mode = "walk" if args.method == "paper" else args.method
    scorer = SubsetScorer(model, token_budget=args.token_budget, mode=mode)
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
    if args.method == "paper":
        got = [reference_values(model, game) for _, game in games]
    else:
        got = [values for (values,) in scorer.score([([game], None) for _, game in games])]
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    values = {sample_id: {str(m): v for m, v in game_values.items()} for (sample_id, _), game_values in zip(games, got)}
    peak = (
        torch.cuda.max_memory_allocated() / 2**20
        if device == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    flops = paper_flops(games, body, head) if args.method == "paper" else scorer_flops(scorer.stats, body, head)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "values": values,
                "peak_mib": peak,
                "stats": vars(scorer.stats),
                "device": device,
                "linear_flops": flops,
            }
        )
    )


def add_game_arguments(parser) -> None:
    """The demo's games (:func:`load_games`): scorer, responses, samples, how many."""
    parser.add_argument("--scorer", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--responses", default="results/responses/smollm2-135m-instruct")
    parser.add_argument("--data", default="results/data")
    parser.add_argument("--max-games", type=int, default=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_game_arguments(parser)
    parser.add_argument(
        "--synthetic",
        type=int,
        default=0,
        metavar="N",
        help="N paper-shaped synthetic games, random-weight --shape model",
    )
    parser.add_argument("--shape", choices=sorted(LLAMA_SHAPES), default="cpu-small")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=0, help="torch threads in each run (0: torch's default)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of every run, interleaved; each method's fastest round counts (a shared machine's load varies)",
    )
    parser.add_argument("--token-budget", type=int, default=4096)
    parser.add_argument(
        "--random-init", action="store_true", help="seeded random weights from the scorer's config.json"
    )
    parser.add_argument(
        "--kernels",
        choices=["default", "packed", "both", "workflow"],
        default="both",
        help="both: every method with default and oneDNN-packed kernels; workflow: the paper's way with "
        "default kernels, conflictlab with what the workflow uses (packed on a float32 CPU)",
    )
    parser.add_argument("--method", choices=["paper", "walk", "packed"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.method:
        run_method(args)
        return

    import torch

    packable = not torch.cuda.is_available() and args.dtype == "float32"
    kernels = ["default", "packed"] if packable else ["default"]
    if args.kernels == "workflow":
        plan = [("paper", "default")] + [(m, kernels[-1]) for m in ("walk", "packed")]
    else:
        plan = [(m, k) for m in ("paper", "walk", "packed") for k in kernels]
    argv = [a for a in sys.argv[1:]]
    if "--kernels" in argv:  # the child takes one kernel choice
        k = argv.index("--kernels")
        del argv[k : k + 2]
    runs = {}
    for _ in range(args.repeat):
        for method, kind in plan:
            out = subprocess.run(
                [sys.executable, __file__, *argv, "--method", method, "--kernels", kind],
                capture_output=True,
                text=True,
                check=True,
            )
            run = json.loads(out.stdout.strip().splitlines()[-1])
            if (method, kind) not in runs or run["seconds"] < runs[method, kind]["seconds"]:
                runs[method, kind] = run
    reference = runs["paper", "default"]
    best_kind = kernels[-1]
    print(
        f"{len(reference['values'])} games, {sum(map(len, reference['values'].values()))} coalitions, "
        f"scorer {'random ' + args.shape if args.synthetic else args.scorer} ({args.dtype}, {reference['device']})"
    )
    label = {
        "paper": "paper code (batch 1, full)",
        "walk": "conflictlab walk",
        "packed": "conflictlab packed",
        "default": "default (MKL on CPU)",
        "packed_kernels": "oneDNN packed",
    }
    kernel_label = lambda kind: label["packed_kernels" if kind == "packed" else kind]  # noqa: E731
    print(f"{'method':<29}{'kernels':<21}{'seconds':>9}{'peak MiB':>10}{'max |dv|':>10}{'tokens/s':>11}")
    for (method, kind), run in runs.items():
        dv = max(
            abs(reference["values"][s][m] - run["values"][s][m])
            for s in reference["values"]
            for m in reference["values"][s]
        )
        tokens = (
            run["stats"]["tokens_forwarded"]
            if method != "paper"
            else run["stats"]["naive_tokens"] or reference_tokens(runs)
        )
        print(
            f"{label[method]:<29}{kernel_label(kind):<21}{run['seconds']:>9.2f}{run['peak_mib']:>10.0f}{dv:>10.1e}"
            f"{tokens / run['seconds']:>11.0f}"
        )
    for method in ("walk", "packed"):
        run = runs[method, best_kind]
        print(
            f"speedup, conflictlab {method} ({kernel_label(best_kind)}) against the paper code's way as it runs "
            f"({kernel_label('default')}): {reference['seconds'] / run['seconds']:.2f}x"
        )
    if args.kernels == "both":
        for kind in kernels:
            for method in ("walk", "packed"):
                print(
                    f"  same kernels, {kernel_label(kind)}, {method}: "
                    f"{runs['paper', kind]['seconds'] / runs[method, kind]['seconds']:.2f}x (the algorithm)"
                )
    for method in ("walk", "packed"):
        stats = runs[method, best_kind]["stats"]
        print(
            f"{method}: tokens forwarded {stats['tokens_forwarded']} (+{stats['tokens_padded']} padding) "
            f"vs naive {stats['naive_tokens']}: {stats['naive_tokens'] / stats['tokens_forwarded']:.2f}x fewer; "
            f"{stats['forwards']} forwards"
        )
    print(
        "linear-layer FLOPs: paper {:.2f} T, conflictlab {:.2f} T; GFLOP/s: ".format(
            reference["linear_flops"] / 1e12, runs["packed", best_kind]["linear_flops"] / 1e12
        )
        + ", ".join(
            f"{method} {kind} {run['linear_flops'] / run['seconds'] / 1e9:.0f}" for (method, kind), run in runs.items()
        )
    )


def reference_tokens(runs) -> int:
    """Tokens of one full forward per subset (the paper's way), from a conflictlab run's count."""
    return next(run["stats"]["naive_tokens"] for (method, _), run in runs.items() if method != "paper")


if __name__ == "__main__":
    main()

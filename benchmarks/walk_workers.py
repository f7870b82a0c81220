"""The Shapley walk on a CPU scoring one job at a time (``workers=1``, every
torch thread on each forward) against several jobs at once
(``SubsetScorer.workers``, one intra-op thread each), in one process,
interleaved rounds (a shared machine's speed drifts between runs).

    python benchmarks/walk_workers.py [--scorer resources/models/smollm2-135m-instruct]
        [--responses results/responses/smollm2-135m-instruct] [--data results/data]
        [--max-games 15] [--workers 2] [--rounds 4]

Needs `make demo` first (the demo's responses). Prints each round's seconds,
the ratio serial / parallel and its median, and fails unless every round's
values equal the serial walk's to the bit.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from shapley import add_game_arguments, load_games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_game_arguments(parser)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    from conflictlab.lm.packed_linear import pack_linear_layers
    from conflictlab.lm.subsets import SubsetScorer

    model = AutoModelForCausalLM.from_pretrained(args.scorer, dtype=torch.float32).eval()
    pack_linear_layers(model)
    games = load_games(args.scorer, args.responses, args.data, args.max_games)
    jobs = [([game], None) for _, game in games]
    SubsetScorer(model, mode="walk").values(games[0][1], [0, 1])  # kernels warmed outside the timing
    print(
        f"{len(games)} games from {Path(args.responses)}, scorer {args.scorer} (float32, packed), "
        f"{torch.get_num_threads()} torch threads; serial against {args.workers} workers"
    )
    reference, ratios = None, []
    for r in range(args.rounds):
        seconds = {}
        for workers in (1, args.workers) if r % 2 == 0 else (args.workers, 1):
            scorer = SubsetScorer(model, mode="walk", workers=workers)
            start = time.perf_counter()
            values = scorer.score(jobs)
            seconds[workers] = time.perf_counter() - start
            reference = reference or values
            if values != reference:
                raise SystemExit(f"round {r + 1}, {workers} workers: values differ from the serial walk's")
        ratios.append(seconds[1] / seconds[args.workers])
        print(
            f"round {r + 1}: serial {seconds[1]:.2f} s, {args.workers} workers {seconds[args.workers]:.2f} s, "
            f"{ratios[-1]:.2f}x"
        )
    print(
        f"median {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}x); values equal in every "
        "round"
    )


if __name__ == "__main__":
    main()

"""float32 against bfloat16 on this machine, side by side: Shapley coalition
scoring (time and how far v(S) moves) and batched greedy generation (time).

    python benchmarks/precision.py [--model resources/models/smollm2-135m-instruct]
        [--samples results/data/perspective.parquet]
        [--responses results/responses/smollm2-135m-instruct/perspective.parquet]

Prints seconds per dtype, the bf16/fp32 speedups, and mean and max |Δv| next to
the standard deviation of v (the scale a Shapley value is computed on).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def score(model_dir: str, dtype: str, samples, responses) -> tuple[float, np.ndarray]:
    from conflictlab.contextconflict.scoring import score_games
    from conflictlab.lm.loading import load
    from conflictlab.lm.subsets import SubsetScorer

    lm = load(model_dir, dtype=dtype)
    scorer = SubsetScorer(lm.model, token_budget=4096)
    start = time.perf_counter()
    values, _ = score_games(
        scorer,
        lm.tokenizer,
        samples,
        responses,
        scorer_name="bench",
        renumber=True,
        exact_max_n=10,
        n_permutations=64,
        seed=0,
    )
    return time.perf_counter() - start, values.column("value").to_numpy()


def generate(model_dir: str, dtype: str, samples) -> float:
    from conflictlab.contextconflict.prompts import build_messages, encode_messages
    from conflictlab.lm.generation import DecodingParams, HFBackend
    from conflictlab.lm.loading import load

    backend = HFBackend(load(model_dir, dtype=dtype), batch_size=8)
    prompts = [
        encode_messages(backend.lm.tokenizer, build_messages("summarization_simple", s["question"], s["evidence"]))[1]
        for s in samples.to_pylist()
    ]
    start = time.perf_counter()
    backend.generate(prompts, DecodingParams(max_new_tokens=32))
    return time.perf_counter() - start


def main() -> None:
    import pyarrow.parquet as pq

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--samples", default="results/data/perspective.parquet")
    parser.add_argument("--responses", default="results/responses/smollm2-135m-instruct/perspective.parquet")
    args = parser.parse_args()
    samples, responses = pq.read_table(args.samples), pq.read_table(args.responses)

    scoring = {dtype: score(args.model, dtype, samples, responses) for dtype in ("float32", "bfloat16")}
    generation = {dtype: generate(args.model, dtype, samples) for dtype in ("float32", "bfloat16")}
    fp32, bf16 = scoring["float32"][1], scoring["bfloat16"][1]
    diff = np.abs(fp32 - bf16)
    print(f"{samples.num_rows} samples, {fp32.size} coalition values, {args.model}")
    print(
        f"scoring     float32 {scoring['float32'][0]:6.1f} s   bfloat16 {scoring['bfloat16'][0]:6.1f} s   "
        f"speedup {scoring['float32'][0] / scoring['bfloat16'][0]:.2f}x"
    )
    print(
        f"generation  float32 {generation['float32']:6.1f} s   bfloat16 {generation['bfloat16']:6.1f} s   "
        f"speedup {generation['float32'] / generation['bfloat16']:.2f}x  (batch 8, 32 new tokens)"
    )
    print(f"|dv| mean {diff.mean():.4f}  max {diff.max():.4f}  (std of v: {fp32.std():.3f})")


if __name__ == "__main__":
    main()

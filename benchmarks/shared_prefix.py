"""CONFLICTS Task 2 responses with and without shared-prefix prefill
(:mod:`conflictlab.lm.shared_prefix`), side by side: CPU seconds of each
pass and whether the replies are token for token the same.

    python benchmarks/shared_prefix.py RUN [--rounds 2] [--threads 1]

RUN: a finished default run's folder (its ``results/conflicts/data.parquet``,
the model's ``types.parquet`` for the Pipeline strategy's predicted types and
the prepared ``resources/models/smollm2-135m-instruct``). The responses are
generated as rule ``conflicts_respond`` generates them
(:func:`conflictlab.conflicts.responses.respond`, every strategy, 32 new
tokens, batches of 8), once padded (sharing switched off) and once shared per
round, alternating, so that a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

MODEL = "smollm2-135m-instruct"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    args = parser.parse_args()

    import pyarrow.parquet as pq
    import torch

    from conflictlab.conflicts.responses import respond
    from conflictlab.lm.generation import HFBackend
    from conflictlab.lm.loading import load
    from conflictlab.lm.shared_prefix import MIN_SHARED_TOKENS

    torch.set_num_threads(args.threads)
    types = pq.read_table(args.run / "results/conflicts" / MODEL / "types.parquet").to_pylist()
    predicted = {row["query_id"]: row["predicted"] for row in types}
    queries = [
        q for q in pq.read_table(args.run / "results/conflicts/data.parquet").to_pylist() if q["query_id"] in predicted
    ]
    lm = load(args.run / "resources/models" / MODEL)
    replies = {}
    for round_ in range(1, args.rounds + 1):
        for mode, min_shared in (("padded", 10**9), ("shared", MIN_SHARED_TOKENS)):
            backend = HFBackend(lm, batch_size=8, min_shared=min_shared)
            start = time.process_time()
            table = respond(
                backend, lm.tokenizer, queries, predicted, model=MODEL, limit=8192, max_new_tokens=args.max_new_tokens
            )
            seconds = time.process_time() - start
            tokens = sum(n for n in table.column("n_prompt_tokens").to_pylist() if n)
            print(f"round {round_} {mode}: {table.num_rows} responses, {tokens} prompt tokens, {seconds:.1f} CPU s")
            replies.setdefault(mode, table.column("reply").to_pylist())
    differ = [i for i, (a, b) in enumerate(zip(replies["padded"], replies["shared"])) if a != b]
    print(f"{len(differ)} of {len(replies['padded'])} replies differ between padded and shared: {differ}")


if __name__ == "__main__":
    main()

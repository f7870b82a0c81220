"""What one forward pass costs beyond its tokens, in tokens: the constant
behind :data:`conflictlab.lm.shared_prefix.FORWARD_COST_TOKENS`, which
decides when a prefix tree (one forward per node) beats one padded batch.

    python benchmarks/forward_cost.py [--model resources/models/smollm2-135m-instruct] [--threads 1]

Forwards one row of M random tokens through the decoder for each M (CPU
seconds per forward, ``time.process_time``, each length repeated for about
two seconds), fits seconds = fixed + M x per-token by least squares and
prints fixed / per-token: the tokens a forward's fixed part is worth. On a
CPU the fixed part is mostly reading every weight once.
"""

from __future__ import annotations

import argparse
import time

LENGTHS = (4, 8, 16, 32, 64, 128, 256)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()

    import numpy as np
    import torch

    from conflictlab.lm.loading import cpu_kind, load

    torch.set_num_threads(args.threads)
    lm = load(args.model, dtype="float32")
    decoder = lm.model.get_decoder()
    seconds = []
    with torch.inference_mode():
        for length in LENGTHS:
            ids = torch.randint(100, 1000, (1, length))
            decoder(input_ids=ids)  # warm-up
            start, runs = time.process_time(), 0
            while time.process_time() - start < args.seconds:
                decoder(input_ids=ids)
                runs += 1
            seconds.append((time.process_time() - start) / runs)
            print(f"{length:4d} tokens: {seconds[-1] * 1000:7.1f} ms a forward")
    per_token, fixed = np.polyfit(LENGTHS, seconds, 1)
    kind = cpu_kind()
    print(f"{args.model}, {args.threads} thread(s), {kind.vendor} family {kind.family} model {kind.model}")
    print(
        f"fixed {fixed * 1000:.1f} ms + {per_token * 1000:.2f} ms a token: "
        f"a forward is worth {fixed / per_token:.1f} tokens"
    )


if __name__ == "__main__":
    main()

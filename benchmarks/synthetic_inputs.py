"""Synthetic inputs of every benchmark in the real releases' layouts, at the
papers' sizes times a fraction (README, Paper scale). Fake content only.

    python benchmarks/synthetic_inputs.py OUT_DIR --fraction 0.25 [--conflictbank-fraction F] [--seed 0]

writes OUT_DIR/data/ (ContextConflict: data.root), OUT_DIR/conflicts.jsonl
(conflicts.path) and OUT_DIR/QA_dataset.jsonl (conflictbank.path).
"""

import argparse
import time

from conflictlab.conflictbank.synthetic import write_release as write_conflictbank
from conflictlab.conflicts.synthetic import write_release as write_conflicts
from conflictlab.contextconflict.synthetic import write_release as write_contextconflict


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument(
        "--fraction",
        type=float,
        default=1.0,
        help="of the papers' sizes (ContextConflict 5,770 files, CONFLICTS 458 queries)",
    )
    parser.add_argument(
        "--conflictbank-fraction",
        type=float,
        default=None,
        help="of ConflictBank's 553,117 QA pairs (default: --fraction)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    written = {
        "contextconflict_files": sum(write_contextconflict(f"{args.out_dir}/data", args.fraction, args.seed).values()),
        "conflicts_queries": sum(write_conflicts(f"{args.out_dir}/conflicts.jsonl", args.fraction, args.seed).values()),
        "conflictbank_records": write_conflictbank(
            f"{args.out_dir}/QA_dataset.jsonl",
            args.fraction if args.conflictbank_fraction is None else args.conflictbank_fraction,
            args.seed,
        ),
    }
    print(f"{written} in {time.perf_counter() - start:.1f} s")
    return written


if __name__ == "__main__":
    main()

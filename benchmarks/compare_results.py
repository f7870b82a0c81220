"""Compare two results/ folders, file by file: every CSV table and every Parquet
file present in both (resumable-generation shards excluded).

    python benchmarks/compare_results.py BEFORE/results AFTER/results [--tol 1e-6]

A file matches when its bytes are equal, or when it has the same schema and
rows with every float within ``--tol`` (absolute; for a change that only
reorders a reduction). Prints one line per file that is not byte-identical, the
counts, and the files found on one side only; exits 1 if a common file differs.
Used to check that a refactor changes no number.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import pyarrow.parquet as pq


def floats_close(a, b, tol):
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if math.isnan(fa) and math.isnan(fb):
        return True
    return abs(fa - fb) <= tol


def compare_values(a, b, tol):
    if isinstance(a, float) and isinstance(b, float):
        return floats_close(a, b, tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(compare_values(x, y, tol) for x, y in zip(a, b))
    return a == b


def compare_parquet(pa_, pb, tol):
    ta, tb = pq.read_table(pa_), pq.read_table(pb)
    if ta.schema != tb.schema:
        return "schema differs"
    if ta.num_rows != tb.num_rows:
        return f"{ta.num_rows} vs {tb.num_rows} rows"
    worst = 0.0
    for name in ta.column_names:
        ca, cb = ta.column(name).to_pylist(), tb.column(name).to_pylist()
        for x, y in zip(ca, cb):
            if not compare_values(x, y, tol):
                return f"column {name}: {str(x)[:80]} vs {str(y)[:80]}"
            if isinstance(x, float) and isinstance(y, float) and not (math.isnan(x) or math.isnan(y)):
                worst = max(worst, abs(x - y))
    return worst


def compare_csv(pa_, pb, tol):
    ra = list(csv.reader(open(pa_)))
    rb = list(csv.reader(open(pb)))
    if len(ra) != len(rb):
        return f"{len(ra)} vs {len(rb)} rows"
    worst = 0.0
    for x, y in zip(ra, rb):
        if len(x) != len(y):
            return "row widths differ"
        for u, v in zip(x, y):
            if u != v:
                if not floats_close(u, v, tol):
                    return f"{u} vs {v}"
                worst = max(worst, abs(float(u) - float(v)))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tol", type=float, default=1e-6)
    args = ap.parse_args()
    a, b = Path(args.before), Path(args.after)
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.suffix in (".parquet", ".csv") and ".shards" not in p.parts}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.suffix in (".parquet", ".csv") and ".shards" not in p.parts}
    common = sorted(files_a & files_b)
    same_bytes = close = differ = 0
    for rel in common:
        fa, fb = a / rel, b / rel
        if fa.read_bytes() == fb.read_bytes():
            same_bytes += 1
            continue
        result = compare_parquet(fa, fb, args.tol) if rel.suffix == ".parquet" else compare_csv(fa, fb, args.tol)
        if isinstance(result, str):
            differ += 1
            print(f"DIFFERS {rel}: {result}")
        else:
            close += 1
            print(f"close   {rel}: max |diff| {result:.2e}")
    print(
        f"\n{len(common)} files in both: {same_bytes} identical bytes, {close} equal within {args.tol}, {differ} differ"
    )
    print(f"only before: {len(files_a - files_b)}; only after: {len(files_b - files_a)}")
    for rel in sorted(files_a - files_b)[:40]:
        print(f"  only before: {rel}")
    for rel in sorted(files_b - files_a)[:40]:
        print(f"  only after: {rel}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

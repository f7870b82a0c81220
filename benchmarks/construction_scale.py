"""ConflictBank construction's non-model steps at scale: a planted Wikidata dump
(gzip, the dump's line layout) through the scatter jobs (one process per
chunk, in parallel, as Snakemake runs them) and the gather (facts, substitutes,
claims). Prints the wall time of each phase and the peak resident memory of
every process; the planted dump itself is written first and not timed.

    python benchmarks/construction_scale.py --entities 1000000 --chunks 2 --workdir /tmp/cb-scale
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import polars as pl


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _scan(args: tuple[str, list[str], int, int, str]) -> tuple[int, float, int]:
    """One scatter job: (chunk, seconds, peak RSS in MiB); its tables written under ``out``."""
    from conflictlab.construction.wikidata import scan_chunk

    path, relations, chunk, n_chunks, out = args
    start = time.perf_counter()
    scan = scan_chunk(path, relations, chunk=chunk, n_chunks=n_chunks)
    entities, facts, _, _ = scan.tables()
    import pyarrow.parquet as pq

    pq.write_table(entities, f"{out}/{chunk}.entities.parquet")
    pq.write_table(facts, f"{out}/{chunk}.facts.parquet")
    return chunk, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main() -> None:
    from conflictlab.construction import planted
    from conflictlab.construction.conflictbank import write_claims
    from conflictlab.construction.wikidata import write_dump

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--chunks", type=int, default=2)
    parser.add_argument("--part-facts", type=int, default=100_000, help="facts the gather holds at a time")
    parser.add_argument("--workdir", default="/tmp/cb-scale")
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    people = round(args.entities / (1 + len(planted.RELATIONS) / 50))
    dump = work / f"planted-{args.entities}.json.gz"
    if not dump.exists():
        start = time.perf_counter()
        with gzip.open(dump, "wb", compresslevel=1) as stream:
            written = write_dump(planted.planted_entities(people), stream)
        print(
            f"wrote {written} entities to {dump} ({dump.stat().st_size / 2**20:.0f} MiB) "
            f"in {time.perf_counter() - start:.0f} s (not timed below)"
        )
    relations = list(planted.RELATIONS)
    print(f"CPU: {_cpu_model()}, {os.cpu_count()} cores visible; chunks: {args.chunks}")
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.chunks) as pool:
        scans = list(pool.map(_scan, [(str(dump), relations, c, args.chunks, str(work)) for c in range(args.chunks)]))
    scatter_s = time.perf_counter() - start
    for chunk, seconds, rss in scans:
        print(f"scatter chunk {chunk}: {seconds:.1f} s, peak RSS {rss} MiB")
    start = time.perf_counter()
    entities = pl.scan_parquet([str(work / f"{c}.entities.parquet") for c in range(args.chunks)])
    facts = pl.scan_parquet([str(work / f"{c}.facts.parquet") for c in range(args.chunks)])
    counts = write_claims(entities, facts, relations, work / "claims.parquet", seed=0, part_facts=args.part_facts)
    n_facts = pl.scan_parquet(work / "claims.parquet").select(pl.len()).collect().item()
    gather_s = time.perf_counter() - start
    gather_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    expected = people * len(relations)
    print(
        f"gather + claims: {gather_s:.1f} s, peak RSS {gather_rss} MiB; {n_facts} facts (planted: {expected}), "
        f"{4 * n_facts} claims; steps: {counts}"
    )
    if n_facts != expected:
        raise SystemExit(f"lost facts: {n_facts} of {expected}")
    print(
        f"total (scatter in parallel, then gather): {scatter_s + gather_s:.1f} s; peak RSS: "
        f"{sum(rss for _, _, rss in scans)} MiB for the {args.chunks} concurrent scatter jobs together, "
        f"{gather_rss} MiB gather"
    )


if __name__ == "__main__":
    main()

"""Where a Snakemake run's time went, read from its log.

    python benchmarks/job_times.py .snakemake/log/<run>.snakemake.log [--top 25]

Prints every job's seconds (start to finish, at the log's one-second
resolution), the seconds per rule, the summed job time and the wall time from
the first job's start to the last job's end. With two 1-thread model jobs side
by side on a 2-core machine, wall ≈ job time / 2 is the bound a schedule can
reach.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from datetime import datetime

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?rule (\S+):$")
FIELD = re.compile(r"^\s+(jobid|wildcards|log|benchmark): (.*)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) ")


def finished_jobs(lines: list[str]) -> tuple[list[dict], float]:
    """Each finished job's ``rule``, ``wildcards``, ``seconds`` and its ``log``
    and ``benchmark`` paths as the log names them ("" where it names none), in
    the order they finished, and the wall seconds from the first start to the
    last end."""
    stamp = None
    started: dict[str, dict] = {}
    job = None
    jobs = []
    first = last = None
    for line in lines:
        line = line.rstrip("\n")
        if m := STAMP.match(line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif m := RULE.match(line):
            job = {"rule": m.group(1), "wildcards": "", "log": "", "benchmark": "", "start": stamp}
        elif (m := FIELD.match(line)) and job:
            key, value = m.groups()
            if key == "jobid":
                started[value] = job
                first = first or stamp
            else:
                job[key] = value.strip()
        elif m := FINISHED.match(line):
            job = started.pop(m.group(1))
            job["seconds"] = (stamp - job.pop("start")).total_seconds()
            jobs.append(job)
            last = stamp
            job = None
    wall = (last - first).total_seconds() if first and last else 0.0
    return jobs, wall


def job_times(lines: list[str]) -> tuple[list[tuple[str, str, float]], float]:
    """[(rule, wildcards, seconds)] of the finished jobs and the wall seconds."""
    jobs, wall = finished_jobs(lines)
    return [(j["rule"], j["wildcards"], j["seconds"]) for j in jobs], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--top", type=int, default=25, help="how many of the longest jobs to list")
    args = parser.parse_args()
    with open(args.log) as f:
        jobs, wall = job_times(f.readlines())
    per_rule: dict[str, list[float]] = defaultdict(list)
    for rule, _, seconds in jobs:
        per_rule[rule].append(seconds)
    print(f"{'job':<60} {'s':>6}")
    for rule, wildcards, seconds in sorted(jobs, key=lambda j: -j[2])[: args.top]:
        print(f"{(rule + ' ' + wildcards)[:60]:<60} {seconds:>6.0f}")
    print(f"\n{'rule':<32} {'jobs':>4} {'s':>6}")
    for rule, times in sorted(per_rule.items(), key=lambda kv: -sum(kv[1])):
        print(f"{rule:<32} {len(times):>4} {sum(times):>6.0f}")
    total = sum(s for _, _, s in jobs)
    print(f"\n{len(jobs)} jobs, job time {total:.0f} s, wall {wall:.0f} s ({wall / 60:.1f} min)")


if __name__ == "__main__":
    main()

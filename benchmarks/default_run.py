"""Where a finished run's CPU went: per rule, per phase inside a job, and how
many times each model was loaded.

    python benchmarks/default_run.py <workflow folder> [--log .snakemake/log/<run>.snakemake.log] [--top 15]

Reads the run's Snakemake log (default: the newest under the folder's
.snakemake/log) for each job's rule, wildcards and log files, and each job's
own logs for what the library logs of its CPU (conflictlab.logs,
conflictlab.lm.loading):

- ``start-up``: the interpreter, Snakemake's script preamble and the
  script's module-level imports, up to its logging set-up;
- ``import``: torch and transformers, where ``load()`` imports them (a job
  that imported them before, at module level or for its tokenizer, pays
  them in start-up or in work);
- ``load``: tokenizer and weights, to a model ready for its first forward;
- ``work``: the rest (tokenisation, forward passes, writing), the job's
  exact CPU seconds (its ``job usage`` line) less the phases above.

A job without a usage line (a rule that runs no library script, or one
killed) counts the CPU seconds of its ``benchmark:`` record, which Snakemake
samples every 5 s in this workflow (rules/benchmark_records.smk) and so may
miss up to 5 s of a job's end: a job shorter than that shows none. CPU
seconds are user + system of the job's process and the children it waited
for; with 2 cores and two 1-thread model jobs side by side, the run's wall
time is at least its CPU seconds / 2.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from job_times import finished_jobs  # noqa: E402

from conflictlab.logs import STARTUP_PATTERN, JobUsage  # noqa: E402

LOAD = re.compile(r"model load: ([0-9.]+) CPU s importing torch and transformers, ([0-9.]+) CPU s loading (\S+)")
PHASES = ("start-up", "import", "load", "work")


@dataclass
class Job:
    rule: str
    wildcards: str
    logs: list[str]
    benchmark: str
    wall_s: float
    cpu_s: float | None = None
    exact: bool = False  # from the job's usage line, not the sampled benchmark record
    phases: dict[str, float] = field(default_factory=dict)
    loaded: list[str] = field(default_factory=list)  # the model folders it loaded


def jobs_of(lines: list[str]) -> tuple[list[Job], float]:
    """Every finished job of a Snakemake log, and the run's wall seconds."""
    found, wall = finished_jobs(lines)
    logs = lambda job: [path.strip() for path in job["log"].split(",") if path.strip()]  # noqa: E731
    return [Job(j["rule"], j["wildcards"], logs(j), j["benchmark"], j["seconds"]) for j in found], wall


def read_usage(job: Job, folder: Path) -> None:
    """The job's CPU seconds and phases from its logs, else its benchmark record."""
    for log in job.logs:
        path = folder / log
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        usage = JobUsage.parse(text)
        if usage is None:
            continue
        job.cpu_s, job.exact = usage.cpu_s, True
        startup = STARTUP_PATTERN.findall(text)
        job.phases["start-up"] = float(startup[0]) if startup else 0.0
        for imported, loading, model in LOAD.findall(text):
            job.phases["import"] = job.phases.get("import", 0.0) + float(imported)
            job.phases["load"] = job.phases.get("load", 0.0) + float(loading)
            job.loaded.append(Path(model).name)
        job.phases["work"] = job.cpu_s - sum(job.phases.values())
        return
    if job.benchmark and (folder / job.benchmark).is_file():
        with open(folder / job.benchmark, newline="") as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
        job.cpu_s = float(row["cpu_time"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the workflow folder the run ran in")
    parser.add_argument("--log", type=Path, help="its Snakemake log (default: the newest in .snakemake/log)")
    parser.add_argument("--top", type=int, default=15, help="how many of the costliest jobs to list")
    args = parser.parse_args()
    log = args.log or max((args.folder / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    lines = log.read_text(encoding="utf-8").splitlines()
    jobs, wall = jobs_of(lines)
    for job in jobs:
        read_usage(job, args.folder)
    cpu = lambda job: job.cpu_s or 0.0  # noqa: E731

    print(f"{'job':<58} {'CPU s':>7} {'wall s':>6}")
    for job in sorted(jobs, key=lambda j: -cpu(j))[: args.top]:
        print(f"{(job.rule + ' ' + job.wildcards)[:58]:<58} {cpu(job):>7.1f} {job.wall_s:>6.0f}")

    print(f"\n{'rule':<30} {'jobs':>4} {'CPU s':>7}" + "".join(f" {p:>9}" for p in PHASES))
    per_rule: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        per_rule[job.rule].append(job)
    totals = Counter()
    for rule, group in sorted(per_rule.items(), key=lambda kv: -sum(cpu(j) for j in kv[1])):
        phases = Counter()
        for job in group:
            phases.update(job.phases)
        totals.update(phases)
        inexact = "" if all(j.exact for j in group) else " *"
        print(
            f"{rule:<30} {len(group):>4} {sum(cpu(j) for j in group):>7.1f}"
            + "".join(f" {phases.get(p, 0.0):>9.1f}" for p in PHASES)
            + inexact
        )
    total = sum(cpu(j) for j in jobs)
    print(f"{'all':<30} {len(jobs):>4} {total:>7.1f}" + "".join(f" {totals.get(p, 0.0):>9.1f}" for p in PHASES))
    print("(* a job without a usage line: its benchmark record's CPU seconds, sampled every 5 s, no phases)")

    loads = Counter(model for job in jobs for model in job.loaded)
    print("\nmodel loads: " + ", ".join(f"{model} {n}" for model, n in loads.most_common()))
    print(f"\n{len(jobs)} jobs, {total:.0f} CPU s in jobs, wall {wall:.0f} s ({wall / 60:.1f} min)")


if __name__ == "__main__":
    main()

"""Snakemake's own CPU and wall time while jobs run, with its default job-rate
limit and with this workflow's profile (profiles/default/config.yaml) and
end-of-run hook (rules/hooks.smk), side by side.

    python benchmarks/scheduler.py [--jobs 40] [--seconds 3] [--rounds 2]

A throw-away workflow of ``--jobs`` independent jobs that each read
``--inputs`` files and sleep ``--seconds`` (no CPU of their own), and one
that gathers them, runs on 2 cores, once with ``--workflow-profile none``
(Snakemake's 100 jobs per 1 s) and once with the project's profile,
alternating; both include the project's hook file. The CPU seconds of the
whole run (Snakemake and its sleeping jobs, from ``wait4``) are Snakemake's
scheduling and bookkeeping; the wall time shows whether the process waits
for its timers at the end (jobs x seconds / 2 is the jobs' own share).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROFILE = REPO / "profiles" / "default"
SNAKEFILE = """
include: "{hooks}"

rule all:
    input: expand("done/{{i}}", i=range({jobs}))

rule sleep:
    input: expand("inputs/{{k}}", k=range({inputs}))
    output: "done/{{i}}"
    shell: "sleep {seconds} && touch {{output}}"
"""


def run(folder: Path, profile: str) -> tuple[float, float]:
    """CPU and wall seconds of one run in ``folder`` (emptied first) with ``--workflow-profile profile``."""
    shutil.rmtree(folder / "done", ignore_errors=True)
    shutil.rmtree(folder / ".snakemake", ignore_errors=True)
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "--workflow-profile", profile, "--quiet"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    # stderr to a file, not a pipe: nothing reads a pipe until the process ends, and a full one would block it
    with tempfile.TemporaryFile() as stderr:
        start = time.monotonic()
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - start
        if os.waitstatus_to_exitcode(status) != 0:
            stderr.seek(0)
            raise SystemExit(f"snakemake failed in {folder}: {stderr.read().decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--inputs", type=int, default=100, help="input files per job (the default run's jobs read 2-100)"
    )
    args = parser.parse_args()
    modes = {"Snakemake's default (100/1s)": "none", "profiles/default": str(PROFILE)}
    measured: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        snakefile = SNAKEFILE.format(
            hooks=REPO / "rules" / "hooks.smk", jobs=args.jobs, seconds=args.seconds, inputs=args.inputs
        )
        (folder / "Snakefile").write_text(snakefile)
        (folder / "inputs").mkdir()
        for k in range(args.inputs):
            (folder / "inputs" / str(k)).touch()
        for _ in range(args.rounds):
            for mode, profile in modes.items():
                measured[mode].append(run(folder, profile))
    print(f"{args.jobs} jobs of {args.seconds:g} s, {args.inputs} inputs each, on 2 cores, {args.rounds} rounds:")
    for mode, values in measured.items():
        print(f"  {mode}: CPU s " + ", ".join(f"{cpu:.1f}" for cpu, _ in values), end="")
        print("; wall s " + ", ".join(f"{wall:.1f}" for _, wall in values))
    cpu = {mode: sum(cpu for cpu, _ in values) for mode, values in measured.items()}
    print(f"CPU, default / profile: {cpu[next(iter(modes))] / cpu['profiles/default']:.2f}")


if __name__ == "__main__":
    main()

"""Snakemake's own CPU while jobs run, with its default job-rate limit and
with this workflow's profile (profiles/default/config.yaml), side by side.

    python benchmarks/scheduler.py [--jobs 40] [--seconds 3] [--rounds 2]

A throw-away workflow of ``--jobs`` independent jobs that each read
``--inputs`` files and sleep ``--seconds`` (no CPU of their own), and one
that gathers them, runs on 2
cores, once with ``--workflow-profile none`` (Snakemake's 100 jobs per 1 s)
and once with the project's profile, alternating; the CPU seconds of the
whole run (Snakemake and its sleeping jobs, from ``wait4``) are Snakemake's
scheduling, logging and benchmark-free bookkeeping.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "default" / "config.yaml"
SNAKEFILE = """
rule all:
    input: expand("done/{{i}}", i=range({jobs}))

rule sleep:
    input: expand("inputs/{{k}}", k=range({inputs}))
    output: "done/{{i}}"
    shell: "sleep {seconds} && touch {{output}}"
"""


def run(folder: Path, profile: str) -> float:
    """CPU seconds of one run in ``folder`` (emptied first) with ``--workflow-profile profile``."""
    shutil.rmtree(folder / "done", ignore_errors=True)
    shutil.rmtree(folder / ".snakemake", ignore_errors=True)
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "--workflow-profile", profile, "--quiet"]
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"snakemake failed in {folder}: {process.stderr.read().decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--inputs", type=int, default=100, help="input files per job (the default run's jobs read 2-100)"
    )
    args = parser.parse_args()
    modes = {"Snakemake's default (100/1s)": "none", "profiles/default": str(PROFILE.parent)}
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "Snakefile").write_text(SNAKEFILE.format(jobs=args.jobs, seconds=args.seconds, inputs=args.inputs))
        (folder / "inputs").mkdir()
        for k in range(args.inputs):
            (folder / "inputs" / str(k)).touch()
        for _ in range(args.rounds):
            for mode, profile in modes.items():
                seconds[mode].append(run(folder, profile))
    print(
        f"{args.jobs} jobs of {args.seconds:g} s, {args.inputs} inputs each, on 2 cores, {args.rounds} rounds "
        "(CPU s of the whole run):"
    )
    for mode, values in seconds.items():
        print(f"  {mode}: " + ", ".join(f"{v:.1f}" for v in values))
    ratio = sum(seconds["Snakemake's default (100/1s)"]) / sum(seconds["profiles/default"])
    print(f"default / profile: {ratio:.2f}")


if __name__ == "__main__":
    main()

"""What a job script's exit costs, with the interpreter's usual teardown and
with the early exit of :func:`conflictlab.logs.configure_logging`, side by
side: each mode's process CPU seconds after its usage line.

    python benchmarks/job_exit.py [--model resources/models/smollm2-135m-instruct] [--rounds 3]

Each round runs a fresh process per mode, alternating, that does what a
model job does before its work (imports torch and transformers through
:func:`conflictlab.lm.loading.load`, loads the model where ``--model`` is
given, forwards one batch), logs its usage line and ends. The process's
whole CPU time comes from the kernel (``wait4``); the script's own from
its usage line; the difference is the exit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = """
import sys
{snakemake}
from conflictlab.logs import configure_logging
configure_logging(sys.argv[1], "job")
import torch
from conflictlab.lm.loading import load
if len(sys.argv) > 2:
    lm = load(sys.argv[2])
    with torch.inference_mode():
        lm.model(input_ids=torch.randint(0, 1000, (4, 200)))
else:
    import transformers.models.llama.modeling_llama
"""
MODES = {"usual exit": "", "early exit": "snakemake = object()  # as Snakemake's script preamble defines it"}


def run(mode: str, log: Path, model: str | None) -> tuple[float, float]:
    """(the process's CPU seconds, its usage line's) for one run in ``mode``."""
    from conflictlab.logs import JobUsage

    command = [sys.executable, "-c", JOB.format(snakemake=MODES[mode]), str(log)] + ([model] if model else [])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{mode}: the job exited with {os.waitstatus_to_exitcode(status)} (log: {log})")
    return usage.ru_utime + usage.ru_stime, JobUsage.parse(log.read_text()).cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a prepared model folder to load (default: imports only)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    exits: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for mode in MODES:
                total, logged = run(mode, Path(folder) / f"{round_}-{mode}.log", args.model)
                exits[mode].append(total - logged)
                print(f"round {round_ + 1} {mode}: process {total:.2f} CPU s, usage line {logged:.2f}")
    for mode, values in exits.items():
        print(
            f"{mode}: {sum(values) / len(values):.2f} CPU s after the usage line ("
            + ", ".join(f"{v:.2f}" for v in values)
            + ")"
        )


if __name__ == "__main__":
    main()

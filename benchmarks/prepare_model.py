"""CPU seconds of prepare_model for a configured model: this checkout's library against
a git revision's, side by side, and whether the two prepared folders are byte-identical.

    python benchmarks/prepare_model.py --baseline main [--model gemma3-270m] [--repeats 2]

The baseline's ``conflictlab/`` is exported with ``git archive`` into a temporary
folder. Each preparation runs in a fresh interpreter (interpreter, imports and
preparation, as rule prepare_model pays them), baseline and this checkout in
turn, ``--repeats`` times each; CPU seconds are user + system of that child
(``getrusage``), so other work on a shared machine does not count, though it
still slows the caches. Every file of every folder is compared by SHA-256 with
the first baseline folder's.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PREPARE = """
import os, sys
import conflictlab
from conflictlab.lm.registry import prepare_model
assert conflictlab.__file__.startswith(os.environ["PYTHONPATH"]), conflictlab.__file__
prepare_model(*sys.argv[1:4], dtype=sys.argv[4])
"""


def export_library(revision: str, into: Path) -> Path:
    """``conflictlab/`` as of ``revision``, unpacked under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "conflictlab"], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True)
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        tarfile.open(fileobj=handle).extractall(into, filter="data")
    return into


def cpu_seconds_of(library: Path, args: list[str], cwd: str) -> float:
    """User + system CPU seconds of one fresh interpreter preparing the model with ``library``
    (run in ``cwd``, away from the checkout, whose conflictlab/ would come first on the path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(library)}
    subprocess.run([sys.executable, "-c", PREPARE, *args], check=True, env=env, capture_output=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def file_hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare with, e.g. main")
    parser.add_argument("--model", default="gemma3-270m", help="a model of --config")
    parser.add_argument("--config", default=str(ROOT / "config.yaml"))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    spec = yaml.safe_load(Path(args.config).read_text())["models"][args.model]
    dtype = spec.get("dtype", "bfloat16")
    with tempfile.TemporaryDirectory(prefix="prepare-model-bench-") as work:
        sides = {"baseline": export_library(args.baseline, Path(work) / "baseline"), "this checkout": ROOT}
        seconds: dict[str, list[float]] = {side: [] for side in sides}
        hashes: dict[str, list[dict]] = {side: [] for side in sides}
        for run in range(args.repeats):
            for side, library in sides.items():
                out = Path(work) / "out" / f"{side.replace(' ', '-')}-{run}"
                seconds[side].append(cpu_seconds_of(library, [args.model, spec["source"], str(out), dtype], work))
                hashes[side].append(file_hashes(out))
                print(f"{side:14s} run {run + 1}: {seconds[side][-1]:6.1f} CPU s", flush=True)
        reference = hashes["baseline"][0]
        identical = all(h == reference for runs in hashes.values() for h in runs)
        baseline, current = (sum(seconds[side]) / args.repeats for side in sides)
        print(f"{args.model} ({spec['source']}), mean of {args.repeats} fresh processes each:")
        print(f"  baseline ({args.baseline}): {baseline:6.1f} CPU s")
        print(f"  this checkout: {current:6.1f} CPU s, {current / baseline:.2f} of the baseline")
        verdict = "yes" if identical else "NO"
        print(f"  {len(reference)} files; every folder byte-identical to the baseline's first: {verdict}")
        if not identical:
            sys.exit(1)


if __name__ == "__main__":
    main()

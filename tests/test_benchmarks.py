"""The prepared GPU check's plumbing, on the CPU (tiny random model)."""

import re
import subprocess

import pytest

from .conftest import REPO


@pytest.mark.slow
def test_device_check_runs_on_cpu_and_says_so():
    run = subprocess.run(["bash", "benchmarks/device_check.sh", "--tiny"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert "tiny random model, checks the plumbing only" in out
    assert "vLLM: skipped (" in out
    speedups = re.findall(r"speedup (\d+\.\d+)x", out)
    assert len(speedups) == 2  # the Shapley scorer and the activation pass
    assert float(re.search(r"max \|dv\| (\S+);", out).group(1)) <= 1e-4  # same values as the paper code's way
    assert out.rstrip().endswith("done")

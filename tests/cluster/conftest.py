"""The one-node SLURM cluster the tests in this folder submit to (tests/cluster/slurm.sh).

`make test-cluster` starts it (`slurm.sh run`), sets SLURM_CONF and runs `pytest -m cluster`;
without it these tests skip with the reason. In CI a cluster that does not start fails the
step before pytest runs (slurm.sh), so a skip there cannot hide it.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

ACCOUNT = "conflictlab"  # the account slurm.sh creates, root's
# The four-job slice of the smoke DAG (tests/cluster/slice.yaml) and its final table.
SLICE_CONFIG = ("--configfile", "config/smoke.yaml", "tests/cluster/slice.yaml")
SLICE_TARGET = "results/tables/arbitration_accuracy.csv"
# What the tests add to the profile: the node's 2 CPUs as the cores (the profile's 16 would ask
# sbatch for 8 CPUs per model job; with 2, a model job takes 1 thread, as in the local run),
# the GPU rule of the slice asks for a GPU (the workflow's config keeps it on the CPU, the
# cluster's GPUs have no device behind them), status checks every 5 s instead of 40, and
# SLURM's per-job logs kept after success so they can be read.
CLUSTER_OVERLAY = (
    "--cores",
    "2",
    "--set-resources",
    "arbitration_evaluate:gpu=1",
    "--slurm-init-seconds-before-status-checks",
    "5",
    "--slurm-keep-successful-logs",
)
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")


def cluster_env() -> dict[str, str]:
    why = os.environ.get("CONFLICTLAB_SLURM_UNAVAILABLE")
    if why:
        pytest.skip(why)
    if not os.environ.get("SLURM_CONF") or not shutil.which("sinfo"):
        pytest.skip("no SLURM cluster to submit to: `make test-cluster` starts one (tests/cluster/slurm.sh)")
    state = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True)
    if state.returncode != 0 or "idle" not in state.stdout:
        pytest.fail(f"SLURM_CONF is set but the node is not idle: {state.stdout or state.stderr}")
    return {"SLURM_CONF": os.environ["SLURM_CONF"]}


@pytest.fixture(scope="session")
def slurm() -> dict[str, str]:
    """The environment that reaches the running cluster; skips without one."""
    return cluster_env()


def snakemake_argv(*args: str) -> list[str]:
    exe = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    return [exe, *args]


def with_account(workflow: Path) -> Path:
    """``workflow`` whose profiles/slurm submits with the test cluster's account (-A conflictlab):
    the plugin's own guess of an account fails (it pipes sacct into tail without a shell)."""
    config = workflow / "profiles" / "slurm" / "config.yaml"
    profile = yaml.safe_load(config.read_text())
    profile["default-resources"]["slurm_account"] = ACCOUNT
    config.write_text(yaml.safe_dump(profile, sort_keys=False))
    return workflow


def run_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def sacct(*job_ids: str) -> list[dict[str, str]]:
    """One row per job allocation (-X): its id, rule (the plugin's --comment), partition, state and TRES."""
    fields = ("JobID", "Comment", "Account", "Partition", "State", "AllocTRES", "Elapsed")
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", ",".join(fields), "-j", ",".join(job_ids)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines() if line]


def sacct_now() -> str:
    """sacct's -S for "from now on" (whole seconds: a job submitted in this second is included)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def sacct_since(start: str) -> list[dict[str, str]]:
    """Every job allocation submitted since ``start`` (sacct's time format)."""
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "JobID", "-S", start], capture_output=True, text=True, check=True
    ).stdout
    return sacct(*out.split()) if out.strip() else []


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 1.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def squeue() -> list[dict[str, str]]:
    """The jobs SLURM still holds: id, state and comment (the plugin's rule_<rule>...)."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%T|%k"], capture_output=True, text=True, check=True).stdout
    return [dict(zip(("JobID", "State", "Comment"), line.split("|"), strict=True)) for line in out.splitlines()]


def node_name() -> str:
    return subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, check=True).stdout.split()[
        0
    ]

"""The workflow submitted through profiles/slurm to a real one-node SLURM cluster
(tests/cluster/slurm.sh), and the faults the profile has to survive.

Run with `make test-cluster`; without a cluster every test here skips with the reason.
"""

import re
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ..conftest import copy_workflow, snakemake_cmd, with_models
from .conftest import (
    ACCOUNT,
    CLUSTER_OVERLAY,
    SLICE_CONFIG,
    SLICE_TARGET,
    SUBMITTED,
    run_env,
    sacct_now,
    sacct_since,
    snakemake_argv,
    squeue,
    wait_until,
    with_account,
)

pytestmark = pytest.mark.cluster

SLICE_RULES = {"arbitration_generate", "prepare_model", "arbitration_evaluate", "arbitration_report"}
MODEL = "smollm2-135m-instruct"
# Tables written byte for byte the same by any run of the same inputs, and Parquet files
# compared row by row (their metadata may differ).
SAME_BYTES = [
    f"results/tables/arbitration_{name}.{ext}"
    for name in ("accuracy", "orders", "sensitivity")
    for ext in ("csv", "md")
]
SAME_ROWS = [
    "results/arbitration/instances.parquet",
    "results/arbitration/sensitivity_instances.parquet",
    f"results/arbitration/{MODEL}/predictions.parquet",
]
RULE_LOGS = {
    "arbitration_generate": "results/logs/arbitration_generate.log",
    "prepare_model": f"results/logs/prepare_model/{MODEL}.log",
    "arbitration_evaluate": f"results/logs/arbitration_evaluate/{MODEL}.log",
    "arbitration_report": "results/logs/arbitration_report.log",
}


def rule_of(job: dict[str, str]) -> str:
    """The rule a SLURM job ran: the plugin's comment is rule_<rule> or rule_<rule>_wildcards_<...>."""
    return re.match(r"rule_(.+?)(?:_wildcards_.*)?$", job["Comment"]).group(1)


def slurm_command(*extra: str) -> list[str]:
    return snakemake_argv(SLICE_TARGET, "--profile", "profiles/slurm", *CLUSTER_OVERLAY, *extra, *SLICE_CONFIG)


def jobs_planned(output: str) -> int:
    return int(re.search(r"^total\s+(\d+)$", output, re.MULTILINE).group(1))


def report(label: str, seconds: float) -> None:
    print(f"\n[cluster timing] {label}: {seconds:.1f} s wall")


@pytest.fixture(scope="module")
def local_slice(tmp_path_factory) -> Path:
    """The slice run locally (--cores 2), the reference the SLURM run is held to."""
    workflow = copy_workflow(tmp_path_factory.mktemp("local") / "wf")
    started = time.monotonic()
    run = snakemake_cmd(SLICE_TARGET, "--cores", "2", *SLICE_CONFIG, cwd=workflow, timeout=1200)
    report("slice run locally (--cores 2)", time.monotonic() - started)
    assert run.returncode == 0, run.stderr[-3000:]
    return workflow


@pytest.fixture(scope="module")
def slurm_slice(slurm, tmp_path_factory):
    """The same slice through profiles/slurm: (workflow folder, the run, when it started for sacct)."""
    workflow = with_account(copy_workflow(tmp_path_factory.mktemp("slurm") / "wf"))
    since = sacct_now()
    started = time.monotonic()
    run = subprocess.run(
        slurm_command(), cwd=workflow, env=run_env(slurm), capture_output=True, text=True, timeout=1200
    )
    report("slice run through SLURM (profiles/slurm)", time.monotonic() - started)
    assert run.returncode == 0, run.stderr[-5000:]
    return workflow, run, since


def test_every_job_of_the_slice_ran_as_a_completed_slurm_job(slurm_slice):
    workflow, run, since = slurm_slice
    submitted = SUBMITTED.findall(run.stderr)
    assert len(submitted) == jobs_planned(run.stderr) == len(SLICE_RULES)
    jobs = sacct_since(since)
    assert sorted(job["JobID"] for job in jobs) == sorted(slurm_id for _, slurm_id, _ in submitted)
    assert {job["State"] for job in jobs} == {"COMPLETED"}, jobs
    assert {job["Account"] for job in jobs} == {ACCOUNT}
    by_rule = {rule_of(job): job for job in jobs}
    assert set(by_rule) == SLICE_RULES
    # the rule that asks for a GPU went to the GPU partition and was given one; the rest to the CPU one
    assert by_rule["arbitration_evaluate"]["Partition"] == "gpu"
    assert "gres/gpu=1" in by_rule["arbitration_evaluate"]["AllocTRES"]
    for rule in SLICE_RULES - {"arbitration_evaluate"}:
        assert by_rule[rule]["Partition"] == "cpu" and "gres/gpu" not in by_rule[rule]["AllocTRES"], by_rule[rule]
    # memory as the rules ask: prepare_model 8000 MB, arbitration_evaluate 16000 MB
    assert "mem=8000M" in by_rule["prepare_model"]["AllocTRES"]
    assert "mem=16000M" in by_rule["arbitration_evaluate"]["AllocTRES"]


def test_the_slice_through_slurm_equals_the_local_run(slurm_slice, local_slice):
    workflow = slurm_slice[0]
    for path in SAME_BYTES:
        assert (workflow / path).read_bytes() == (local_slice / path).read_bytes(), path
    for path in SAME_ROWS:
        through_slurm, local = pq.read_table(workflow / path), pq.read_table(local_slice / path)
        assert through_slurm.num_rows > 0 and through_slurm.to_pylist() == local.to_pylist(), path


def test_each_job_leaves_its_rule_log_and_its_slurm_log_where_the_docs_say(slurm_slice):
    workflow, run, _ = slurm_slice
    for rule, log in RULE_LOGS.items():
        assert (workflow / log).is_file(), (rule, log)
    for _, slurm_id, slurm_log in SUBMITTED.findall(run.stderr):
        path = Path(slurm_log)
        # .snakemake/slurm_logs/rule_<rule>/<wildcards>/<SLURM job id>.log (docs/running.md)
        assert path.is_file() and path.name == f"{slurm_id}.log", path
        assert path.relative_to(workflow / ".snakemake" / "slurm_logs").parts[0].startswith("rule_")


def test_a_cancelled_job_is_reported_and_a_rerun_completes_only_what_is_missing(slurm, slurm_slice, tmp_path):
    """scancel the model job while it runs: Snakemake stops with its SLURM id and state; the same
    command again submits that job and the one after it, nothing that had completed."""
    prepared = slurm_slice[0] / "resources" / "models" / MODEL
    workflow = with_account(with_models(copy_workflow(tmp_path / "wf"), {MODEL: prepared}))
    # the profile retries a failed job once (retries: 1): without that, one scancel fails the run
    command = slurm_command("--retries", "0")
    since = sacct_now()
    with (tmp_path / "first.log").open("w") as log:
        first = subprocess.Popen(command, cwd=workflow, env=run_env(slurm), stdout=log, stderr=subprocess.STDOUT)
    try:

        def running_model_job():
            return next(
                (
                    job["JobID"]
                    for job in squeue()
                    if job["State"] == "RUNNING" and job["Comment"].startswith("rule_arbitration_evaluate")
                ),
                None,
            )

        cancelled = wait_until(running_model_job, 600, "arbitration_evaluate to run", interval=0.5)
        subprocess.run(["scancel", cancelled], check=True)
        assert first.wait(timeout=300) != 0
    finally:
        if first.poll() is None:
            first.kill()
    output = (tmp_path / "first.log").read_text()
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED" in output, output[-3000:]
    done_before = {rule_of(job) for job in sacct_since(since) if job["State"] == "COMPLETED"}
    assert done_before == {"arbitration_generate"}, done_before

    since = sacct_now()
    rerun = subprocess.run(command, cwd=workflow, env=run_env(slurm), capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-5000:]
    jobs = sacct_since(since)
    assert sorted(rule_of(job) for job in jobs) == ["arbitration_evaluate", "arbitration_report"]
    assert {job["State"] for job in jobs} == {"COMPLETED"}
    assert (workflow / SLICE_TARGET).read_bytes() == (slurm_slice[0] / SLICE_TARGET).read_bytes()

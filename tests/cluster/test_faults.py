"""Faults a run through profiles/slurm has to survive, on small workflows of their own
(a job past its time limit, a drained node), and sacct's record of a GPU job.

Run with `make test-cluster`; without a cluster every test here skips with the reason.
"""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import REPO
from .conftest import (
    ACCOUNT,
    node_name,
    run_env,
    sacct,
    sacct_now,
    sacct_since,
    snakemake_argv,
    squeue,
    wait_until,
    with_account,
)

pytestmark = pytest.mark.cluster


# A workflow of its own for the timing faults: the slice's jobs take seconds, these need one
# that outlives its time limit and one that runs while the node is drained.
TIMEOUT_SNAKEFILE = """
rule outlives_its_limit:
    output: "done.txt"
    resources: runtime=1
    # the first attempt sleeps past the 1-minute limit; the retry finds its marker and finishes
    shell: "if [ -e first_attempt ]; then echo retried > {output}; else touch first_attempt; sleep 600; fi"
"""

DRAIN_SNAKEFILE = """
rule second:
    input: "first.txt"
    output: "second.txt"
    shell: "cat {input} > {output}"

rule first:
    output: "first.txt"
    shell: "sleep 20; echo first > {output}"
"""


def small_workflow(folder: Path, snakefile: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "profiles", folder / "profiles")
    (folder / "Snakefile").write_text(snakefile)
    return with_account(folder)


def test_a_job_past_its_runtime_is_killed_by_slurm_and_retried(slurm, tmp_path):
    workflow = small_workflow(tmp_path / "wf", TIMEOUT_SNAKEFILE)
    since = sacct_now()
    run = subprocess.run(
        snakemake_argv("--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "5"),
        cwd=workflow,
        env=run_env(slurm),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-5000:]
    jobs = sorted(sacct_since(since), key=lambda job: int(job["JobID"]))
    # retries: 1 in profiles/slurm/config.yaml: one attempt killed at the limit, one retry
    assert [job["State"] for job in jobs] == ["TIMEOUT", "COMPLETED"], jobs
    assert f"SLURM-job '{jobs[0]['JobID']}' failed, SLURM status is: 'TIMEOUT'" in run.stderr, run.stderr[-3000:]
    assert (workflow / "done.txt").read_text() == "retried\n"


def test_a_drained_node_holds_the_workflow_until_it_resumes(slurm, tmp_path):
    workflow = small_workflow(tmp_path / "wf", DRAIN_SNAKEFILE)
    node = node_name()
    since = sacct_now()
    with (tmp_path / "run.log").open("w") as log:
        run = subprocess.Popen(
            snakemake_argv("--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "5"),
            cwd=workflow,
            env=run_env(slurm),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    drained = False
    try:
        wait_until(lambda: [job for job in squeue() if job["State"] == "RUNNING"], 300, "the first job to run")
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=conflictlab-test"], check=True)
        drained = True
        # the running job finishes on the draining node; the next one waits for a node
        wait_until(lambda: (workflow / "first.txt").exists(), 300, "the first job to finish")
        wait_until(
            lambda: [job for job in squeue() if job["State"] == "PENDING"], 120, "the second job to be submitted"
        )
        time.sleep(20)  # several status checks
        assert run.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
        assert [job["State"] for job in squeue()] == ["PENDING"]
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], check=True)
        drained = False
        assert run.wait(timeout=300) == 0, (tmp_path / "run.log").read_text()[-3000:]
    finally:
        if drained:
            subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"])
        if run.poll() is None:
            run.kill()
    assert (workflow / "second.txt").read_text() == "first\n"
    jobs = sacct_since(since)
    assert len(jobs) == 2 and {job["State"] for job in jobs} == {"COMPLETED"}, jobs


def test_sacct_reads_back_what_sbatch_was_given(slurm):
    """The accounting database answers for a job submitted by hand with the profile's GPU shape."""
    submitted = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "-A",
            ACCOUNT,
            "-p",
            "gpu",
            "--gpus=2",
            "--nodes=1",
            "--mem",
            "1000",
            "-t",
            "5",
            "--output",
            "/dev/null",
            "--wrap",
            "true",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    job = wait_until(
        # slurmdbd may record the end before the partition: wait for the whole record
        lambda: next((j for j in sacct(submitted) if j["State"] == "COMPLETED" and j["Partition"]), None),
        60,
        "the job in sacct",
    )
    assert job["Partition"] == "gpu" and job["Account"] == ACCOUNT, job
    assert "gres/gpu=2" in job["AllocTRES"] and "node=1" in job["AllocTRES"], job

"""What sbatch is asked for: the SLURM plugin's own submit string for one job of each rule of
config/paper.yaml that uses GPUs, checked against profiles/slurm/partitions.yaml. Needs no
cluster (the submission itself is tested in tests/cluster/, `make test-cluster`)."""

import logging
import re
import shlex
from types import SimpleNamespace

import pytest
import yaml

from .conftest import REPO, snakemake_cmd
from .test_workflow import PAPER, PAPER_OFFLINE

pytestmark = pytest.mark.slow


class Resources(dict):
    """A job's resources as the plugin reads them: ``.get(name)`` and ``.name``."""

    __getattr__ = dict.__getitem__


def planned_jobs_by_rule(output: str) -> dict[str, list[SimpleNamespace]]:
    """Every job of a dry run, as the plugin sees a job: name, threads, resources, wildcards."""
    jobs: dict[str, list[SimpleNamespace]] = {}
    for block in re.split(r"\n(?=\[)", output):  # one job per block, each opened by its [date] line
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.MULTILINE)
        resources = re.search(r"resources: (.*)", block)
        if not (rule and resources):
            continue
        values = dict(item.split("=", 1) for item in resources.group(1).split(", "))
        # a job's threads are shown when more than 1 (capped by the profile's cores)
        threads = re.search(r"threads: (\d+)", block)
        wildcards = re.search(r"wildcards: (.*)", block)
        jobs.setdefault(rule.group(1), []).append(
            SimpleNamespace(
                name=rule.group(1),
                threads=int(threads.group(1)) if threads else 1,
                resources=Resources({k: int(v) if v.isdigit() else v for k, v in values.items()}),
                wildcards=wildcards.group(1) if wildcards else "",
                is_group=lambda: False,
            )
        )
    return jobs


def sbatch_arguments(job: SimpleNamespace, partitions) -> dict[str, str]:
    """The plugin's sbatch call for ``job`` (partition chosen by its automatic selection), as {option: value}."""
    from snakemake_executor_plugin_slurm.partitions import get_best_partition
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    partition = get_best_partition(partitions, job, logging.getLogger("slurm-submit-test"))
    assert partition, f"no partition of profiles/slurm/partitions.yaml fits {job.name} {dict(job.resources)}"
    params = {
        "run_uuid": "run",
        "slurm_logfile": f".snakemake/slurm_logs/rule_{job.name}/%j.log",
        "comment_str": f"rule_{job.name}",
        "account": "",
        "partition": f"-p {partition}",
        "workdir": "/workflow",
    }
    call = get_submit_command(job, params) + set_gres_string(job)
    arguments, words = {}, shlex.split(call)[1:]
    while words:
        word = words.pop(0)
        if "=" in word:
            key, value = word.split("=", 1)
        elif words and not words[0].startswith("-"):
            key, value = word, words.pop(0)
        else:
            key, value = word, ""
        arguments[key] = value
    return arguments


@pytest.fixture(scope="module")
def paper_plan(tmp_path_factory) -> dict[str, list[SimpleNamespace]]:
    from .conftest import copy_workflow

    workflow = copy_workflow(tmp_path_factory.mktemp("paper") / "wf")
    plan = snakemake_cmd("-n", "--profile", "profiles/slurm", *PAPER, cwd=workflow, env=PAPER_OFFLINE)
    assert plan.returncode == 0, plan.stderr[-3000:]
    return planned_jobs_by_rule(plan.stdout + plan.stderr)


def test_each_gpu_rule_of_the_paper_config_asks_sbatch_for_what_its_partition_allows(paper_plan):
    from snakemake_executor_plugin_slurm.partitions import read_partition_file

    limits = yaml.safe_load((REPO / "profiles" / "slurm" / "partitions.yaml").read_text())["partitions"]
    partitions = read_partition_file(REPO / "profiles" / "slurm" / "partitions.yaml")
    gpu_rules = {rule: jobs for rule, jobs in paper_plan.items() if any(job.resources.get("gpu", 0) for job in jobs)}
    # the model rules of the paper's stages (tests/test_workflow.py lists them for the plan)
    assert {"generate", "shapley_values", "activations", "steered_generate", "conflictbank_train"} <= set(gpu_rules)
    for rule, jobs in sorted(gpu_rules.items()):
        job = next(job for job in jobs if job.resources.get("gpu", 0))
        args = sbatch_arguments(job, partitions)
        partition = limits[args["-p"]]
        gpus = int(args["--gpus"])
        assert gpus == job.resources["gpu"] and 1 <= gpus <= partition["max_gpu"], (rule, args)
        assert args["--nodes"] == "1", (rule, args)  # all of a job's GPUs on one node
        assert int(args["--mem"]) == job.resources["mem_mb"] <= partition["max_mem_mb"], (rule, args)
        assert int(args["-t"]) == job.resources["runtime"] <= partition["max_runtime"], (rule, args)
        assert int(args["--cpus-per-task"]) == job.threads <= partition["max_cpus_per_task"], (rule, args)
        assert args["-p"] == "gpu", (rule, args)


def test_a_model_with_four_gpus_asks_for_four_on_one_node(paper_plan):
    """config/paper.yaml: Qwen2.5-72B-Instruct has gpus: 4; its CONFLICTS answers run through vLLM."""
    from snakemake_executor_plugin_slurm.partitions import read_partition_file

    partitions = read_partition_file(REPO / "profiles" / "slurm" / "partitions.yaml")
    qwen = [job for job in paper_plan["conflicts_respond"] if "qwen2.5-72b-instruct" in job.wildcards]
    assert len(qwen) == 1
    args = sbatch_arguments(qwen[0], partitions)
    assert (args["--gpus"], args["--nodes"], args["-p"]) == ("4", "1", "gpu")
    # vLLM's engine takes every core the profile gives a job (cores: 16)
    assert args["--cpus-per-task"] == "16"
    one_gpu = next(job for job in paper_plan["conflicts_respond"] if "gemma-3-27b-it" in job.wildcards)
    assert sbatch_arguments(one_gpu, partitions)["--gpus"] == "1"

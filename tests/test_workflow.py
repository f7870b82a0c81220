"""Snakemake itself: config validation, lint, dry-runs and incremental reruns."""

import re

import pytest

from .conftest import snakemake_cmd

pytestmark = pytest.mark.slow


def planned_jobs(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry-run into {rule: count}."""
    stats = output.split("Job stats:", 1)
    if len(stats) < 2:
        return {}
    jobs = {}
    for line in stats[1].splitlines()[3:]:
        match = re.fullmatch(r"(\S+)\s+(\d+)", line.strip())
        if not match:
            break
        jobs[match.group(1)] = int(match.group(2))
    jobs.pop("total", None)
    return jobs


@pytest.mark.parametrize(
    "overlay, key",
    [
        ("data:\n  sede: 3\n", "'sede' was unexpected"),
        ("data:\n  max_per_subset: ten\n", "max_per_subset"),
        ("conflict_types: [ambiguity, sarcasm]\n", "sarcasm"),
        ("models:\n  bad:\n    source: s3:bucket/model\n", "s3:bucket/model"),
    ],
)
def test_config_schema_error_names_the_key(tmp_path, overlay, key):
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay)
    result = snakemake_cmd("-n", "--configfile", str(bad))
    assert result.returncode != 0
    assert "Error validating config file" in result.stderr + result.stdout
    assert key in result.stderr + result.stdout


def test_unknown_generator_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("generators: [no-such-model]\n")
    result = snakemake_cmd("-n", "--configfile", str(bad))
    assert result.returncode != 0
    assert "no-such-model" in result.stderr + result.stdout


def test_lint_is_clean():
    for args in ((), ("--configfile", "config/paper.yaml")):
        result = snakemake_cmd("--lint", *args)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Lints for" not in result.stdout + result.stderr


def test_paper_config_plans_offline(workflow_copy):
    offline = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = snakemake_cmd("-n", "--configfile", "config/paper.yaml", cwd=workflow_copy, env=offline)
    assert result.returncode == 0, result.stderr
    jobs = planned_jobs(result.stdout + result.stderr)
    assert jobs["build_subset"] == 6
    assert jobs["prepare_model"] == 5


TINY = """
conflict_types: [temporal, ambiguity]
generators: [smollm2-135m-instruct]
scorers: []
generation:
  max_new_tokens: 4
arbitration:
  models: []
mechanistic:
  models: []
"""


def test_data_rule_is_reproducible_and_incremental(workflow_with_smollm2):
    workflow_copy = workflow_with_smollm2
    tiny = workflow_copy / "tiny.yaml"
    tiny.write_text(TINY)
    first = snakemake_cmd("--cores", "2", "--configfile", str(tiny), cwd=workflow_copy)
    assert first.returncode == 0, first.stderr[-3000:]
    data = sorted((workflow_copy / "results" / "data").glob("*.parquet"))
    assert [p.name for p in data] == ["ambiguity.parquet", "ambiguity.rejected.parquet", "temporal.parquet", "temporal.rejected.parquet"]
    before = {p.name: p.read_bytes() for p in data}

    rerun = snakemake_cmd(*[f"results/data/{p}" for p in before], "--cores", "2", "--forcerun", "build_subset", "--configfile", str(tiny), cwd=workflow_copy)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in data} == before

    nothing = snakemake_cmd("-n", "--configfile", str(tiny), cwd=workflow_copy)
    assert "Nothing to be done" in nothing.stdout + nothing.stderr
    assert planned_jobs(nothing.stdout + nothing.stderr) == {}

    fewer = workflow_copy / "fewer.yaml"
    fewer.write_text("data:\n  max_per_subset: 2\n")
    plan = snakemake_cmd("-n", "--configfile", str(tiny), str(fewer), cwd=workflow_copy)
    jobs = planned_jobs(plan.stdout + plan.stderr)
    assert jobs.get("build_subset") == 2
    assert jobs.get("generate") == 2  # what depends on the data reruns ...
    assert "prepare_model" not in jobs  # ... and nothing else


def test_whole_dag_runs_on_the_smoke_config(workflow_copy, smollm2_dir, gemma_dir):
    models = workflow_copy / "resources" / "models"
    models.mkdir(parents=True)
    (models / "smollm2-135m-instruct").symlink_to(smollm2_dir, target_is_directory=True)
    (models / "gemma3-270m").symlink_to(gemma_dir, target_is_directory=True)
    run = snakemake_cmd("--cores", "2", "--configfile", "config/smoke.yaml", cwd=workflow_copy)
    assert run.returncode == 0, run.stderr[-4000:]
    results = workflow_copy / "results"
    for table in ("accuracy", "balance", "table3", "table6", "arbitration_accuracy", "arbitration_sensitivity",
                  "table8_smollm2-135m-instruct", "table9_smollm2-135m-instruct", "table10_smollm2-135m-instruct"):
        text = (results / "tables" / f"{table}.md").read_text()
        assert text.count("\n|") >= 3, table  # header, rule and at least one row
    figures = sorted(p.name for p in (results / "figures").iterdir())
    assert len(figures) == 12 and all((results / "figures" / f).stat().st_size > 1000 for f in figures)
    again = snakemake_cmd("-n", "--configfile", "config/smoke.yaml", cwd=workflow_copy)
    assert "Nothing to be done" in again.stdout + again.stderr

"""The scale rehearsal (README, Paper scale): the random: model source,
config/scale.yaml's plan, and benchmarks/scale.py's reading of benchmark records."""

import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from conflictlab.lm.registry import ModelSource, prepare_model, read_manifest

from .conftest import REPO, snakemake_cmd, with_models

sys.path.insert(0, str(REPO / "benchmarks"))
import scale  # noqa: E402

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO)}


def test_random_source_names_another_model_and_is_not_prepared_from_itself(tmp_path):
    assert ModelSource.parse("random:smollm2-135m-instruct") == ModelSource("random", "smollm2-135m-instruct")
    with pytest.raises(ValueError, match="random:"):
        ModelSource.parse("random:")
    with pytest.raises(ValueError, match="prepare_random_model"):
        prepare_model("tiny", "random:smollm2-135m-instruct", tmp_path / "tiny")


def scale_workdir(tmp_path: Path, fraction: Fraction) -> Path:
    """A working directory as benchmarks/scale.py run makes it, with the
    synthetic inputs at ``fraction`` (ConflictBank at 1/5000)."""
    from conflictlab.conflictbank.synthetic import write_release as write_conflictbank
    from conflictlab.conflicts.synthetic import write_release as write_conflicts
    from conflictlab.contextconflict.synthetic import write_release as write_contextconflict

    write_contextconflict(tmp_path / "synthetic" / "data", float(fraction))
    write_conflicts(tmp_path / "synthetic" / "conflicts.jsonl", float(fraction))
    write_conflictbank(tmp_path / "synthetic" / "QA_dataset.jsonl", 1 / 5000)
    (tmp_path / "fraction.yaml").write_text(json.dumps(scale.fraction_sizes(fraction)))
    return tmp_path


def scale_snakemake(wd: Path, *args):
    return snakemake_cmd(
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(wd),
        "--configfile",
        str(REPO / "config.yaml"),
        str(REPO / "config" / "scale.yaml"),
        str(wd / "fraction.yaml"),
        *args,
        cwd=wd,
        env=OFFLINE,
        timeout=300,
    )


def test_the_scale_config_plans_the_paper_dag_on_one_random_model_built_from_smollm2(tmp_path):
    wd = scale_workdir(tmp_path, Fraction(1, 64))
    plan = scale_snakemake(wd, "-n", "--cores", "2")
    assert plan.returncode == 0, plan.stderr[-3000:]
    jobs = dict(line.split() for line in plan.stdout.split("Job stats:")[1].splitlines()[3:] if len(line.split()) == 2)
    # every model rule of the paper DAG is there, on the one model
    for rule in (
        "generate",
        "shapley_values",
        "shapley_values_shuffled",
        "activations",
        "steered_generate",
        "causal_intervention",
        "arbitration_evaluate",
        "conflictbank_evaluate",
        "conflicts_respond",
        "judge_faithfulness",
    ):
        assert jobs.get(rule) == "1", rule
    assert (
        jobs["prepare_model"] == "2" and jobs["conflictbank_train"] == "4"
    )  # tiny and the model it copies; paper.yaml's four ratios
    # the random model's job waits for the folder it copies
    block = next(b for b in plan.stdout.split("\n\n") if "output: resources/models/tiny" in b)
    assert "input: resources/models/smollm2-135m-instruct" in block


@pytest.mark.slow
def test_prepare_model_builds_the_random_model_from_the_prepared_folder(tmp_path, smollm2_dir):
    wd = with_models(scale_workdir(tmp_path, Fraction(1, 64)), {"smollm2-135m-instruct": smollm2_dir})
    run = scale_snakemake(wd, "--cores", "1", "resources/models/tiny")
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = read_manifest(wd / "resources" / "models" / "tiny")
    assert (manifest["num_hidden_layers"], manifest["hidden_size"]) == (6, 64)  # config/scale.yaml's shape
    assert manifest["architecture"] == read_manifest(smollm2_dir)["architecture"]
    assert (wd / "resources" / "models" / "tiny" / "tokenizer.json").read_text() == (
        smollm2_dir / "tokenizer.json"
    ).read_text()


def test_report_sums_jobs_and_flags_a_rule_growing_faster_than_its_work(tmp_path, capsys):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for f, seconds in ((Fraction(1, 64), 1.0), (Fraction(1, 16), 4.0), (Fraction(1, 4), 16.0)):
        wd = scale.workdir(tmp_path, f)
        bench = wd / "results" / "benchmarks"
        (bench / "linear").mkdir(parents=True)
        for job in ("a", "b"):  # two jobs of one rule: seconds add up, RSS is the larger
            (bench / "linear" / f"{job}.tsv").write_text(
                header + f"9\t0\t{100 if job == 'a' else 300}\t0\t0\t0\t0\t0\t0\t{seconds / 2}\n"
            )
        (bench / "quadratic.tsv").write_text(
            header + f"{2 * seconds * seconds}\t0\t50\t0\t0\t0\t0\t0\t0\t{seconds * seconds}\n"
        )
        # quadratic in CPU seconds alone (a sampled record), linear in wall seconds: not flagged
        (bench / "sampled.tsv").write_text(header + f"{2 * seconds}\t0\t50\t0\t0\t0\t0\t0\t0\t{seconds * seconds}\n")
        (wd / "run.json").write_text(json.dumps({"fraction": str(f), "wall_s": 1, "returncode": 0, "peak_rss_mb": 1}))
    rows = {row["rule"]: row for row in scale.report(type("A", (), {"base": str(tmp_path)}))}
    assert (
        rows["linear"]["cpu"][Fraction(1, 4)] == pytest.approx(16.0) and rows["linear"]["seconds"][Fraction(1, 4)] == 18
    )
    assert rows["linear"]["rss"][Fraction(1, 4)] == 300
    assert rows["linear"]["b_all"] == pytest.approx(1.0) and not rows["linear"]["flag"]
    assert rows["quadratic"]["b_last"] == pytest.approx(2.0) and rows["quadratic"]["b_wall"] == pytest.approx(2.0)
    assert rows["quadratic"]["flag"] == "superlinear"
    assert (
        rows["sampled"]["b_last"] == pytest.approx(2.0)
        and rows["sampled"]["b_wall"] == pytest.approx(1.0)
        and not rows["sampled"]["flag"]
    )
    assert "| quadratic |" in capsys.readouterr().out


def test_a_jobs_logged_usage_is_its_exact_cpu_time_and_report_prefers_it_to_the_sampled_record(tmp_path):
    """Snakemake samples CPU time (a 38 s job recorded 15.0 s); the scripts log theirs at exit."""
    import subprocess

    log = tmp_path / "job.log"
    child = (
        f"import time; from conflictlab.logs import configure_logging; configure_logging({str(log)!r}, 'job')\n"
        "end = time.process_time() + 0.4\n"
        "while time.process_time() < end: pass\n"
        "print(time.process_time())"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env={**OFFLINE, "PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 0, done.stderr
    from conflictlab.logs import JobUsage

    usage = JobUsage.parse(log.read_text())
    used = float(done.stdout.split()[-1])  # the child's own CPU seconds just before exit
    assert used >= 0.4 and used - 0.005 <= usage.cpu_s <= used + 0.2 and usage.peak_rss_mb > 10  # logged to 0.01 s
    # report's reader takes the log's seconds over the benchmark record's sampled ones
    wd = tmp_path / "wd"
    (wd / "results" / "benchmarks" / "rule").mkdir(parents=True)
    (wd / "results" / "logs" / "rule").mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for job, logged in (("a", True), ("b", False)):
        (wd / "results" / "benchmarks" / "rule" / f"{job}.tsv").write_text(
            header + "38.4\t0\t100\t0\t0\t0\t0\t0\t0\t15.0\n"
        )
        if logged:
            (wd / "results" / "logs" / "rule" / f"{job}.log").write_text(
                "x INFO job: done\n" + JobUsage(37.5, 90).format() + "\n"
            )
    entry = scale.read_benchmarks(wd)["rule"]
    assert entry["cpu"] == pytest.approx(37.5 + 15.0) and entry["exact"] == 1 and entry["jobs"] == 2
    assert entry["rss"] == 100  # the logged peak (the records say 100 MB too, for the unlogged job)

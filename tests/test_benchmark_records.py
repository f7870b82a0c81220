"""The workflow's benchmark records sample a job every 5 s (rules/benchmark_records.smk)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

BUSY_SECONDS = 3


def test_snakemake_reads_the_sampling_interval_at_every_sample():
    """The rule file sets a module global after Snakemake has imported it;
    that works only while the timer looks the global up when it schedules."""
    import snakemake.benchmark

    assert hasattr(snakemake.benchmark, "BENCHMARK_INTERVAL_SHORT")
    assert "BENCHMARK_INTERVAL_SHORT" in snakemake.benchmark.ScheduledPeriodicTimer._schedule.__code__.co_names


@pytest.mark.parametrize("included", [True, False], ids=["with the rule file", "snakemake's default"])
def test_a_job_shorter_than_the_interval_is_sampled_at_its_start_only(tmp_path, included):
    """A job busy for 3 s: sampled every 0.5 s, its record counts its CPU
    seconds; sampled every 5 s, only the sample at its start (no CPU yet)."""
    assert 'include: "rules/benchmark_records.smk"' in (REPO / "Snakefile").read_text()
    include = f'include: "{REPO / "rules" / "benchmark_records.smk"}"\n\n' if included else ""
    busy = f"import time; end = time.process_time() + {BUSY_SECONDS}\nwhile time.process_time() < end: pass"
    (tmp_path / "busy.py").write_text(busy)
    (tmp_path / "Snakefile").write_text(
        include + 'rule busy:\n    output: "done"\n    benchmark: "busy.tsv"\n'
        f'    shell: "{sys.executable} busy.py && touch {{output}}"\n'
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--workflow-profile", "none"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    header, values = (tmp_path / "busy.tsv").read_text().splitlines()[:2]
    record = dict(zip(header.split("\t"), values.split("\t")))
    assert float(record["s"]) >= BUSY_SECONDS
    if included:
        assert float(record["cpu_time"]) < 1, record
    else:
        assert float(record["cpu_time"]) > BUSY_SECONDS / 2, record

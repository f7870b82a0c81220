"""How a job script ends (:func:`conflictlab.logs.configure_logging`): its usage
line always, and the interpreter's teardown skipped only where the script was
run by Snakemake and ended well, so that no exit status or output is lost."""

import subprocess
import sys
from pathlib import Path

import pytest

from conflictlab.logs import JobUsage

REPO = Path(__file__).resolve().parent.parent

# Registered before configure_logging, so it runs after the job's own exit
# handler: the marker exists only where the interpreter exited as usual.
SCRIPT = """
import atexit, pathlib, subprocess, sys
marker = pathlib.Path(sys.argv[1]) / "torn-down"
atexit.register(marker.write_text, "yes")
{snakemake}
from conflictlab.logs import configure_logging
log = configure_logging(str(pathlib.Path(sys.argv[1]) / "job.log"), "job")
with open(pathlib.Path(sys.argv[1]) / "out.txt", "w") as out:
    out.write("written")
{ending}
"""
AS_SNAKEMAKE_JOB = "snakemake = object()  # what Snakemake's script preamble defines"


def run_script(folder: Path, ending: str, *, snakemake: str = AS_SNAKEMAKE_JOB) -> subprocess.CompletedProcess:
    folder.mkdir()
    script = folder / "job.py"
    script.write_text(SCRIPT.format(snakemake=snakemake, ending=ending))
    return subprocess.run(
        [sys.executable, str(script), str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(
    ("ending", "status", "torn_down"),
    [
        ("", 0, False),  # the end of the script: leaves at once
        ("sys.exit(0)", 0, False),
        ("sys.exit(3)", 3, True),
        ("sys.exit('bad input: data/x.parquet')", 1, True),
        ("raise ValueError('field gold of data/x.parquet is empty')", 1, True),
        ("child = subprocess.Popen(['sleep', '5'])", 0, True),  # a child still running: the usual exit
    ],
)
def test_a_snakemake_job_leaves_early_only_when_it_ends_well(tmp_path, ending, status, torn_down):
    done = run_script(tmp_path / "job", ending)
    assert done.returncode == status, done.stderr
    assert (tmp_path / "job" / "torn-down").exists() == torn_down
    assert (tmp_path / "job" / "out.txt").read_text() == "written"
    log = (tmp_path / "job" / "job.log").read_text()
    assert JobUsage.parse(log) is not None  # the usage line is logged on every ending
    if status == 1:
        assert "failed: ValueError" in log or "bad input" in done.stderr


def test_a_script_not_run_by_snakemake_exits_as_usual(tmp_path):
    done = run_script(tmp_path / "job", "", snakemake="")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "job" / "torn-down").read_text() == "yes"
    assert JobUsage.parse((tmp_path / "job" / "job.log").read_text()) is not None

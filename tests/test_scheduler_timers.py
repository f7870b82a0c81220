import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from conflictlab.scheduler_timers import cancel_pending_timers

REPO = Path(__file__).resolve().parents[1]


class JobScheduler:
    """Stands in for Snakemake's scheduler: its timers run a function defined in it."""

    @staticmethod
    def release():
        pass


def test_cancelling_ends_the_schedulers_pending_timers_and_no_other():
    fired = threading.Event()
    scheduler_timer, other_timer = threading.Timer(600, JobScheduler.release), threading.Timer(600, fired.set)
    scheduler_timer.start()
    other_timer.start()
    try:
        assert cancel_pending_timers() == 1
        scheduler_timer.join(5)
        assert not scheduler_timer.is_alive() and other_timer.is_alive()
    finally:
        other_timer.cancel()
    assert not fired.is_set()


def test_a_fired_timer_is_not_counted():
    timer = threading.Timer(0, JobScheduler.release)
    timer.start()
    timer.join(5)
    assert cancel_pending_timers() == 0


def test_a_run_under_the_profile_exits_without_waiting_for_its_rate_timers(tmp_path):
    """The profile's one-minute job-rate window arms one-minute timers; the
    workflow's end-of-run hook (rules/hooks.smk, which the Snakefile includes)
    lets the process exit at once instead of a minute after its last job."""
    assert 'include: "rules/hooks.smk"' in (REPO / "Snakefile").read_text()
    (tmp_path / "Snakefile").write_text(
        f'include: "{REPO / "rules" / "hooks.smk"}"\n\n'
        'rule all:\n    input: expand("done/{i}", i=range(4))\n\n'
        'rule touch:\n    output: "done/{i}"\n    shell: "touch {output}"\n'
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--workflow-profile", str(REPO / "profiles" / "default")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-2000:]
    rate = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())["max-jobs-per-timespan"]
    assert rate.endswith("/1m"), rate  # the window whose timers the hook must not wait for
    assert len(list((tmp_path / "done").iterdir())) == 4
    # Without the hook the process lives until its last timer fires, 60 s after the last job started.
    assert elapsed < 45, f"the run took {elapsed:.0f} s: it waited for its scheduler's timers"

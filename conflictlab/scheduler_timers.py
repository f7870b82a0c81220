"""Snakemake's pending scheduler timers, cancelled when a run ends.

Under a job-rate limit Snakemake's scheduler arms a ``threading.Timer`` of
the limit's timespan after every pass (to re-check once the window has
passed). Timers are not daemon threads, so a finished run's process waits
for the last one before it exits: up to a minute under this workflow's
profile (profiles/default/config.yaml). The scheduler has stopped when the
run's ``onsuccess`` or ``onerror`` handler runs (rules/hooks.smk), so
nothing is left for its timers to do. A run with ``--no-hooks``, or one
whose scheduler raised, still waits for them.
"""

from __future__ import annotations

import threading

# Where Snakemake (9.x) defines the function its re-evaluation timers run;
# tests/test_scheduler_timers.py runs a real Snakemake and fails if this no longer matches.
SCHEDULER_TIMER_OWNER = "JobScheduler."


def cancel_pending_timers(owner: str = SCHEDULER_TIMER_OWNER) -> int:
    """Cancel this process's ``threading.Timer`` threads that have not fired
    and whose function was defined in ``owner`` (a qualified-name prefix);
    returns how many. A cancelled timer's thread ends at once."""
    pending = [
        thread
        for thread in threading.enumerate()
        if isinstance(thread, threading.Timer)
        and not thread.finished.is_set()
        and getattr(thread.function, "__qualname__", "").startswith(owner)
    ]
    for timer in pending:
        timer.cancel()
    return len(pending)

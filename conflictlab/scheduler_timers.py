"""Snakemake's pending scheduler timers, cancelled when a run ends.

Under a job-rate limit Snakemake's scheduler arms a ``threading.Timer`` of
the limit's timespan after every pass (to re-check once the window has
passed). Timers are not daemon threads, so a finished run's process waits
for the last one before it exits: up to a minute under this workflow's
profile (profiles/default/config.yaml). The scheduler has stopped when the
run's ``onsuccess`` or ``onerror`` handler runs (rules/hooks.smk), so
nothing is left for the timers to do.
"""

from __future__ import annotations

import threading


def cancel_pending_timers() -> int:
    """Cancel every ``threading.Timer`` of this process that has not fired;
    returns how many were cancelled. A cancelled timer's thread ends at once."""
    pending = [
        thread
        for thread in threading.enumerate()
        if isinstance(thread, threading.Timer) and not thread.finished.is_set()
    ]
    for timer in pending:
        timer.cancel()
    return len(pending)

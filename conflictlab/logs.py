"""Logging set-up shared by the workflow scripts."""

from __future__ import annotations

import atexit
import logging
import os
import re
import resource
import sys
from dataclasses import dataclass
from pathlib import Path


def configure_logging(log_path: str | os.PathLike | None, name: str) -> logging.Logger:
    """Log to ``log_path`` (overwritten) and to stderr, with timestamps.

    An exception that ends the script is logged too (message and traceback),
    so a failed job's own log says why it failed: on a cluster that log is
    often all a user sees.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    # httpx logs every request at INFO: one line per endpoint request would
    # bury the job's own lines (conflictlab.lm.endpoint logs retries itself).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logger = logging.getLogger(name)
    sys.excepthook = _logging_excepthook(logger)
    # Where a job's CPU went before its own work began (benchmarks/default_run.py reads it).
    logger.info(STARTUP_FORMAT, process_cpu_seconds())
    sys.exit = _recording_exit
    atexit.register(_end_job, logger)
    return logger


class _Outcome:
    """How the script is ending, as far as :func:`_end_job` can tell: an
    uncaught exception (the excepthook saw it) or ``sys.exit`` with a status."""

    failed = False
    exit_status = None


def _recording_exit(status=None):
    _Outcome.exit_status = status
    raise SystemExit(status)


def _end_job(logger: logging.Logger) -> None:
    """Log the job's usage line; then, in a Snakemake job script that ends
    well, leave at once.

    The interpreter's own exit tears down every module and frees every
    object one by one: 1.0-1.3 CPU s in a process that imported torch and
    transformers, against 0.06-0.14 s leaving early (AMD EPYC Zen 3,
    ``python benchmarks/job_exit.py``), for nothing: the kernel takes the
    memory back anyway. Only a script run by
    Snakemake's ``script:`` directive (its ``__main__`` holds ``snakemake``)
    leaves early, and only when it raised nothing, called ``sys.exit`` with
    no error status and has no child processes left (an engine's workers
    are shut down by their own exit handlers); the log handlers and standard
    streams are flushed first. Every other ending exits as usual, with its status.
    """
    logger.info(JobUsage.measure().format())
    ends_well = not _Outcome.failed and _Outcome.exit_status in (None, 0)
    if ends_well and hasattr(sys.modules.get("__main__"), "snakemake") and not _child_processes():
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _child_processes() -> bool:
    """Whether this process has children (True where there is no Linux /proc to ask)."""
    me = os.getpid()
    if not Path(f"/proc/{me}/stat").exists():
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after its last ")".
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == me:
                return True
        except (OSError, IndexError, ValueError):
            continue  # a process that ended while being read
    return False


STARTUP_FORMAT = "start-up: %.2f CPU s (interpreter, the script's imports)"
STARTUP_PATTERN = re.compile(r"start-up: ([0-9.]+) CPU s")


def process_cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (its phase timings in the logs)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


@dataclass(frozen=True)
class JobUsage:
    """What a job's script used, logged as its last line: exact CPU seconds,
    where Snakemake's benchmark record samples them (every 5 s in this
    workflow, rules/benchmark_records.smk) and so misses up to 5 s of a job's
    end (benchmarks/scale.py reads this line instead)."""

    cpu_s: float  # user + system, this process and the children it waited for
    peak_rss_mb: float  # this process's high-water mark

    PATTERN = re.compile(r"job usage: ([0-9.]+) CPU s, peak RSS ([0-9.]+) MB")

    @classmethod
    def measure(cls) -> JobUsage:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
        return cls(cpu_s=cpu, peak_rss_mb=own.ru_maxrss / 1024)  # Linux reports kilobytes

    def format(self) -> str:
        return f"job usage: {self.cpu_s:.2f} CPU s, peak RSS {self.peak_rss_mb:.0f} MB"

    @classmethod
    def parse(cls, log_text: str) -> JobUsage | None:
        """The last usage line of a job's log text, or None where there is none."""
        found = cls.PATTERN.findall(log_text)
        return cls(cpu_s=float(found[-1][0]), peak_rss_mb=float(found[-1][1])) if found else None


def _logging_excepthook(logger: logging.Logger):
    def log_uncaught(kind, value, traceback):
        _Outcome.failed = True
        # The handlers print the traceback to stderr as well, so the default
        # hook is not called again; the interpreter still exits with status 1.
        logger.critical("failed: %s: %s", kind.__name__, value, exc_info=(kind, value, traceback))

    return log_uncaught


def value_counts(column) -> dict:
    """``{value: count}`` of a pyarrow (chunked) array, values sorted: a
    compact summary for a log line, counted by pyarrow rather than row by row."""
    counts = column.value_counts()
    return dict(sorted(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist())))

"""Logging set-up shared by the workflow scripts."""

from __future__ import annotations

import logging
import os
import sys
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
    return logger


def _logging_excepthook(logger: logging.Logger):
    def log_uncaught(kind, value, traceback):
        # The handlers print the traceback to stderr as well, so the default
        # hook is not called again; the interpreter still exits with status 1.
        logger.critical("failed: %s: %s", kind.__name__, value, exc_info=(kind, value, traceback))

    return log_uncaught


def value_counts(column) -> dict:
    """``{value: count}`` of a pyarrow (chunked) array, values sorted: a
    compact summary for a log line, counted by pyarrow rather than row by row."""
    counts = column.value_counts()
    return dict(sorted(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist())))

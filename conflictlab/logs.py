"""Logging set-up shared by the workflow scripts."""

from __future__ import annotations

import logging
import os
from pathlib import Path


def configure_logging(log_path: str | os.PathLike | None, name: str) -> logging.Logger:
    """Log to ``log_path`` (overwritten) and to stderr, with timestamps."""
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
    return logging.getLogger(name)

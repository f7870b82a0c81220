"""Figures: one figure per file, written as PNG and PDF, labelled axes, and a
chance line wherever there is one."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from conflictlab.io import atomic_path  # noqa: E402


def panel_grid(n: int, *, width: float = 3.4, height: float = 3.0, ncols: int = 3, sharey: bool = True):
    """A figure with ``n`` panels in rows of at most ``ncols``; unused axes hidden."""
    cols = max(1, min(n, ncols))
    rows = max(1, -(-n // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False, sharey=sharey)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def save(fig, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem``.png and ``stem``.pdf atomically; close the figure.
    The PDF carries no creation date, so the same figure gives the same bytes."""
    paths = []
    for suffix, metadata in ((".png", None), (".pdf", {"CreationDate": None})):
        path = Path(f"{stem}{suffix}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix[1:], dpi=150, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    plt.close(fig)
    return paths

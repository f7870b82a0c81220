"""Where the tests find each paper's text copy (``../shared/papers/``, not in the repository): the papers are
cited by public identifier in their data files (conflictlab/papers/*.yaml); these copies are what the rows were
typed in from, and the tests that check a printed value against its copy skip where the copy is absent."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import REPO

# The copy of each report paper; MemoTrap's and NQ-Swap's rows are CAD's Table 3 (AdaCAD's have no copy).
TEXT_COPIES = {
    "contextconflict": "000_9b6c6cf2b7e20b09.txt",
    "conflicts": "001_71e550573678e68d.txt",
    "arbitration": "002_a00f01670af5d3e1.txt",
    "conflictbank": "003_f1d9f2914a4daca0.txt",
    "memotrap": "cad_table3.md",
    "nq_swap": "cad_table3.md",
}
# ../shared beside the main checkout, ../../shared beside a worktree in a sibling folder of it, or $CONFLICTLAB_SHARED
FOLDERS = [
    Path(os.environ["CONFLICTLAB_SHARED"]) / "papers" if "CONFLICTLAB_SHARED" in os.environ else None,
    REPO.parent / "shared" / "papers",
    REPO.parent.parent / "shared" / "papers",
]


def text_copy(paper: str) -> Path | None:
    """The text copy of report paper ``paper``, None where this machine has none."""
    name = TEXT_COPIES[paper]
    return next((folder / name for folder in FOLDERS if folder is not None and (folder / name).is_file()), None)

"""MemoTrap's cells of a model's profile page (conflictlab.report.profile)."""

from __future__ import annotations

from collections.abc import Sequence

from conflictlab.lm.methods import GREEDY
from conflictlab.report.profile import profile_cell

NAME = "memotrap"


def cells(accuracy=None, *, models: Sequence[str]) -> list[dict]:
    """From ``memotrap_accuracy`` rows (dicts; None where the table is not made), per model: greedy accuracy over
    all files and per file (section ``accuracy``), and each method's accuracy over all files with its paired
    difference from greedy reading (section ``methods``, n = the paired prompts)."""
    rows = [r for r in (accuracy or []) if r["model"] in models]
    out = []
    for r in rows:
        model, method, file = r["model"], r["method"], r["file"]
        if method == GREEDY:
            label = "accuracy, all files" if file == "all" else f"accuracy, {file}"
            out.append(
                profile_cell(
                    NAME, "accuracy", f"accuracy/{file}", label, model, r["accuracy"], r["ci_low"], r["ci_high"], r["n"]
                )
            )
        elif file == "all":
            out.append(
                profile_cell(
                    NAME,
                    "methods",
                    f"methods/{method}",
                    f"{method}: accuracy, all files",
                    model,
                    r["accuracy"],
                    r["ci_low"],
                    r["ci_high"],
                    r["n"],
                )
            )
            out.append(
                profile_cell(
                    NAME,
                    "methods",
                    f"methods/{method}/difference",
                    f"{method} - greedy (paired)",
                    model,
                    r["difference"],
                    r["difference_low"],
                    r["difference_high"],
                    r["n_pairs"],
                )
            )
    return out

"""NQ-Swap's numbers on a model's profile page (the descriptor's ``profile_cells``)."""

from __future__ import annotations

from collections.abc import Sequence

from conflictlab.lm.methods import GREEDY
from conflictlab.nq_swap.report import BENCHMARK, EM_ORG, EM_SUB, MR
from conflictlab.nq_swap.runs import CLOSED_BOOK, ORIGINAL
from conflictlab.report.profile import profile_cell

NAME = "nq_swap"
KEYS = {EM_SUB: "em_sub", EM_ORG: "em_org", MR: "mr"}
LABELS = {
    EM_SUB: "exact match, substituted answer",
    EM_ORG: "exact match, original answer",
    MR: "memorisation ratio",
}
SETTING_LABELS = {CLOSED_BOOK: "closed-book", ORIGINAL: "original context", GREEDY: "substituted context"}


def cells(rows: Sequence[dict] | None, *, models: Sequence[str]) -> list[dict]:
    """Profile cells from the rows of ``results/tables/nq_swap.csv`` (None: not made): per model, every metric of
    the three settings (section ``settings``) and of each method on the substituted context (``methods``); keys
    ``<metric>/<run>`` (``em_sub/greedy``, ``mr/adacad``), n as the table gives it (MR: the matching items)."""
    out = []
    for row in rows or ():
        if row["model"] not in models or row["benchmark"] != BENCHMARK or row["metric"] not in KEYS:
            continue
        run = row["method"]
        section = "settings" if run in SETTING_LABELS else "methods"
        out.append(
            profile_cell(
                NAME,
                section,
                f"{KEYS[row['metric']]}/{run}",
                f"{LABELS[row['metric']]}, {SETTING_LABELS.get(run, run)}",
                row["model"],
                row["value"],
                row["ci_low"],
                row["ci_high"],
                row["n"],
            )
        )
    return out

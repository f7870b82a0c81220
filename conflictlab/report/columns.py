"""Which column of a result table holds the sample size of another.

Below both :mod:`conflictlab.report.tables` (which prints n beside an
interval) and :mod:`conflictlab.report.audit` (which checks every interval's
n), so that neither imports the other both ways.
"""

from __future__ import annotations

DENOMINATORS = {
    "n",
    "n_items",
    "n_scored",
    "n_samples",
    "n_pairs",
    "n_records",
    "n_judged",
    "n_shapley",
    "n_behaviour",
    "n_recall",
    "n_grounding",
}


def _is_n(column: str) -> bool:
    return column in DENOMINATORS or column.startswith("n[")


def n_column(columns: list[str], value: str, low: str) -> str | None:
    """The column holding the sample size of ``value`` (interval ``low``)."""
    stem = low[: -len("_ci_low")] if low.endswith("_ci_low") else low[: -len("_low")]
    for name in (f"n_{value}", f"{stem}_n", f"n_{stem}"):
        if stem and name in columns:
            return name
    # n_recall for answer_recall, n_behaviour for expected_behaviour: the longest match
    suffixes = [
        c
        for c in columns
        if c.startswith("n_")
        and value.endswith(c[2:])
        and value[: -len(c[2:])] in ("", *(f"{p}_" for p in value.split("_")))
    ]
    if suffixes:
        return max(suffixes, key=len)
    left = [c for c in columns[: columns.index(value)] if _is_n(c)]
    right = [c for c in columns[columns.index(value) :] if _is_n(c)]
    return left[-1] if left else right[0] if right else None

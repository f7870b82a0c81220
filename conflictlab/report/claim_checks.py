"""What the papers' claim checks share (:attr:`conflictlab.report.reproduction.Claim.check`).

A check reads this run's result tables (``ClaimContext.tables``: ``{CSV
stem: rows}``); whatever it needs and this run lacks (a table, a column, a
model, a row, a value, or an n too small for any statement) raises
:class:`Missing`, which :func:`checked` turns into ``not comparable`` with
the missing name, never an exception.
"""

from __future__ import annotations

import math
from functools import wraps
from typing import Callable, Iterable, Mapping, Sequence

from conflictlab.report.reproduction import CLAIM_STATUSES, FAILS, HOLDS, ClaimCheck, ClaimContext
from conflictlab.stats import MIN_N_INTERVAL

NOT_COMPARABLE = CLAIM_STATUSES[2]


class Missing(Exception):
    """What a check needs and this run lacks; the message names it."""


def checked(check: Callable[[ClaimContext], ClaimCheck]) -> Callable[[ClaimContext], ClaimCheck]:
    """``check`` with a :class:`Missing` raised inside it returned as ``not comparable``."""

    @wraps(check)
    def run(ctx: ClaimContext) -> ClaimCheck:
        try:
            return check(ctx)
        except Missing as missing:
            return ClaimCheck(NOT_COMPARABLE, why=str(missing))

    return run


def number(value) -> float | None:
    """A cell as a float; None for an empty, missing or NaN cell."""
    if value is None or value == "":
        return None
    value = float(value)
    return None if math.isnan(value) else value


def table(ctx: ClaimContext, stem: str) -> Sequence[Mapping]:
    """The rows of ``results/tables/{stem}.csv``."""
    rows = ctx.tables.get(stem)
    if rows is None:
        raise Missing(f"results/tables/{stem}.csv is not made in this run")
    return rows


def present(ctx: ClaimContext, paper_names: Iterable[str], model_list: str, *, at_least: int = 1) -> dict[str, str]:
    """``{paper's name: this run's model}`` for those of ``paper_names`` in
    config list ``model_list``, in the paper's order; fewer than ``at_least``
    is :class:`Missing`."""
    names = list(paper_names)
    found = {name: ctx.model(name, model_list) for name in names}
    found = {name: ours for name, ours in found.items() if ours is not None}
    if len(found) < at_least:
        raise Missing(f"{len(found)} of the paper's models {', '.join(names)} in {model_list} (this run: "
                      f"{', '.join(ctx.model_lists.get(model_list, ())) or 'none'}); the claim needs {at_least}")
    return found


def cell(ctx: ClaimContext, stem: str, column: str, *, n_column: str = "n", scale: float = 1.0, **where) -> float:
    """``scale`` times ``column`` of the one row of ``results/tables/{stem}.csv``
    matching ``where`` (column = value, compared as text), whose ``n_column``
    is at least :data:`~conflictlab.stats.MIN_N_INTERVAL`."""
    rows = table(ctx, stem)
    label = f"results/tables/{stem}.csv (" + ", ".join(f"{k} = {v}" for k, v in where.items()) + ")"
    for name in (*where, column, n_column):
        if rows and name not in rows[0]:
            raise Missing(f"results/tables/{stem}.csv has no column {name}")
    matching = [r for r in rows if all(str(r.get(k)) == str(v) for k, v in where.items())]
    if len(matching) != 1:
        raise Missing(f"{len(matching)} rows of {label}, not one")
    n, value = number(matching[0][n_column]), number(matching[0][column])
    if n is None or n < MIN_N_INTERVAL:
        raise Missing(f"{n_column} = {n} < {MIN_N_INTERVAL} in {label}")
    if value is None:
        raise Missing(f"no value of {column} in {label}")
    return scale * value


def outcome(holds: bool, numbers: Mapping[str, float | int | str | None], fails_because: str) -> ClaimCheck:
    """``holds`` or ``fails`` (with ``fails_because``), with the numbers used, rounded to 3 decimals."""
    shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in numbers.items()}
    return ClaimCheck(HOLDS, shown) if holds else ClaimCheck(FAILS, shown, fails_because)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)

"""Checks of the ``nq_swap`` config section that the schema cannot make, run before any job (rules/nq_swap.smk)."""

from __future__ import annotations

from collections.abc import Mapping

from conflictlab.lm.methods import GREEDY, as_method


def check_section(section: Mapping) -> None:
    """ValueError naming the key: a method that is not spelled as one or is ``greedy`` (the baseline, always run).
    A hosted model in ``nq_swap.models`` is refused with the other capability checks
    (:func:`conflictlab.run_config.capability_problems`, from the descriptor's ``needs``)."""
    for method in section["methods"]:
        try:
            parsed = as_method(method)
        except ValueError as error:
            raise ValueError(f"config nq_swap.methods: {error}") from None
        if parsed.format() == GREEDY:
            raise ValueError("config nq_swap.methods: greedy is the baseline and always runs; leave it out")

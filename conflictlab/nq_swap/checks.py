"""Checks of the ``nq_swap`` config section that the schema cannot make, run before any job (rules/nq_swap.smk)."""

from __future__ import annotations

from collections.abc import Mapping

from conflictlab.lm.methods import GREEDY, as_method


def _parsed(key: str, method: str):
    try:
        return as_method(method)
    except ValueError as error:
        raise ValueError(f"config nq_swap.{key}: {error}") from None


def check_section(section: Mapping) -> None:
    """ValueError naming the key: a method that is not spelled as one or is ``greedy`` (the baseline, always run);
    an original-context method that is not contrastive (greedy reading of the original context always runs).
    A hosted model in ``nq_swap.models`` is refused with the other capability checks
    (:func:`conflictlab.run_config.capability_problems`, from the descriptor's ``needs``)."""
    for method in section["methods"]:
        if _parsed("methods", method).format() == GREEDY:
            raise ValueError("config nq_swap.methods: greedy is the baseline and always runs; leave it out")
    for method in section.get("original_methods", ()):
        if not _parsed("original_methods", method).contrastive:
            raise ValueError(
                f"config nq_swap.original_methods: {method} is not contrastive (CAD, AdaCAD); greedy reading of the "
                "original context always runs (run original)"
            )

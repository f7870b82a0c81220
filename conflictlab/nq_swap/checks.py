"""Checks of the ``nq_swap`` config section that the schema cannot make, run before any job (rules/nq_swap.smk)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from conflictlab.lm.methods import GREEDY, as_method, check_method_backend

# NQ-Swap's answering job runs transformers: CAD's second pass and the steering hooks need the model in process.
BACKEND = "hf"


def check_section(section: Mapping, is_hosted: Callable[[str], bool]) -> None:
    """ValueError naming the key: a method that is not spelled as one or is ``greedy`` (the baseline, always run),
    a method the hf backend cannot run, or a hosted model in ``nq_swap.models`` (its endpoint gives no logits
    and no activations)."""
    for method in section["methods"]:
        try:
            parsed = check_method_backend(as_method(method), BACKEND)
        except ValueError as error:
            raise ValueError(f"config nq_swap.methods: {error}") from None
        if parsed.format() == GREEDY:
            raise ValueError("config nq_swap.methods: greedy is the baseline and always runs; leave it out")
    hosted = [name for name in section["models"] if is_hosted(name)]
    if hosted:
        raise ValueError(
            f"config nq_swap.models: {', '.join(hosted)} hosted; NQ-Swap's methods and steering need the weights "
            "of a local model"
        )

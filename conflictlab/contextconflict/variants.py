"""Steering variants, steered and method reruns: how they are spelled in file names.

A steered rerun is the pseudo-model ``name@variant`` (its responses live in
``results/responses/name@variant/``), so that the accuracy, Shapley and
attribution rules score it unchanged. A variant is ``base`` (no steering, the
same decoding as the steered runs) or ``<method>-a<alpha>``. Both values are
spelled and read here only (:mod:`conflictlab.wildcards`). A
conflict-resolution method's rerun is likewise ``name@method``
(:class:`conflictlab.lm.methods.MethodRun`, spelled in the model layer because every benchmark names its method runs
so).

The strength ``alpha`` is any finite positive float, spelled by
:func:`conflictlab.wildcards.format_alpha` (0.5 -> ``0.5``, 1.0 -> ``1``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

from conflictlab.lm.methods import Method, MethodRun
from conflictlab.wildcards import ALPHA_PATTERN, MODEL_NAME_PATTERN, format_alpha, spelled

METHODS = ("all_tokens", "first_generated", "cas")
BASE = "base"


@dataclass(frozen=True)
class SteeringVariant:
    """``base`` or a steering method at strength ``alpha`` (> 0, finite)."""

    method: str
    alpha: float = 0.0

    PATTERN: ClassVar[str] = rf"{BASE}|(?:{'|'.join(METHODS)})-a(?:{ALPHA_PATTERN})"

    def __post_init__(self):
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise ValueError(f"steering variant {self.method!r}: alpha must be a number, got {alpha!r}")
        alpha = float(alpha)
        if self.method == BASE:
            if alpha != 0.0:
                raise ValueError(f"steering variant base takes no alpha, got {alpha!r}")
            alpha = 0.0
        elif self.method in METHODS:
            if not (math.isfinite(alpha) and alpha > 0.0):
                raise ValueError(f"steering variant {self.method}: alpha must be finite and > 0, got {alpha!r}")
        else:
            raise ValueError(f"not a steering method: {self.method!r} (one of {BASE}, {', '.join(METHODS)})")
        object.__setattr__(self, "alpha", alpha)

    @property
    def steered(self) -> bool:
        return self.method != BASE

    def format(self) -> str:
        return BASE if self.method == BASE else f"{self.method}-a{format_alpha(self.alpha)}"

    @classmethod
    def parse(cls, text: str) -> SteeringVariant:
        spelled(
            cls.PATTERN, text, "steering variant", f"{BASE} or <method>-a<alpha>, method one of {', '.join(METHODS)}"
        )
        if text == BASE:
            return cls(BASE)
        method, alpha = text.split("-a", 1)
        try:
            variant = cls(method, float(alpha))
        except ValueError as error:
            raise ValueError(f"not a steering variant: {text!r} ({error})") from None
        if variant.format() != text:  # e.g. all_tokens-a1.50 or cas-a0: one value, one name
            raise ValueError(
                f"not a steering variant: {text!r} (alpha {alpha!r} is spelled {format_alpha(float(alpha))!r})"
            )
        return variant


def as_variant(variant: SteeringVariant | str) -> SteeringVariant:
    return variant if isinstance(variant, SteeringVariant) else SteeringVariant.parse(variant)


@dataclass(frozen=True)
class SteeredModel:
    """The pseudo-model ``model@variant`` of a steered rerun.

    ``model`` is a registry model's name; in a rule's path template it may be
    the wildcard ``{model}`` (it must not hold ``@`` or ``/``), which
    :meth:`format` writes as it is and :meth:`parse` never returns.
    """

    model: str
    variant: SteeringVariant

    SEPARATOR: ClassVar[str] = "@"
    PATTERN: ClassVar[str] = rf"(?:{MODEL_NAME_PATTERN})@(?:{SteeringVariant.PATTERN})"

    def __post_init__(self):
        if not isinstance(self.model, str) or not self.model or "@" in self.model or "/" in self.model:
            raise ValueError(f"not a model name for a steered rerun: {self.model!r}")
        object.__setattr__(self, "variant", as_variant(self.variant))

    def format(self) -> str:
        return f"{self.model}{self.SEPARATOR}{self.variant.format()}"

    @classmethod
    def parse(cls, text: str) -> SteeredModel:
        spelled(cls.PATTERN, text, "steered rerun", "<model>@<variant>")
        model, variant = text.split(cls.SEPARATOR, 1)
        return cls(model, SteeringVariant.parse(variant))

    @classmethod
    def parse_if_steered(cls, text: str) -> SteeredModel | None:
        """A responding model's name read as a steered rerun; None for a
        registry model (a name without ``@``) and for a method's rerun."""
        if not isinstance(text, str) or cls.SEPARATOR not in text or MethodRun.parse_if_method(text) is not None:
            return None
        return cls.parse(text)


def is_rerun(text: str) -> bool:
    """Whether a responding model's name is a steered or a method's rerun
    (both answer the steering test split)."""
    return SteeredModel.parse_if_steered(text) is not None or MethodRun.parse_if_method(text) is not None


# The ``model`` of a response folder: a registry model, or a steered or a
# method's rerun of one (the two variant patterns share no spelling).
RESPONDER_PATTERN = rf"{MODEL_NAME_PATTERN}(?:@(?:{SteeringVariant.PATTERN}|{Method.PATTERN}))?"

"""The default : conflicting mixture of a continued pre-training run.

Config and tables write a ratio ``2:3`` (:meth:`MixtureRatio.label`); file
names write it ``2-3`` (``results/conflictbank/trained/{model}/ratio-2-3``,
:meth:`MixtureRatio.format`), since ``:`` is not safe in every file system
and path. Both spellings are written and read here only
(:mod:`conflictlab.wildcards`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from conflictlab.wildcards import spelled

_PARTS = r"[1-9][0-9]*{sep}(?:0|[1-9][0-9]*)"


@dataclass(frozen=True)
class MixtureRatio:
    """Parts of default (>= 1) and of conflicting (>= 0) evidence text."""

    default: int
    conflicting: int

    PATTERN: ClassVar[str] = _PARTS.format(sep="-")
    LABEL_PATTERN: ClassVar[str] = _PARTS.format(sep=":")  # the schema's conflictbank.embedded.ratios

    def __post_init__(self):
        for part in (self.default, self.conflicting):
            if isinstance(part, bool) or not isinstance(part, int):
                raise ValueError(f"ratio {self.default!r}:{self.conflicting!r}: parts must be integers")
        if self.default < 1 or self.conflicting < 0:
            raise ValueError(
                f"ratio {self.default}:{self.conflicting}: the default part must be positive and the conflicting part "
                "non-negative"
            )

    def format(self) -> str:
        return f"{self.default}-{self.conflicting}"

    def label(self) -> str:
        return f"{self.default}:{self.conflicting}"

    def parts(self) -> tuple[int, int]:
        return self.default, self.conflicting

    @classmethod
    def parse(cls, text: str) -> MixtureRatio:
        """A ratio from its file-name spelling (``2-3``)."""
        return cls._read(text, cls.PATTERN, "-")

    @classmethod
    def from_label(cls, text: str) -> MixtureRatio:
        """A ratio from its config spelling (``2:3``)."""
        return cls._read(text, cls.LABEL_PATTERN, ":")

    @classmethod
    def _read(cls, text, pattern: str, sep: str) -> MixtureRatio:
        spelled(pattern, text, "ratio", f"'default{sep}conflicting', e.g. '2{sep}1', without leading zeros")
        default, conflicting = text.split(sep)
        try:
            return cls(int(default), int(conflicting))
        except ValueError as error:
            raise ValueError(f"not a ratio: {text!r} ({error})") from None

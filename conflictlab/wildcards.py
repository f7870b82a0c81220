"""Values that travel through file names: what their types share.

A value written into a path and read back from it has one small frozen type
in the package that owns the concept, with ``format() -> str`` (its file-name
spelling), ``parse(text)`` (the inverse: ``parse(x.format()) == x``; any other
text raises ValueError naming it) and ``PATTERN``, a regular expression that
every formatted value fully matches, from which the workflow's wildcard
constraints are made:

* :class:`conflictlab.contextconflict.variants.SteeringVariant` (``cas-a1``)
  and :class:`~conflictlab.contextconflict.variants.SteeredModel`
  (``smollm2@cas-a1``, a steered rerun's pseudo-model);
* :class:`conflictlab.conflictbank.ratio.MixtureRatio` (``ratio-2-3``);
* :class:`conflictlab.lm.methods.Method` (``cad-a0.5``, ``adacad``), a
  conflict-resolution method, and
  :class:`~conflictlab.contextconflict.variants.MethodRun` (``smollm2@adacad``,
  a method's rerun).

This module holds only what they share: the registry model's name and the
spelling of a strength (a steering or contrast ``alpha``), any finite float
written as the shortest text that reads back as the same float (``repr``)
without a trailing ``.0`` and without the ``+`` of a positive exponent:
0.5 -> ``0.5``, 1.0 -> ``1``, 2500.0 -> ``2500``, 1e-05 -> ``1e-05``, 1e16 ->
``1e16``. Values that ``{:g}`` writes exactly keep the name it gave them.
"""

from __future__ import annotations

import re

# A registry model's name (the keys of the config's ``models``; the schema
# spells the same pattern): it names folders, so no "/" and no "@".
MODEL_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"

# Every spelling format_alpha writes of a non-negative float: a plain decimal
# (no leading zeros, no trailing fractional zeros) or a mantissa and a signed
# or plain exponent.
ALPHA_PATTERN = r"(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?|[1-9](?:\.[0-9]*[1-9])?e-?[0-9]+"


def format_alpha(alpha: float) -> str:
    """The file-name spelling of a strength (see the module docstring)."""
    mantissa, e, exponent = repr(float(alpha)).partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    return mantissa + (e + exponent.lstrip("+") if e else "")


def spelled(pattern: str, text, what: str, expected: str) -> re.Match:
    """``text`` fully matched by ``pattern``, or ValueError naming ``text``."""
    match = re.fullmatch(pattern, text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a {what}: {text!r} (expected {expected})")
    return match

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
* :class:`conflictlab.conflictbank.ratio.MixtureRatio` (``ratio-2-3``).

This module holds only what they share.
"""

from __future__ import annotations

import re

# A registry model's name (the keys of the config's ``models``; the schema
# spells the same pattern): it names folders, so no "/" and no "@".
MODEL_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"


def spelled(pattern: str, text, what: str, expected: str) -> re.Match:
    """``text`` fully matched by ``pattern``, or ValueError naming ``text``."""
    match = re.fullmatch(pattern, text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a {what}: {text!r} (expected {expected})")
    return match

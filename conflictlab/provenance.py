"""Which library code a workflow script runs, for code hashes and environment checks.

:func:`import_closure` follows ``import`` statements (module level and inside
functions alike: a lazily imported module still runs) from a script through
every ``conflictlab`` module it reaches, statically (nothing is executed).
A rule's code hash (:func:`code_hash`) covers exactly that closure, so an edit
to any module a script can run reruns the rule, and an edit elsewhere does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "conflictlab"


@dataclass(frozen=True)
class Closure:
    modules: tuple[Path, ...]  # conflictlab files, sorted
    third_party: tuple[str, ...]  # top-level names of non-stdlib, non-conflictlab imports, sorted


# Keyed by the source text, so an edited file is parsed again. A Snakefile hashes
# some 60 scripts whose closures share most modules: parsing and walking each module
# once per script took 2.6 CPU s of every Snakemake start.
@functools.cache
def _imported_names(source: str, filename: str) -> frozenset[str]:
    """The modules (and ``module.name`` of each ``from module import name``) ``source`` imports, absolute only."""
    names = set()
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def _module_file(name: str, root: Path) -> Path | None:
    """The file of module ``name`` (``conflictlab.x.y``) under ``root`` (the folder holding conflictlab/)."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def import_closure(script: str | os.PathLike, root: str | os.PathLike) -> Closure:
    """Every conflictlab module ``script`` imports, directly or transitively,
    and the third-party top-level modules imported anywhere in that closure.

    Importing ``conflictlab.a.b`` also runs ``conflictlab/__init__.py`` and
    ``conflictlab/a/__init__.py``; they are included.
    """
    root = Path(root)
    seen: set[Path] = set()
    third_party: set[str] = set()
    stack = [Path(script)]
    while stack:
        path = stack.pop()
        for name in _imported_names(path.read_text(), str(path)):
            top = name.split(".")[0]
            if top != PACKAGE:
                if top not in sys.stdlib_module_names and top != "__future__":
                    third_party.add(top)
                continue
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):  # parent packages' __init__ files run too
                found = _module_file(".".join(parts[:depth]), root)
                if found is not None and found not in seen:
                    seen.add(found)
                    stack.append(found)
    return Closure(tuple(sorted(seen)), tuple(sorted(third_party)))


def code_hash(script: str | os.PathLike, root: str | os.PathLike) -> str:
    """A digest of the conflictlab modules ``script`` runs (paths and bytes)."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in import_closure(script, root).modules:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]

"""Which library code a workflow script runs, for code hashes and environment checks.

:func:`import_closure` follows ``import`` statements (module level and inside
functions alike: a lazily imported module still runs) from a script through
every ``conflictlab`` module it reaches, statically (nothing is executed); a
package that loads its own modules by name (the benchmark registry) runs all of
them, and a module that resolves the descriptors' module names
(conflictlab.paper_registries) runs every module they name.
A rule's code hash (:func:`code_hash`) covers exactly that closure, so an edit
to any module a script can run reruns the rule, and an edit elsewhere does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "conflictlab"


@dataclass(frozen=True)
class Closure:
    modules: tuple[Path, ...]  # conflictlab files, sorted
    third_party: tuple[str, ...]  # top-level names of non-stdlib, non-conflictlab imports, sorted


# A whole string that names a conflictlab module, or an object in one ("module:attribute"): how a benchmark's
# descriptor (conflictlab/benchmarks/<name>.py) names the modules that its consumers import by name.
_MODULE_REFERENCE = re.compile(rf"{PACKAGE}(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")
DESCRIPTORS = Path(PACKAGE) / "benchmarks"


# Keyed by the source text, so an edited file is parsed again. A Snakefile hashes
# some 60 scripts whose closures share most modules: parsing and walking each module
# once per script took 2.6 CPU s of every Snakemake start.
@functools.cache
def _parsed(source: str, filename: str) -> tuple[frozenset[str], bool, frozenset[str]]:
    """What ``source`` imports (modules, and ``module.name`` of each ``from module import name``; absolute only),
    whether it imports by name (``importlib.import_module``), and the module references among its string
    constants (:data:`_MODULE_REFERENCE`, the module part)."""
    names, by_name, references = set(), False, set()
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            by_name |= getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_REFERENCE.fullmatch(node.value):
            references.add(node.value.partition(":")[0])
    return frozenset(names), by_name, frozenset(references)


def _loaded_by_name(path: Path, names: frozenset[str], by_name: bool, root: Path) -> tuple[list[Path], set[str]]:
    """What ``path`` (importing ``names``) imports by name (``importlib.import_module``), statically: a package
    ``__init__.py`` that does so runs every module of its package (the benchmark registry loads its descriptors
    so); a module that does so and imports the registry runs every module the descriptors name by string
    (conflictlab.paper_registries resolves them)."""
    if not by_name:
        return [], set()
    if path.name == "__init__.py":
        return sorted(p for p in path.parent.glob("*.py") if p != path), set()
    if f"{PACKAGE}.benchmarks" not in names:  # it resolves no descriptor's name
        return [], set()
    named = set()
    for descriptor in sorted((root / DESCRIPTORS).glob("*.py")):
        named |= _parsed(descriptor.read_text(), str(descriptor))[2]
    return [], named


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
        names, by_name, _ = _parsed(path.read_text(), str(path))
        modules, named = _loaded_by_name(path, names, by_name, root)
        for found in modules:
            if found not in seen:
                seen.add(found)
                stack.append(found)
        for name in names | named:
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

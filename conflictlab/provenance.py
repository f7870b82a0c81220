"""Which library code a workflow script runs, for code hashes and environment checks.

:func:`import_closure` follows ``import`` statements (module level and inside
functions alike: a lazily imported module still runs) from a script through
every ``conflictlab`` module it reaches, statically (nothing is executed); a
package that loads its own modules by name (the benchmark registry) runs all of
them, and a module that resolves the descriptors' module names
(conflictlab.paper_registries, conflictlab.validate_data) runs the modules named
by the descriptor fields its closure reads.
A rule's code hash (:func:`code_hash`) covers exactly that closure, so an edit
to any module a script can run reruns the rule, and an edit elsewhere does not.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
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


Parsed = tuple[frozenset[str], bool, frozenset[tuple[str, str]], frozenset[str]]


def user_cache_folder() -> Path:
    """The project's folder under the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``); RuntimeError
    where there is no home folder to find it in."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / PACKAGE


def user_cache_file(kind: str, identity: str) -> Path | None:
    """``<kind>-<digest of identity>.json`` in :func:`user_cache_folder` (one file per identity: an
    environment, a package folder), or None where there is no home folder to keep it in."""
    try:
        folder = user_cache_folder()
    except RuntimeError:
        return None
    return folder / f"{kind}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}.json"


def read_cached_json(path: Path):
    """The JSON value kept in ``path`` (a file of the user's cache folder), or None where it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def store_cached_json(path: Path, value) -> None:
    """Keep ``value`` in ``path`` as JSON, atomically (processes that store at once each leave a whole file);
    a cache that cannot be written is simply not kept."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as out:
            json.dump(value, out)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


class _ParsedCache:
    """:func:`_parse`'s results kept between processes, in one JSON file under the user's cache folder
    (``$XDG_CACHE_HOME`` or ``~/.cache``), keyed by a digest of the source and of this module's own code
    (an edit to either parses again). Parsing the ~220 library modules took 1.0 CPU s of every Snakemake
    start; a cache that cannot be read or written is simply not used."""

    MAX_ENTRIES = 5000  # some 20 versions of each library module, ~4 MB

    def __init__(self):
        self.path = user_cache_folder() / "parsed-imports.json"
        self.salt = hashlib.sha256(Path(__file__).read_bytes()).digest()
        self.entries: dict | None = None
        self.used: set[str] = set()  # the keys this process read or wrote
        self.added = False

    def key(self, source: str) -> str:
        return hashlib.sha256(self.salt + source.encode()).hexdigest()

    def get(self, source: str) -> Parsed | None:
        if self.entries is None:
            found = read_cached_json(self.path)
            self.entries = found if isinstance(found, dict) else {}
        key = self.key(source)
        self.used.add(key)
        found = self.entries.get(key)
        if not isinstance(found, list) or len(found) != 4:
            return None
        names, by_name, references, attributes = found
        return frozenset(names), bool(by_name), frozenset(map(tuple, references)), frozenset(attributes)

    def put(self, source: str, parsed: Parsed) -> None:
        names, by_name, references, attributes = parsed
        self.entries[self.key(source)] = [sorted(names), by_name, sorted(references), sorted(attributes)]
        self.added = True

    def save(self) -> None:
        """Write the entries if any were added (atomically: concurrent starts each leave a whole file).
        Every edit of a module adds an entry: past :data:`MAX_ENTRIES` only this process's are kept."""
        if not self.added:
            return
        if len(self.entries) > self.MAX_ENTRIES:
            self.entries = {key: value for key, value in self.entries.items() if key in self.used}
        store_cached_json(self.path, self.entries)
        self.added = False


_CACHE = _ParsedCache()


# Keyed by the source text, so an edited file is parsed again. A Snakefile hashes
# some 60 scripts whose closures share most modules: parsing and walking each module
# once per script took 2.6 CPU s of every Snakemake start.
@functools.cache
def _parsed(source: str, filename: str) -> Parsed:
    """:func:`_parse`, from :data:`_CACHE` where it holds ``source``."""
    found = _CACHE.get(source)
    if found is None:
        found = _parse(source, filename)
        _CACHE.put(source, found)
    return found


def _parse(source: str, filename: str) -> Parsed:
    """What ``source`` imports (modules, and ``module.name`` of each ``from module import name``; absolute only),
    whether it imports by name (``importlib.import_module``), the module references among its string constants
    (:data:`_MODULE_REFERENCE`, the module part) as ``(keyword, module)`` (the keyword argument the string is
    given as, a descriptor's field; "" for any other string), and the attribute names it reads."""
    names, by_name, references, attributes = set(), False, set(), set()
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            by_name |= getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
            for keyword in node.keywords:
                value = keyword.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    if _MODULE_REFERENCE.fullmatch(value.value):
                        references.add((keyword.arg or "", value.value.partition(":")[0]))
        elif isinstance(node, ast.Attribute):
            attributes.add(node.attr)
    return frozenset(names), by_name, frozenset(references), frozenset(attributes)


def _loaded_by_name(path: Path, names: frozenset[str], by_name: bool) -> tuple[list[Path], bool]:
    """What ``path`` (importing ``names``) imports by name (``importlib.import_module``), statically: a package
    ``__init__.py`` that does so runs every module of its package (the benchmark registry loads its descriptors
    so); a module that does so and imports the registry resolves the descriptors' module names (``True``:
    conflictlab.paper_registries, conflictlab.validate_data)."""
    if not by_name:
        return [], False
    if path.name == "__init__.py":
        return sorted(p for p in path.parent.glob("*.py") if p != path), False
    return [], f"{PACKAGE}.benchmarks" in names


def _descriptor_references(root: Path) -> set[tuple[str, str]]:
    """``(field, module)`` of every module a benchmark descriptor names by string."""
    found = set()
    for descriptor in sorted((root / DESCRIPTORS).glob("*.py")):
        found |= _parsed(descriptor.read_text(), str(descriptor))[2]
    return found


# Cached: the closures of a Snakefile's scripts ask for the same few hundred names some 24,000 times
# (0.6 CPU s of every Snakemake start in path arithmetic and stat calls); modules do not come and go during one.
@functools.cache
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
    ``conflictlab/a/__init__.py``; they are included. Where the closure
    resolves the descriptors' module names, it runs the modules named by the
    descriptor fields that some module of the closure reads (``.claims``,
    ``.profile_cells``, ``.validator``): the profile script runs the profile
    cells, the data check the validators, neither the other's.
    """
    root = Path(root)
    seen: set[Path] = set()
    third_party: set[str] = set()
    attributes: set[str] = set()
    named: set[str] = set()
    resolves = False

    def add(names: Iterable[str]) -> None:
        for name in names:
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

    stack = [Path(script)]
    while stack:
        while stack:
            path = stack.pop()
            names, by_name, _, read = _parsed(path.read_text(), str(path))
            attributes |= read
            modules, resolver = _loaded_by_name(path, names, by_name)
            resolves |= resolver
            for found in modules:
                if found not in seen:
                    seen.add(found)
                    stack.append(found)
            add(names)
        if resolves:  # the fields read may grow with the modules just added: until nothing new
            wanted = {module for field, module in _descriptor_references(root) if field in attributes} - named
            named |= wanted
            add(wanted)
    _CACHE.save()
    return Closure(tuple(sorted(seen)), tuple(sorted(third_party)))


def code_hash(script: str | os.PathLike, root: str | os.PathLike) -> str:
    """A digest of the conflictlab modules ``script`` runs (paths and bytes)."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in import_closure(script, root).modules:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]

"""The library's layers: every import runs down, never back up.

Floors, bottom to top: the top-level utilities (statistics, rank tests,
sampling, paired ratios, studentized intervals, io, logs, the scheduler's timers, provenance,
wildcard values, the data check's records); ``lm/`` (the model
layer); ``judges/`` and ``report/`` (shared machinery); the benchmarks. A module may import its own
floor's package and anything below it, except where noted; a benchmark's
particulars (its prompts, taxonomy, metrics) never reach a lower floor.
Imports inside functions count: a lazily imported module still runs.
"""

import ast
import sys
from pathlib import Path

import pytest

from conflictlab import benchmarks as registry

PACKAGE = Path(__file__).resolve().parent.parent / "conflictlab"

# the registries (benchmarks, metrics) and their shapes (specs) stand on the bottom floor, so every layer reads them
UTILITIES = {
    "benchmarks",
    "data_check",
    "fake_text",
    "io",
    "logs",
    "metrics",
    "paired",
    "paired_ratios",
    "provenance",
    "rank_tests",
    "sampling",
    "scheduler_timers",
    "specs",
    "stats",
    "studentized",
    "wildcards",
}
BENCHMARKS = set(registry.NAMES)  # each registered benchmark's package
# what each part of the library may import (besides itself)
ALLOWED = {
    **{name: UTILITIES for name in UTILITIES},
    "lm": UTILITIES,
    "judges": UTILITIES | {"lm"},
    # the checks of a whole config (hosted endpoints, model lists) read the endpoint's settings
    "run_config": UTILITIES | {"lm"},
    "report": UTILITIES | {"lm", "run_config"},
    # a benchmark imports lower layers, never another benchmark: what two need lives below them
    **{name: UTILITIES | {"lm", "judges", "report"} for name in BENCHMARKS},
    # the top floor: the list of every paper's registry, which the reproduction scripts read
    "paper_registries": UTILITIES | {"lm", "judges", "report"} | BENCHMARKS,
    # the data check: the registry's validators, loaded by name (rule validate_data)
    "validate_data": UTILITIES,
    # new data built the papers' way, written in a benchmark's released format and read back by its loader
    "construction": UTILITIES | {"lm", "judges", "report"} | BENCHMARKS,
}


def _part(module: str) -> str:
    """The layer part of a dotted ``conflictlab`` module name: its subpackage or top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "conflictlab"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, every_alias: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, at any depth;
    with ``every_alias``, also ``x.y`` for every ``from x import y`` (a
    submodule, or an attribute the caller drops)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.append((node.lineno, name))
            if (
                every_alias or node.module is None or name == "conflictlab"
            ):  # "from . import x", "from conflictlab import x": submodules
                found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_part_of_the_library_has_a_layer():
    parts = {_part(_module_name(path)) for path in MODULES} - {"conflictlab"}
    assert parts == set(ALLOWED), f"give {sorted(parts - set(ALLOWED))} a layer in tests/test_layers.py"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_run_down_the_layers(path):
    own = _part(_module_name(path))
    allowed = ALLOWED.get(own, set()) | {own, "conflictlab"}  # conflictlab/__init__.py imports nothing
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
        for line, name in _imports(path)
        if name.split(".")[0] == "conflictlab" and _part(name) not in allowed
    ]
    assert not wrong, "\n".join(wrong)


def test_the_statistics_layer_needs_numpy_alone():
    third_party = {
        name.split(".")[0]
        for _, name in _imports(PACKAGE / "stats.py")
        if name.split(".")[0] not in sys.stdlib_module_names | {"__future__", "conflictlab"}
    }
    assert third_party == {"numpy"}


def test_the_checker_sees_function_level_and_relative_imports(tmp_path, monkeypatch):
    fake = tmp_path / "conflictlab"
    (fake / "judges").mkdir(parents=True)
    module = fake / "judges" / "x.py"
    module.write_text(
        "from . import requests\n"
        "from ..contextconflict import shapley\n"
        "def f():\n"
        "    from conflictlab import conflicts\n"
        "    import conflictlab.lm.loading\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    names = [name for _, name in _imports(module)]
    assert sorted(names) == sorted(
        [
            "conflictlab.judges",
            "conflictlab.judges.requests",
            "conflictlab.contextconflict",
            "conflictlab",
            "conflictlab.conflicts",
            "conflictlab.lm.loading",
        ]
    )
    assert {_part(n) for n in names} - ALLOWED["judges"] - {"judges", "conflictlab"} == {"contextconflict", "conflicts"}


def test_the_package_init_imports_nothing_of_its_own():
    assert not [name for _, name in _imports(PACKAGE / "__init__.py") if name.split(".")[0] == "conflictlab"]


def _import_graph(modules) -> dict[str, set[str]]:
    """{module: the package's modules it imports, at any depth}, over ``modules``
    (paths); a name that is not one of them (an attribute of ``from x import y``,
    a third-party module) is no edge."""
    names = {_module_name(path) for path in modules}
    return {
        _module_name(path): {
            name for _, name in _imports(path, every_alias=True) if name in names and name != _module_name(path)
        }
        for path in modules
    }


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as [a, b, ..., a], or None (depth-first, iterative)."""
    state = dict.fromkeys(graph, 0)  # 0 unseen, 1 on the current path, 2 done
    for root in sorted(graph):
        if state[root]:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state[child] == 1:
                return path[path.index(child) :] + [child]
            elif state[child] == 0:
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph[child])))
    return None


def test_the_package_has_no_import_circle():
    """Imports inside functions and under TYPE_CHECKING count: a circle there
    still ties the two modules together (and breaks at the first reorder)."""
    cycle = _find_cycle(_import_graph(MODULES))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_circle_finder_reports_a_planted_circle(tmp_path, monkeypatch):
    fake = tmp_path / "conflictlab"
    (fake / "lm").mkdir(parents=True)
    (fake / "lm" / "a.py").write_text("from conflictlab.lm import b\n")
    (fake / "lm" / "b.py").write_text("def f():\n    from conflictlab.lm.c import x\n")
    (fake / "lm" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import conflictlab.lm.a\n"
    )
    (fake / "lm" / "d.py").write_text("import conflictlab.lm.a\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    graph = _import_graph(sorted(fake.rglob("*.py")))
    assert _find_cycle(graph) == ["conflictlab.lm.a", "conflictlab.lm.b", "conflictlab.lm.c", "conflictlab.lm.a"]
    (fake / "lm" / "c.py").write_text("x = 1\n")
    assert _find_cycle(_import_graph(sorted(fake.rglob("*.py")))) is None

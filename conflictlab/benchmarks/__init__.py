"""The benchmark registry: which benchmarks exist, in the order the report lists them.

Each benchmark is one descriptor, :class:`conflictlab.specs.Benchmark`, in
``conflictlab/benchmarks/<name>.py`` (as ``BENCHMARK``); :data:`NAMES` below
is the one line that registers it. The Snakefile, the report, the profile, the
reproduction report and the tests read the benchmarks from here, and config's
``benchmarks:`` list picks which of them run (:func:`selected`).
docs/architecture.md ("Adding a benchmark") says what else a benchmark brings.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from conflictlab.specs import Benchmark

# The registry: one name per benchmark, in the report's order (each is a module of this package).
NAMES = ("contextconflict", "conflicts", "arbitration", "conflictbank", "memotrap", "nq_swap")

# Model lists that belong to no one benchmark: the conflict-resolution methods run on every selected benchmark.
SHARED_MODEL_LISTS = ("methods.models",)


def _load(name: str) -> Benchmark:
    benchmark = import_module(f"{__name__}.{name}").BENCHMARK
    if benchmark.name != name:
        raise ValueError(f"conflictlab/benchmarks/{name}.py: BENCHMARK.name is {benchmark.name!r}, not {name!r}")
    return benchmark


REGISTRY: tuple[Benchmark, ...] = tuple(_load(name) for name in NAMES)
BY_NAME: dict[str, Benchmark] = {b.name: b for b in REGISTRY}


def selected_names(config: Mapping) -> list[str]:
    """The names config's ``benchmarks:`` list chooses, in registry order (every benchmark where it is
    absent or null). ValueError, naming the valid names, for an unknown or repeated name or an empty list."""
    chosen = config.get("benchmarks")
    if chosen is None:
        return list(NAMES)
    if isinstance(chosen, str) or not isinstance(chosen, (list, tuple)):
        raise ValueError(f"config: benchmarks must be a list of names ({', '.join(NAMES)}), not {chosen!r}")
    unknown = [name for name in chosen if name not in BY_NAME]
    if unknown:
        raise ValueError(
            f"config: benchmarks names {', '.join(map(repr, unknown))}, which is not a registered benchmark; "
            f"the valid names are {', '.join(NAMES)} (conflictlab/benchmarks/__init__.py)"
        )
    if len(set(chosen)) != len(chosen) or not chosen:
        raise ValueError(f"config: benchmarks {list(chosen)!r} must name each benchmark once, and at least one")
    return [name for name in NAMES if name in chosen]


def selected(config: Mapping) -> list[Benchmark]:
    """The descriptors of :func:`selected_names`."""
    return [BY_NAME[name] for name in selected_names(config)]


def model_list_keys(config: Mapping) -> list[str]:
    """The dotted config keys of every model list that a run of ``config`` uses: each selected benchmark's
    and the shared ones (:data:`SHARED_MODEL_LISTS`)."""
    return [key for b in selected(config) for key in b.all_model_lists] + list(SHARED_MODEL_LISTS)


def all_model_list_keys() -> list[str]:
    """Every registered benchmark's model lists and the shared ones: the lists a config may hold."""
    return [key for b in REGISTRY for key in b.all_model_lists] + list(SHARED_MODEL_LISTS)


class Results:
    """What each benchmark's rule files register for the collectors (rules/benchmarks.smk,
    ``register_results``), by benchmark name: ``outputs`` (paths the default target and the HTML report
    collect), ``tables`` (``{CSV stem: path}`` the profile and the paper rows read) and ``usage`` (its
    jobs' endpoint usage files)."""

    def __init__(self):
        self.outputs: dict[str, list[str]] = {name: [] for name in NAMES}
        self.tables: dict[str, dict[str, str]] = {name: {} for name in NAMES}
        self.usage: dict[str, list[str]] = {name: [] for name in NAMES}

    def register(self, name: str, *, outputs=(), tables: Mapping[str, str] | None = None, usage=()) -> None:
        """Add to what benchmark ``name`` makes under this config (a rule file may call it more than
        once). ValueError for a name that is not registered."""
        if name not in self.outputs:
            raise ValueError(f"register_results: {name!r} is not a registered benchmark ({', '.join(NAMES)})")
        self.outputs[name].extend(outputs)
        self.tables[name].update(tables or {})
        self.usage[name].extend(usage)

    def owner(self, stem: str, selected: list[str]) -> Benchmark:
        """The selected benchmark that registered table ``stem`` (ContextConflict for a shared table: the
        methods table reads its samples)."""
        return BY_NAME[next((name for name in selected if stem in self.tables[name]), NAMES[0])]


def cap_key(benchmark: Benchmark, stem: str) -> str | None:
    """The dotted config key that caps the items behind ``benchmark``'s table ``stem`` (its ``caps``,
    first matching prefix; None: no cap). ValueError where no prefix matches."""
    for prefix, key in benchmark.caps:
        if stem.startswith(prefix):
            return key
    raise ValueError(f"benchmark {benchmark.name!r}: no caps entry matches table {stem!r}")

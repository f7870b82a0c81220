"""Every paper's registry (a benchmark's ``paper_numbers`` module: PAPER, NUMBERS, CLAIMS, EXCLUSIONS), in the
report's order: a view of the benchmark registry (:mod:`conflictlab.benchmarks`). It imports the modules the
descriptors name, every benchmark's among them, so it stands above them; the reproduction and profile scripts
and the tests read it."""

from __future__ import annotations

from importlib import import_module

from conflictlab import benchmarks


def resolve(reference: str):
    """What a descriptor names: the module of a dotted name (``paper_numbers``), or the object of
    ``"module:attribute"`` (``profile_cells``)."""
    module, _, attribute = reference.partition(":")
    loaded = import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


# Each registered benchmark's paper registry, by benchmark name, in registry order.
BY_BENCHMARK = {b.name: resolve(b.paper_numbers) for b in benchmarks.REGISTRY if b.paper_numbers}
REGISTRIES = tuple(BY_BENCHMARK.values())

"""Every paper the report shows (a benchmark descriptor's ``paper``: the data file
``conflictlab/papers/<paper>.yaml``, and its ``claims``: the module whose ``CLAIMS`` check the paper's sentences),
in the report's order: a view of the benchmark registry (:mod:`conflictlab.benchmarks`). It imports the claims
modules the descriptors name, every benchmark's among them, so it stands above them; the reproduction and profile
scripts and the tests read it. Reading a file checks it against the schema
(:mod:`conflictlab.report.paper_data`), so a wrong row stops the workflow when it is parsed, before any job."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from conflictlab import benchmarks
from conflictlab.report.paper_data import PaperRecord, load_paper, paper_file


def resolve(reference: str):
    """What a descriptor names: the module of a dotted name, or the object of ``"module:attribute"``
    (``profile_cells``, ``claims``)."""
    module, _, attribute = reference.partition(":")
    loaded = import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


def paper_files() -> dict[str, Path]:
    """Each registered benchmark's paper file, by benchmark name, in registry order."""
    return {b.name: paper_file(b.paper) for b in benchmarks.REGISTRY if b.paper}


def load(files: Sequence[str | Path] | None = None) -> tuple[PaperRecord, ...]:
    """Every registered paper (``files``: their data files, as the rules pass them, found by file name; None:
    :func:`paper_files`), with the claims its descriptor names, in registry order."""
    given = {Path(f).name: Path(f) for f in (files if files is not None else paper_files().values())}
    named = {f"{b.paper}.yaml": b for b in benchmarks.REGISTRY if b.paper}
    unknown = sorted(set(given) - set(named))
    if unknown:
        raise ValueError(f"paper files no benchmark descriptor names: {', '.join(unknown)}")
    return tuple(
        load_paper(given[name], resolve(bench.claims) if bench.claims else ())
        for name, bench in named.items()
        if name in given
    )


# Each registered benchmark's paper, by benchmark name, in registry order.
BY_BENCHMARK = dict(zip(paper_files(), load()))
REGISTRIES = tuple(BY_BENCHMARK.values())

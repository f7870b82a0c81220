"""The shapes of the library's registries: a benchmark's descriptor and a metric's spec.

Plain frozen dataclasses that import nothing of the library, so that a
benchmark's descriptor (``conflictlab/benchmarks/<name>.py``) can declare its
metrics without importing the modules that compute them. The registries
themselves are :mod:`conflictlab.benchmarks` (which benchmarks exist, in the
report's order) and :mod:`conflictlab.metrics` (every metric, with its interval).
"""

from __future__ import annotations

from dataclasses import dataclass

# A metric's kind: what one unit contributes and so which intervals fit it.
KINDS = ("proportion", "mean", "count", "rank", "agreement")
# Which way is better; "none" for a metric without a direction (a share, a count).
DIRECTIONS = ("higher", "lower", "none")


@dataclass(frozen=True)
class Metric:
    """One metric: how its numbers are printed, bounded and compared.

    ``interval``: a key of :data:`conflictlab.metrics.INTERVALS` (the function
    that computes it, in :mod:`conflictlab.stats` or :mod:`conflictlab.paired`),
    or ``"none"`` for a number printed without one. ``min_n_interval``: the
    smallest n at which an interval is printed; ``min_n_mark``: the smallest n
    at which the metric's best cell may be marked (None: never marked).
    ``unit``: what the printed number is in (``"proportion"`` for 0-1,
    ``"points"`` for a 0-100 score, ``"items"`` for a count).
    """

    name: str
    unit: str
    kind: str
    interval: str
    better: str
    min_n_interval: int
    min_n_mark: int | None
    description: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"metric {self.name!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.better not in DIRECTIONS:
            raise ValueError(f"metric {self.name!r}: better {self.better!r} is not one of {', '.join(DIRECTIONS)}")


@dataclass(frozen=True)
class ProfileSection:
    """One section of a model's profile page: its key (the cells' ``section``), title and source table,
    and the names of the metrics its cells show (conflictlab.metrics: the page states their intervals)."""

    key: str
    title: str
    source: str
    metrics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, as every part of the workflow finds it (docs/architecture.md, "Adding a benchmark").

    Paths are relative to the repository root; modules are dotted names,
    imported only by the part that uses them (the registry imports none, so
    that every layer may read it). ``name`` is the registry key, the
    ``benchmarks:`` config value and the package ``conflictlab/<name>/``.
    """

    name: str
    title: str  # the profile page's heading and the HTML report's category
    what: str  # one line: what is measured
    models_key: str  # dotted config key of the model list whose models run it (the profile's columns)
    rule_files: tuple[str, ...]  # included by the Snakefile, in this order, after the shared rule files
    # Every dotted config model list it runs (prepared and checked); the first is models_key.
    model_lists: tuple[str, ...] = ()
    # The config section it owns and the schema fragment that validates it (schemas/<name>.schema.yaml);
    # None: its keys are in schemas/config.schema.yaml (the four first benchmarks).
    config_section: str | None = None
    schema: str | None = None
    judged: bool = False  # whether its jobs call the judge (config judges): the judge model is prepared then
    # Its paper's numbers: the data file conflictlab/papers/<paper>.yaml (conflictlab.report.paper_data), and the
    # claims that check the paper's sentences, "module:CLAIMS" (conflictlab.report.reproduction.Claim).
    paper: str | None = None
    claims: str | None = None
    paper_config: str | None = None  # config/paper-<name>.yaml, whose sections config/paper.yaml holds too
    # The profile page: the function "module:function"(*tables, models=[...]) -> cells, the stems of the tables it
    # takes (registered by the rule files, in its argument order), its sections, and a regular expression on a
    # cell's key that picks the headline cells of the figure's panel.
    profile_cells: str | None = None
    profile_tables: tuple[str, ...] = ()
    profile_sections: tuple[ProfileSection, ...] = ()
    headline: str | None = None
    # Which config key caps the items behind a table's n: (table stem prefix, dotted key or None), first match.
    caps: tuple[tuple[str, str | None], ...] = ()
    docs: str | None = None  # its docs page (docs/benchmarks/<name>.md)
    metrics: tuple[Metric, ...] = ()  # metrics of its own, beside conflictlab.metrics.CORE
    # What its model lists need of a model's backend (conflictlab.lm.backends.CAPABILITIES), checked before any
    # job (conflictlab.run_config.capability_problems): (dotted model-list key, what the stage does, capability).
    needs: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self):
        if self.model_lists and self.model_lists[0] != self.models_key:
            raise ValueError(f"benchmark {self.name!r}: model_lists must start with models_key {self.models_key!r}")
        if (self.config_section is None) != (self.schema is None) and self.schema is not None:
            raise ValueError(f"benchmark {self.name!r}: a schema fragment needs the config_section it validates")

    @property
    def all_model_lists(self) -> tuple[str, ...]:
        """Its model lists (dotted config keys), models_key first."""
        return self.model_lists or (self.models_key,)

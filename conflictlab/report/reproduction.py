"""The reproduction report: each paper's numbers and result sentences beside this run's.

Each paper's numbers are data, one file per paper (``conflictlab/papers/<paper>.yaml``, read and checked by
:mod:`conflictlab.report.paper_data` into a :class:`Paper`, its :class:`PaperNumber` rows and its
:class:`Exclusion` list); its result sentences are :class:`Claim` functions in the claims module its benchmark's
descriptor names. This module, below the benchmarks, holds the record types, finds this run's number of each row
in the result tables (``results/tables/*.csv``), gives each row a verdict, evaluates the claims, plans which rows
a config can compare (:func:`plan`) and renders the report.

A row's verdict (:mod:`conflictlab.report.verdicts` holds the statistics):
the difference ours − paper with its 95% interval from both samples (ours:
our table's n; the paper's: ``paper_n``, and ``paper_sd`` for a mean),
widened by the paper's rounding, against the equivalence margin of the
row's unit (config ``reproduction.margins``):

- ``equivalent``: the 90% interval lies within ± margin;
- ``differs``: the 95% interval excludes 0;
- ``inconclusive``: neither ("underpowered" where our n could not have
  shown equivalence even with a perfect match);
- ``equal`` / ``differs``: a count (of samples, queries, records);
- ``not comparable``, with every reason that applies: the paper's text
  copy gives no number; ``caveat``; the paper's model is absent from this
  config's model list; a judge or scorer other than the paper's; no table,
  column, row or value; n < 2; no margin for the unit.

Claims: ``holds`` / ``fails`` / ``not comparable``. Only ``equivalent``,
``equal`` and ``holds`` are green. Matching a paper's model name to a
configured model is :func:`conflictlab.report.paper_models.paper_model_name`.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from conflictlab.report import verdicts as V
from conflictlab.report.paper_models import paper_model_name
from conflictlab.stats import MIN_N_INTERVAL

EQUIVALENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE, EQUAL = (
    V.EQUIVALENT,
    V.DIFFERS,
    V.INCONCLUSIVE,
    V.NOT_COMPARABLE,
    V.EQUAL,
)
VERDICTS = V.VERDICTS
COUNT = "count"
# The equivalence margin per unit where config gives none (config.yaml ``reproduction.margins``; docs/reproduction.md).
DEFAULT_MARGINS = {"%": 3.0, "points": 3.0, "proportion": 0.03, "κ": 0.05, "1-5": 0.2, "log-likelihood": 0.1}
# Tables whose value columns are means of graded scores, not proportions (Ours.kind None looks here).
MEAN_TABLES = frozenset({"balance", "faithfulness", "table3", "table6"})
# Decimals of this run's estimate by the paper's unit (others: one).
DECIMALS = {"κ": 3, "proportion": 2, "log-likelihood": 3}


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    cite: tuple[str, ...]  # its public identifiers: "arXiv:<id>", "doi:<doi>"
    note: str  # what the numbers were read from, and what holds for every row


@dataclass(frozen=True)
class Ours:
    """Where this run's number is: rows of ``results/tables/{table}.csv``.

    ``models``: the config list whose models the table's ``model`` column
    holds, None for a number about the data (no model: every matching row
    must agree, or with ``total`` they are summed). ``where``: further
    column filters. ``scale``: the table's value times it is in the
    paper's unit (proportions 0-1 against the paper's %).
    ``instrument_column``: the column naming the scorer, where the table
    has one row per scorer.
    """

    table: str
    column: str
    models: str | None = "generators"
    where: Mapping[str, str] = field(default_factory=dict)
    low: str | None = "ci_low"
    high: str | None = "ci_high"
    n: str = "n"
    scale: float = 100.0
    total: bool = False
    instrument_column: str | None = None
    # "proportion" or "mean" (the verdict's interval depends on it); None: a mean where the unit is no rate
    # ("%", "proportion") or the table is in MEAN_TABLES, else a proportion.
    kind: str | None = None

    def estimate_kind(self, unit: str) -> str:
        """The kind of this run's estimate: "proportion" or "mean"."""
        if self.kind:
            return self.kind
        return V.PROPORTION if unit in ("%", "proportion") and self.table not in MEAN_TABLES else V.MEAN


@dataclass(frozen=True)
class Instrument:
    """The model a number depends on besides the one it is of."""

    role: str  # "judge" (judges.model), "conflicts judge" (conflicts.judge over judges) or "scorer" (scorers)
    name: str | None  # the paper's; None where the paper names none


@dataclass(frozen=True)
class Derived:
    """This run's number computed from other rows of the same paper (by
    :attr:`PaperNumber.key`): ``difference`` is ``of[0] - of[1]``, in the
    rows' unit; ``relative`` is ``(of[0] - of[1]) / of[1]`` (a relative
    gain: in % where the row's unit is %, else as a multiple), shown beside
    the paper's but never given a verdict (:data:`RELATIVE`); ``paired``
    when both rows are over the same items (a steered and an unsteered run
    of one model), which the verdict uses for the difference's interval."""

    op: str  # "difference" | "relative"
    of: tuple[str, ...]
    paired: bool = False


@dataclass(frozen=True)
class PaperNumber:
    """One headline number as the paper's text copy states it.

    ``value`` in ``unit`` as printed, None where the copy gives no number
    (a table whose cells were lost: ``source`` says so); ``model`` the
    paper's name of the model, None for a number about the data or the
    study; ``source`` where in the copy (section, table, sentence);
    ``caveat`` why it cannot be compared whatever the run holds (required
    where ``ours`` is None and the paper gives a value); ``note`` what a
    reader needs beside the verdict.
    """

    paper: str
    metric: str
    model: str | None
    setting: str
    value: float | None
    unit: str
    source: str
    ours: Ours | Derived | None = None
    instrument: Instrument | None = None
    caveat: str | None = None
    note: str | None = None
    # The sample behind the paper's value, for a verdict that accounts for
    # both samples: its n (items the estimate is over), and for a mean its
    # SD where the paper prints one.
    paper_n: int | None = None
    paper_sd: float | None = None
    # Decimals as printed (None: those of the value's shortest repr, so
    # 24.8 -> 1, 9.45 -> 2; set it where the paper prints a trailing zero).
    decimals: int | None = None
    # Where it stands in the paper, for grouping the report: "Table 5",
    # "Figure 4", "§3.3 text".
    table: str | None = None
    # Unique within the paper; Derived rows and claims refer to rows by it.
    key: str | None = None
    # The value as the paper prints it ("68.0", "5,781"), which the report shows (None: format_value's reading).
    printed: str | None = None

    @property
    def id(self) -> str:
        """The row's key, else ``metric | model | setting``."""
        return self.key or f"{self.metric} | {self.model} | {self.setting}"


HOLDS, FAILS = "holds", "fails"
CLAIM_STATUSES = (HOLDS, FAILS, "not comparable")


@dataclass(frozen=True)
class ClaimCheck:
    """A claim's outcome on this run: ``status`` one of :data:`CLAIM_STATUSES`;
    ``numbers`` what it used (``{label: value}``, in the paper's unit);
    ``why`` the reason for anything but ``holds``."""

    status: str
    numbers: Mapping[str, float | int | str | None] = field(default_factory=dict)
    why: str = ""


@dataclass(frozen=True)
class ClaimContext:
    """What a claim's check reads: ``tables`` (``{table stem: rows}``, the
    result CSVs), ``rows`` (the compared report rows by ``(paper,``
    :attr:`PaperNumber.id` ``)``, each a :func:`compare` dict: ids are unique
    within a paper only, so two papers may use the same one; :meth:`row`
    reads one), ``model_lists``, ``sources`` and ``instruments`` (the judges
    and scorers by role) as :func:`compare` takes them."""

    tables: Mapping[str, Sequence[Mapping]]
    rows: Mapping[tuple[str, str], Mapping]
    model_lists: Mapping[str, Sequence[str]]
    sources: Mapping[str, str]
    instruments: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def row(self, paper: str, key: str) -> Mapping:
        """The compared report row ``key`` of ``paper`` (KeyError, which a claim reports as missing, if none)."""
        return self.rows[(paper, key)]

    def model(self, paper_name: str, model_list: str) -> str | None:
        """This run's model (in config list ``model_list``) that the paper calls ``paper_name``."""
        configured = self.model_lists.get(model_list, ())
        return next((m for m in configured if paper_model_name(m, self.sources.get(m), [paper_name])), None)


@dataclass(frozen=True)
class Reads:
    """A result table a claim's check reads and the paper's models it needs there, so that the plan can say
    before the run whether a config can check the claim.

    ``table``: the CSV stem (``results/tables/{table}.csv``, or a mechanistic Parquet file by the stem the
    reproduction rule gives it), where ``{model}`` stands for this run's name of each model found (per-model
    tables: ``mechanistic_probes_{model}``); ``models``: the paper's names of the models the check reads,
    looked up in config list ``model_list``, of which ``at_least`` must be configured (None: every one);
    ``scorers``: the paper's Shapley scorers the check reads, each of which must be a configured scorer."""

    table: str
    models: tuple[str, ...] = ()
    model_list: str = "generators"
    at_least: int | None = 1
    scorers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A comparative or qualitative result sentence of a paper.

    ``quote``: the sentence as the text copy has it; ``section`` and
    ``page`` where (page None where the copy has no pages); ``check``: a
    function of a :class:`ClaimContext` returning a :class:`ClaimCheck`,
    or None with ``exclusion`` saying why no run can check it."""

    paper: str
    key: str
    quote: str
    section: str
    page: str | None = None
    check: Callable[[ClaimContext], ClaimCheck] | None = None
    exclusion: str | None = None
    # What the check reads, so that the plan can say whether a config can check it: rows of the same paper (by
    # PaperNumber.key; the rows' own reasons decide) and tables with the models they need (Reads).
    reads: tuple[str | Reads, ...] = ()


@dataclass(frozen=True)
class Exclusion:
    """A number of a paper that is not a report row, and why (``reason``:
    e.g. "human labels, unreleased", "an example in a figure, not a result")."""

    paper: str
    what: str
    source: str
    reason: str


def _float(value) -> float | None:
    """A number, or None for a missing or NaN cell."""
    if value is None or value == "":
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _matches(row: Mapping, where: Mapping[str, str]) -> bool:
    return all(str(row.get(column)) == str(value) for column, value in where.items())


def _listed(models: Sequence[str]) -> str:
    return ", ".join(models) or "none"


def for_unreleased_human_labels(why: str) -> bool:
    """Whether a reason is the paper's human labels being unreleased (no run can compare such a row)."""
    text = why.lower()
    return "human" in text and ("not released" in text or "unreleased" in text)


NO_NUMBER = "no number in the paper's text copy"


DIFFERENCE_OP, RELATIVE_OP = "difference", "relative"
DERIVED_OPS = (DIFFERENCE_OP, RELATIVE_OP)
# Why a relative gain gets no verdict: the interval of a ratio of two estimates is not among those whose coverage
# was checked by simulation (benchmarks/reproduction_calibration.py); its cells are rows of their own.
RELATIVE = (
    "a relative gain (a ratio of two of the paper's cells): shown beside this run's, no verdict (no interval of a "
    "ratio is calibrated here); the cells it is formed from have verdicts of their own"
)


def _config_reasons(
    number: PaperNumber, model_lists, sources, instruments, margins
) -> tuple[list[str], dict, str | None]:
    """What this config alone decides about ``number``: the reasons it cannot be compared, the table filters
    (its model and instrument), and our model's name."""
    reasons = []
    if number.value is None:
        reasons.append(NO_NUMBER)
    if number.caveat:
        reasons.append(number.caveat)
    ours = number.ours
    if isinstance(ours, Derived) and ours.op == RELATIVE_OP:
        reasons.append(RELATIVE)
    elif ours is not None and number.value is not None and number.unit != COUNT and number.unit not in margins:
        reasons.append(f"no equivalence margin for the unit '{number.unit}' (config reproduction.margins)")
    if not isinstance(ours, Ours):
        return reasons, {}, None
    filters, found = dict(ours.where), None
    if ours.models is not None:
        configured = list(model_lists.get(ours.models, ()))
        found = next((m for m in configured if paper_model_name(m, sources.get(m), [number.model])), None)
        if found is None:
            reasons.append(f"model absent: {number.model} is not in {ours.models} (this run: {_listed(configured)})")
        else:
            filters["model"] = found
    if number.instrument is not None:
        role, wanted = number.instrument.role, number.instrument.name
        candidates = list(instruments.get(role, ()))
        chosen = next((m for m in candidates if wanted and paper_model_name(m, sources.get(m), [wanted])), None)
        if chosen is None:
            chosen = candidates[0] if candidates else None
            reasons.append(
                f"different {role}: the paper's is {wanted}; this run's is {chosen or 'none'}"
                if wanted
                else f"unknown {role}: the paper names none; this run's is {chosen or 'none'}"
            )
        if ours.instrument_column and chosen:
            filters[ours.instrument_column] = chosen
    return reasons, filters, found


def _base_row(number: PaperNumber) -> dict:
    return {
        "paper": number.paper,
        "key": number.id,
        "table": number.table or "",
        "metric": number.metric,
        "model": number.model,
        "setting": number.setting,
        "value": number.value,
        "printed": number.printed,
        "unit": number.unit,
        "paper_n": number.paper_n,
        "source": number.source,
        "note": number.note,
        "our_model": None,
        "ours": None,
        "low": None,
        "high": None,
        "n": None,
        "our_n": None,
        "our_source": None,
        "kind": None,
        "margin": None,
        "difference": None,
        "difference_low": None,
        "difference_high": None,
        "_estimate": None,
    }


def _done(row: dict, verdict: str, reasons: Sequence[str]) -> dict:
    row["our_n"] = row["n"]
    return {**row, "verdict": verdict, "why": "; ".join(r for r in reasons if r)}


def compare(
    number: PaperNumber,
    tables: Mapping[str, Sequence[Mapping]],
    model_lists: Mapping[str, Sequence[str]],
    sources: Mapping[str, str],
    instruments: Mapping[str, Sequence[str]],
    *,
    margins: Mapping[str, float] = DEFAULT_MARGINS,
    compared: Mapping[str, Mapping] | None = None,
    registry: Mapping[str, PaperNumber] | None = None,
) -> dict:
    """``number`` beside this run's: one report row (a dict).

    ``tables``: ``{table stem: rows}`` of the result tables this run made;
    ``model_lists``: ``{config key: models}``; ``sources``: each configured
    model's source (``hf:<repo>``, ``hosted:<id>``, ...); ``instruments``:
    ``{"judge": [judges.model], "scorer": scorers}``; ``margins``: the
    equivalence margin per unit; for a :class:`Derived` row, ``compared``
    (the rows it is derived from, by :attr:`PaperNumber.id`) and
    ``registry`` (the paper's rows by id, for their n). The row holds the
    paper's value and n, ours (``our_model``, ``ours``, ``low``, ``high``,
    ``our_n`` in the paper's unit), ``difference`` with its 95% interval
    (``difference_low``/``_high``), ``margin``, ``verdict`` and ``why`` (the
    reasons, ``; ``-joined). Never raises for a missing table, column or row.
    """
    row = _base_row(number)
    reasons, filters, found = _config_reasons(number, model_lists, sources, instruments, margins)
    ours = number.ours
    if ours is None:
        if not reasons:
            raise ValueError(
                f"{number.paper}: '{number.metric}' of {number.model}: a paper number without ours needs a caveat"
            )
        return _done(row, NOT_COMPARABLE, reasons)
    if isinstance(ours, Derived):
        return _compare_derived(number, row, reasons, compared or {}, registry or {}, margins)
    row["our_model"] = found
    row["our_source"] = f"results/tables/{ours.table}.csv: {ours.column}" + "".join(
        f", {k} = {v}" for k, v in filters.items()
    )
    if "model absent" not in " ".join(reasons):
        rows = tables.get(ours.table)
        if rows is None:
            reasons.append(f"results/tables/{ours.table}.csv is not made in this run")
        else:
            reasons += _read(row, rows, filters, ours, number.unit)
    if reasons:
        if reasons == [NO_NUMBER] and row["ours"] is not None and row["low"] is not None:
            # the copy lost the paper's value, but our estimate still serves the rows derived from this one
            row["_estimate"] = _our_estimate(row, ours.scale)
        return _done(row, NOT_COMPARABLE, reasons)
    if number.unit == COUNT:
        verdict = V.compare_counts(row["ours"], number.value)
        row.update(difference=verdict.difference, difference_low=verdict.low, difference_high=verdict.high)
        return _done(row, verdict.verdict, [verdict.why])
    if row["low"] is None:
        return _done(
            row,
            NOT_COMPARABLE,
            [
                f"no interval (n = {row['n']} < {MIN_N_INTERVAL})"
                if (row["n"] or 0) < MIN_N_INTERVAL
                else "no interval in the table"
            ],
        )
    row["_estimate"] = _our_estimate(row, ours.scale)
    paper, notes = _paper_estimate(number, row["_estimate"], number.value)
    return _decide(row, [V.Term(1, row["_estimate"], paper)], number, margins[number.unit], notes)


def round_by(number: PaperNumber) -> float:
    """Half a unit of the last digit the paper printed (:func:`conflictlab.report.verdicts.rounding`); a
    percentage without ``decimals`` has at least one, as :func:`format_value` prints it (68.0, not 68)."""
    if number.decimals is None and number.unit == "%":
        return min(V.rounding(number.value), V.rounding(number.value, 1))
    return V.rounding(number.value, number.decimals)


def _our_estimate(row: Mapping, scale: float) -> V.Estimate:
    """This run's estimate from its table row: a proportion at its n, or a mean whose standard error is the
    table's 95% interval over 2 × 1.96. The tables give means a Student-t interval, printed from n = 30,
    where t(0.975, n - 1) is at most 4.4% above 1.96: the standard error is then that much too large, on the
    conservative side."""
    if row["kind"] == V.PROPORTION:
        return V.Estimate(row["ours"], V.PROPORTION, n=row["n"], scale=scale)
    se = (row["high"] - row["low"]) / (2 * 1.959963984540054)
    return V.Estimate(row["ours"], V.MEAN, n=row["n"], se=se, df=row["n"] - 1, scale=scale)


def _paper_estimate(number: PaperNumber, ours: V.Estimate, value: float) -> tuple[V.Estimate, list[str]]:
    """The paper's ``value`` as an estimate of the same kind as ``ours`` (its n and SD as the row gives them),
    and what the row must say about it."""
    n = number.paper_n
    if n is None or n < MIN_N_INTERVAL:
        return V.Estimate(value, V.EXACT, scale=ours.scale), [
            "the paper's n is not known: its sampling error could not be formed (the interval is ours, widened by its "
            "rounding)"
        ]
    if ours.kind == V.PROPORTION:
        return V.Estimate(value, V.PROPORTION, n=n, scale=ours.scale), []
    if number.paper_sd is not None:
        return V.Estimate(value, V.MEAN, n=n, se=number.paper_sd / math.sqrt(n), df=n - 1, scale=ours.scale), []
    # a faithful rerun has the paper's spread: our SD at the paper's n stands in for the SD it does not print
    se = ours.se * math.sqrt(ours.n / n)
    return V.Estimate(value, V.MEAN, n=n, se=se, df=ours.df, scale=ours.scale), [
        f"the paper prints no SD: its sampling error is formed from this run's SD at the paper's n ({n:,})"
    ]


def _decide(
    row: dict,
    terms: Sequence[V.Term],
    number: PaperNumber,
    margin: float,
    notes: Sequence[str],
    point: float | None = None,
) -> dict:
    verdict = V.decide(terms, margin, round_by(number), point)
    row.update(margin=margin, difference=verdict.difference, difference_low=verdict.low, difference_high=verdict.high)
    return _done(row, verdict.verdict, [*notes, verdict.why])


def _derive(derived: Derived, unit: str, a: float, b: float) -> float | None:
    """``a`` and ``b`` (this run's numbers of ``derived.of``) combined as ``derived.op`` says, in ``unit``."""
    if derived.op == DIFFERENCE_OP:
        return a - b
    return ((100.0 if unit == "%" else 1.0) * (a - b) / b) if b else None


def _compare_derived(
    number: PaperNumber,
    row: dict,
    reasons: list[str],
    compared: Mapping[str, Mapping],
    registry: Mapping[str, PaperNumber],
    margins: Mapping[str, float],
) -> dict:
    """A difference of two of our rows (``Derived.of``) against the paper's printed difference; a relative gain
    beside the paper's, without a verdict."""
    derived = number.ours
    if derived.op not in DERIVED_OPS or len(derived.of) != 2:
        raise ValueError(
            f"{number.paper}: {number.id}: a derived row is a {' or '.join(DERIVED_OPS)} of two rows, "
            f"got {derived.op} of {derived.of}"
        )
    arms = [compared.get(key) for key in derived.of]
    for key, arm in zip(derived.of, arms):
        if arm is None:
            reasons.append(f"row {key} is not in the report")
        elif arm.get("_estimate") is None:
            reasons.append(f"from {key}: {arm['why'] or 'no estimate'}")
    row["our_source"] = " − ".join(derived.of)
    if number.unit == COUNT and all(arm is not None and arm["ours"] is not None for arm in arms):
        # a difference of two counts is a count: equal or not, no interval (297 = 458 − 161)
        reasons = [r for r in reasons if not r.startswith("from ")]
        row["ours"] = _derive(derived, number.unit, arms[0]["ours"], arms[1]["ours"])
        if reasons:
            return _done(row, NOT_COMPARABLE, reasons)
        verdict = V.compare_counts(row["ours"], number.value)
        row.update(difference=verdict.difference, difference_low=verdict.low, difference_high=verdict.high)
        return _done(row, verdict.verdict, [verdict.why])
    if any(arm is None or arm.get("_estimate") is None for arm in arms):
        if all(arm is not None and arm["ours"] is not None for arm in arms):
            row["ours"] = _derive(derived, number.unit, arms[0]["ours"], arms[1]["ours"])
        return _done(row, NOT_COMPARABLE, reasons)
    a, b = (arm["_estimate"] for arm in arms)
    ours = _derive(derived, number.unit, a.value, b.value)
    kind = a.kind if derived.op == DIFFERENCE_OP else None  # a relative gain has a reason (RELATIVE) and no verdict
    row.update(our_model=arms[0]["our_model"], ours=ours, kind=kind, n=min(a.n, b.n))
    if reasons:
        return _done(row, NOT_COMPARABLE, reasons)
    notes = []
    if derived.paired:
        notes.append("a paired difference computed unpaired (conservative): the result tables hold no pair-level data")
    # the paper's arms: its printed rows where the registry has them, at its n; else exact around our second arm
    paper_rows = [registry.get(key) for key in derived.of]
    values = [p.value if p is not None else None for p in paper_rows]
    if None in values:
        values = [b.value + number.value, b.value]
    with_n = [p if p is not None and p.paper_n else number for p in paper_rows]
    paper = []
    for source, value, ours in zip(with_n, values, (a, b)):
        estimate, said = _paper_estimate(source, ours, value)
        paper.append(estimate)
        notes += [s for s in said if s not in notes]
    terms = [V.Term(1, a, paper[0]), V.Term(-1, b, paper[1])]
    return _decide(row, terms, number, margins[number.unit], notes, point=(a.value - b.value) - number.value)


def _read(row: dict, rows: Sequence[Mapping], filters: Mapping[str, str], ours: Ours, unit: str) -> list[str]:
    """Fill ``row`` from the table ``rows`` that match ``filters``; the reasons it cannot be compared
    (a column the table lacks is named, never a KeyError)."""
    present = set().union(*(r.keys() for r in rows)) if rows else set()
    needed = [ours.column, ours.n, *filters, *(c for c in (ours.low, ours.high) if c)]
    missing = [c for c in dict.fromkeys(needed) if c not in present]
    if rows and missing:
        return [f"column {', '.join(missing)} is not in results/tables/{ours.table}.csv"]
    matching = [r for r in rows if _matches(r, filters)]
    if not matching:
        return ["no matching row in this run's table"]
    row["kind"] = ours.estimate_kind(unit)
    values = [_float(r[ours.column]) for r in matching]
    if ours.total:
        if any(v is None for v in values):
            return ["a row without a value in this run's table"]
        row["ours"] = ours.scale * sum(values)
        row["n"] = int(sum(_float(r[ours.n]) or 0 for r in matching))
        return []
    differ = len(set(values)) > 1
    if differ or (ours.models is not None and len(matching) > 1):  # one model's row must be one row
        return [f"{len(matching)} rows of this run's table match" + (", with different values" if differ else "")]
    found = matching[0]
    n = _float(found[ours.n])
    row["n"] = None if n is None else int(n)
    if values[0] is None:
        return [f"no value in this run (n = {row['n']})"]
    row["ours"] = ours.scale * values[0]
    low, high = (_float(found[c]) if c else None for c in (ours.low, ours.high))
    if low is not None and high is not None and (row["n"] or 0) >= MIN_N_INTERVAL:
        row["low"], row["high"] = ours.scale * low, ours.scale * high
    return []


def describe_run(model_lists: Mapping[str, Sequence[str]], instruments: Mapping[str, Sequence[str]]) -> str:
    """One line: this run's model lists, judge and scorers (``role: models``)."""
    return "; ".join(f"{key}: {_listed(models)}" for key, models in {**model_lists, **instruments}.items()) + "."


def compare_all(numbers: Sequence[PaperNumber], **context) -> list[dict]:
    """:func:`compare` of every number, in order (``context``: its other arguments, ``margins`` among them);
    derived rows after the rows they use."""
    registry = {(n.paper, n.id): n for n in numbers}
    done: dict[int, dict] = {}
    for i, number in enumerate(numbers):
        if not isinstance(number.ours, Derived):
            done[i] = compare(number, **context)
    for i, number in enumerate(numbers):
        if isinstance(number.ours, Derived):
            mine = {numbers[j].id: done[j] for j in done if numbers[j].paper == number.paper}
            papers = {key: n for (paper, key), n in registry.items() if paper == number.paper}
            done[i] = compare(number, **context, compared=mine, registry=papers)
    return [done[i] for i in range(len(numbers))]


# --------------------------------------------------------------------------
# Claims and exclusions


def evaluate_claims(claims: Sequence[Claim], context: ClaimContext) -> list[dict]:
    """Each claim's check on this run: one row (``paper``, ``key``, ``quote``, ``section``, ``page``,
    ``status``, ``numbers`` as ``label = value`` text, ``why``). A check that reads a table or column this run
    lacks (a KeyError) is ``not comparable`` naming it."""
    out = []
    for claim in claims:
        if claim.check is None:
            if not claim.exclusion:
                raise ValueError(f"{claim.paper}: claim {claim.key} has neither a check nor an exclusion")
            result = ClaimCheck(NOT_COMPARABLE, why=claim.exclusion)
        else:
            try:
                result = claim.check(context)
            except KeyError as missing:
                result = ClaimCheck(NOT_COMPARABLE, why=f"missing in this run's results: {missing.args[0]}")
            if result.status not in CLAIM_STATUSES:
                raise ValueError(
                    f"{claim.paper}: claim {claim.key}: status {result.status!r} is none of {CLAIM_STATUSES}"
                )
        numbers = "; ".join(f"{label} = {_number(value)}" for label, value in result.numbers.items())
        out.append(
            {
                "paper": claim.paper,
                "key": claim.key,
                "quote": claim.quote,
                "section": claim.section,
                "page": claim.page or "",
                "status": result.status,
                "numbers": numbers,
                "why": "" if result.status == HOLDS else result.why,
            }
        )
    return out


def _number(value) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _for_paper(numbers: Sequence[PaperNumber], paper: str) -> dict[str, PaperNumber]:
    return {n.id: n for n in numbers if n.paper == paper}


# --------------------------------------------------------------------------
# The plan: what a config can compare, before any model runs


def _planned(number: PaperNumber, caps: Mapping[str, tuple[str, int | None]]) -> tuple[str, int | None]:
    """Our n as configured: "all" (the paper's n: the config reads every item) or the cap's text; the n the
    power is computed at (None where a cap makes it depend on the data)."""
    table = number.ours.table if isinstance(number.ours, Ours) else None
    key, cap = caps.get(table, (None, None))
    if cap is None:
        return "all", number.paper_n
    return f"≤ {cap} per group ({key})", None


def _plan_power(
    number: PaperNumber, registry: Mapping[str, PaperNumber], n: int | None, margins: Mapping[str, float]
) -> tuple[float | None, str]:
    """The chance of ``equivalent`` for a faithful rerun at our planned ``n``, or None and why not."""
    if number.unit == COUNT:
        return None, "a count: equal or differs"
    if n is None or not number.paper_n:
        return None, "our n or the paper's is not known before the run"
    ours = number.ours
    kind = ours.estimate_kind(number.unit) if isinstance(ours, Ours) else None
    arms = [(1, number)]
    if isinstance(ours, Derived):
        arms = [(1, registry.get(ours.of[0])), (-1, registry.get(ours.of[1]))]
        if any(a is None or a.value is None or not isinstance(a.ours, Ours) for _, a in arms):
            return None, "the rows it is derived from are not typed in with their values"
        kind = arms[0][1].ours.estimate_kind(arms[0][1].unit)
    scale = 1.0 if number.unit in ("proportion", "κ") else 100.0
    terms = []
    for sign, arm in arms:
        if kind == V.PROPORTION:
            ours_e = V.Estimate(arm.value, V.PROPORTION, n=n, scale=scale)
            paper_e = V.Estimate(arm.value, V.PROPORTION, n=arm.paper_n or number.paper_n, scale=scale)
        elif arm.paper_sd is not None:
            paper_n = arm.paper_n or number.paper_n
            ours_e = V.Estimate(arm.value, V.MEAN, n=n, se=arm.paper_sd / math.sqrt(n), df=n - 1)
            paper_e = V.Estimate(arm.value, V.MEAN, n=paper_n, se=arm.paper_sd / math.sqrt(paper_n), df=paper_n - 1)
        else:
            return None, "a mean without the paper's SD: its power needs this run's SD"
        terms.append(V.Term(sign, ours_e, paper_e))
    return V.power_equivalent(terms, margins[number.unit], round_by(number)), ""


def plan(
    numbers: Sequence[PaperNumber],
    claims: Sequence[Claim],
    *,
    tables_made: Sequence[str],
    model_lists: Mapping[str, Sequence[str]],
    sources: Mapping[str, str],
    instruments: Mapping[str, Sequence[str]],
    margins: Mapping[str, float] = DEFAULT_MARGINS,
    caps: Mapping[str, tuple[str, int | None]] = {},
) -> list[dict]:
    """For every row and claim, what this config can compare, from the config alone (no table is read).

    ``tables_made``: the table stems this config makes; ``caps``: ``{table
    stem: (config key, cap)}`` of the sampling caps that bound a table's n
    (cap None: every item). Each plan row: ``what`` ("row" or "claim"),
    ``paper``, ``key``, ``table``, ``metric``, ``model``, ``setting``,
    ``value`` (the paper's, None for a claim), ``comparable`` (bool; for a
    claim None where it lists nothing it reads), ``why_not``, ``counted``
    (whether the comparable share counts it: "yes", or why not),
    ``paper_n``, ``our_n`` ("all" or the cap), ``power`` (the chance of
    ``equivalent`` for a faithful rerun, None where it cannot be said before
    the run, with ``power_note``)."""
    out, by_key = [], {}
    for number in numbers:
        reasons, _, _ = _config_reasons(number, model_lists, sources, instruments, margins)
        ours = number.ours
        if number.ours is None and not reasons:
            reasons.append("no counterpart in this run and no caveat")
        if isinstance(ours, Ours) and ours.table not in tables_made and "model absent" not in " ".join(reasons):
            reasons.append(f"results/tables/{ours.table}.csv is not made by this config")
        if isinstance(ours, Derived):
            for key in ours.of:
                arm = by_key.get((number.paper, key))
                if arm is None:
                    reasons.append(f"row {key} is not in the plan (derived rows follow the rows they use)")
                elif not (arm["comparable"] or arm["why_not"] == NO_NUMBER):
                    # a row whose printed value the copy lost still gives our estimate to the row derived from it
                    reasons.append(f"from {key}: {arm['why_not']}")
        our_n, n = _planned(number if not isinstance(ours, Derived) else _arm(numbers, number), caps)
        power, note = (
            (None, "not comparable") if reasons else _plan_power(number, _for_paper(numbers, number.paper), n, margins)
        )
        row = {
            "what": "row",
            "paper": number.paper,
            "key": number.id,
            "table": number.table or "",
            "metric": number.metric,
            "model": number.model,
            "setting": number.setting,
            "value": number.value,
            "comparable": not reasons,
            "why_not": "; ".join(reasons),
            "counted": _counted(number.value, reasons),
            "paper_n": number.paper_n,
            "our_n": our_n,
            "power": power,
            "power_note": note,
        }
        by_key[(number.paper, number.id)] = row
        out.append(row)
    for claim in claims:
        if claim.check is None:
            ok, why = False, claim.exclusion or "neither a check nor an exclusion"
        elif not claim.reads:
            ok, why = None, "unknown before the run: the claim does not list what it reads (Claim.reads)"
        else:
            found = []
            for item in claim.reads:
                if isinstance(item, Reads):
                    found += _reads_reasons(item, tables_made, model_lists, sources, instruments)
                    continue
                r = by_key.get((claim.paper, item))
                if not (r and r["comparable"]):
                    found.append(f"row {item}: " + (r["why_not"] if r else "not in the registry"))
            ok, why = not found, "; ".join(dict.fromkeys(found))
        out.append(
            {
                "what": "claim",
                "paper": claim.paper,
                "key": claim.key,
                "table": claim.section,
                "metric": claim.quote,
                "model": None,
                "setting": "",
                "value": None,
                "comparable": ok,
                "why_not": why,
                "counted": _counted("", [why] if ok is False else []),
                "paper_n": None,
                "our_n": "",
                "power": None,
                "power_note": "",
            }
        )
    return out


def _counted(value, reasons: Sequence[str]) -> str:
    """Whether the comparable share counts a plan row ("yes"), or why not: a row without a printed value is no
    number of the paper to reproduce (it carries our estimate into a derived row, or names a figure whose
    values the copy lacks), one that needs the paper's unreleased human labels no config can compare, and a relative
    gain, which gets no verdict (the cells it is formed from are counted)."""
    if value is None:
        return "no: " + NO_NUMBER
    if any(for_unreleased_human_labels(r) for r in reasons):
        return "no: the paper's human labels are unreleased"
    if RELATIVE in reasons:
        return "no: a relative gain, shown without a verdict (its cells are counted)"
    return "yes"


def _reads_reasons(
    reads: Reads,
    tables_made: Sequence[str],
    model_lists: Mapping[str, Sequence[str]],
    sources: Mapping[str, str],
    instruments: Mapping[str, Sequence[str]],
) -> list[str]:
    """Why this config cannot give a claim what ``reads`` names (empty: it can)."""
    configured = list(model_lists.get(reads.model_list, ()))
    found = [m for name in reads.models for m in configured if paper_model_name(m, sources.get(m), [name])]
    found = list(dict.fromkeys(found))
    need = len(reads.models) if reads.at_least is None else reads.at_least
    reasons = []
    if reads.models and len(found) < need:
        reasons.append(
            f"model absent: {len(found)} of the paper's {', '.join(reads.models)} in {reads.model_list} "
            f"(this run: {_listed(configured)}); the claim needs {need}"
        )
    scorers = list(instruments.get("scorer", ()))
    for wanted in reads.scorers:
        if not any(paper_model_name(m, sources.get(m), [wanted]) for m in scorers):
            reasons.append(f"scorer absent: {wanted} is not in scorers (this run: {_listed(scorers)})")
    stems = [reads.table.format(model=m) for m in found] if "{model}" in reads.table else [reads.table]
    reasons += [f"results/tables/{stem}.csv is not made by this config" for stem in stems if stem not in tables_made]
    return reasons


def _arm(numbers: Sequence[PaperNumber], derived: PaperNumber) -> PaperNumber:
    """The first row a derived row uses (its n is the derived row's), else the derived row itself."""
    return _for_paper(numbers, derived.paper).get(derived.ours.of[0], derived)


def _share(done: int, of: int, noun: str) -> str:
    return f"{done} of {of} {noun} ({100 * done / of:.0f}%)" if of else f"no {noun}"


def plan_shares(rows: Sequence[Mapping], paper: str | None = None) -> dict[str, tuple[int, int]]:
    """``{"rows": (comparable, counted), "claims": (checkable, counted)}`` of ``paper``'s plan rows (None: every
    paper's); the counted rows and claims leave out those whose ``counted`` says why not (no printed value,
    the paper's unreleased human labels)."""
    mine = [r for r in rows if r["counted"] == "yes" and (paper is None or r["paper"] == paper)]
    return {
        what: (sum(r["comparable"] is True for r in mine if r["what"] == kind), sum(r["what"] == kind for r in mine))
        for what, kind in (("rows", "row"), ("claims", "claim"))
    }


def plan_summary(rows: Sequence[Mapping]) -> list[str]:
    """Lines: per paper and in all, the comparable share of its rows and the checkable share of its claims (of
    those counted: :func:`plan_shares`), and what is left out of the count."""
    lines = []
    for paper in [*dict.fromkeys(r["paper"] for r in rows), None]:
        mine = [r for r in rows if paper is None or r["paper"] == paper]
        shares = plan_shares(rows, paper)
        left_out = [r for r in mine if r["counted"] != "yes"]
        unknown = sum(r["comparable"] is None for r in mine)
        lines.append(
            f"{paper or 'all papers'}: comparable share: {_share(*shares['rows'], 'rows')}; "
            f"claims checkable: {_share(*shares['claims'], 'claims')}"
            + (f" ({unknown} unknown before the run)" if unknown else "")
            + f"; not counted: {sum(r['what'] == 'row' for r in left_out)} rows and "
            f"{sum(r['what'] == 'claim' for r in left_out)} claims (no printed value, unreleased human labels, or a "
            "relative gain)"
        )
    return lines


# --------------------------------------------------------------------------
# Rendering


def format_value(value: float | None, unit: str) -> str:
    """The paper's value as printed: ``24.8``, ``68.0``, ``0.5208``, ``5,781``; ``–`` for none."""
    if value is None:
        return "–"
    if unit == COUNT:
        return f"{round(value):,}"
    # a float keeps no trailing zero: a percentage shows at least the one decimal the papers print
    return f"{value:.1f}" if unit == "%" and value == round(value, 1) else f"{value:g}"


def _decimals(unit: str) -> int:
    return DECIMALS.get(unit, 1)


def format_ours(row: Mapping) -> str:
    """``gpt-oss-20b: 34.1 [28.0, 40.2]`` in the paper's unit; ``–`` without a value."""
    if row["ours"] is None:
        return f"{row['our_model']}: –" if row["our_model"] else "–"
    decimals = _decimals(row["unit"])
    if row["unit"] == COUNT:
        text = f"{round(row['ours']):,}"
    else:
        text = f"{row['ours']:.{decimals}f}"
        if row["low"] is not None:
            text += f" [{row['low']:.{decimals}f}, {row['high']:.{decimals}f}]"
    return f"{row['our_model']}: {text}" if row["our_model"] else text


def format_difference(row: Mapping) -> str:
    """``+0.2 [−10.8, 15.5] (±3)``: ours − paper, its 95% interval with both samples and the paper's rounding,
    and the margin; ``–`` where not compared."""
    if row["difference"] is None:
        return "–"
    d = _decimals(row["unit"])
    if row["unit"] == COUNT:
        return f"{row['difference']:+,.0f}"
    return (
        f"{row['difference']:+.{d}f} [{row['difference_low']:.{d}f}, {row['difference_high']:.{d}f}]"
        f" (±{row['margin']:g})"
    )


def _n(value) -> str:
    return "–" if value is None or value == "" else f"{int(value):,}"


# The report's columns: (header, cell text of a row).
COLUMNS: tuple[tuple[str, Callable[[Mapping], str]], ...] = (
    ("metric", lambda r: r["metric"]),
    ("model (paper's name)", lambda r: r["model"] or "–"),
    ("setting", lambda r: r["setting"]),
    (
        "paper",
        lambda r: (
            (r.get("printed") or format_value(r["value"], r["unit"]))
            + ("" if r["unit"] == COUNT or r["value"] is None else f" {r['unit']}")
        ),
    ),
    ("paper n", lambda r: _n(r["paper_n"])),
    ("this run [95% CI]", format_ours),
    ("our n", lambda r: _n(r["our_n"])),
    ("ours − paper [95% CI] (margin)", format_difference),
    ("verdict", lambda r: r["verdict"]),
    ("why / note", lambda r: "; ".join(t for t in (r["why"], r["note"]) if t)),
    ("paper's source", lambda r: r["source"]),
    ("this run's source", lambda r: r["our_source"] or "–"),
)
CLAIM_COLUMNS = ("section", "page", "quote", "status", "numbers", "why")
# The CSV outputs' columns (results/reproduction.csv, results/reproduction_claims.csv, results/reproduction_plan.csv).
CSV_COLUMNS = (
    "paper",
    "table",
    "key",
    "metric",
    "model",
    "setting",
    "unit",
    "value",
    "paper_n",
    "our_model",
    "ours",
    "low",
    "high",
    "our_n",
    "kind",
    "difference",
    "difference_low",
    "difference_high",
    "margin",
    "verdict",
    "why",
    "note",
    "source",
    "our_source",
)
CLAIM_CSV_COLUMNS = ("paper", "key", "section", "page", "quote", "status", "numbers", "why")
PLAN_CSV_COLUMNS = (
    "what",
    "paper",
    "key",
    "table",
    "metric",
    "model",
    "setting",
    "value",
    "comparable",
    "why_not",
    "counted",
    "paper_n",
    "our_n",
    "power",
    "power_note",
)


def csv_text(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """``rows`` as CSV text with ``columns`` (None as an empty cell)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row[c] for c in columns])
    return buffer.getvalue()


def counts(rows: Sequence[Mapping]) -> dict[str, int]:
    """Rows per verdict, and ``model absent`` and ``underpowered`` (reasons among others)."""
    found = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    found["model absent"] = sum("model absent" in r["why"] for r in rows)
    found["underpowered"] = sum("underpowered" in r["why"] for r in rows)
    return found


def summary_line(rows: Sequence[Mapping], claims: Sequence[Mapping] = ()) -> str:
    """ "k of N rows equivalent, m differ, …; c of C claims hold" for one paper's rows and claims."""
    c = counts(rows)
    parts = [
        f"{c[EQUIVALENT]} of {len(rows)} rows equivalent",
        f"{c[EQUAL]} equal (counts)",
        f"{c[DIFFERS]} differ",
        f"{c[INCONCLUSIVE]} inconclusive (underpowered: {c['underpowered']})",
        f"{c[NOT_COMPARABLE]} not comparable",
    ]
    held = sum(r["status"] == HOLDS for r in claims)
    return ", ".join(parts) + f"; {held} of {len(claims)} claims hold, {sum(r['status'] == FAILS for r in claims)} fail"


INTRO = (
    "Each paper's numbers, as its text copy states them, beside the number this run produced for the same model and "
    "setting, "
    "in the paper's unit, with its 95% interval and n. The verdict compares the difference ours − paper, with a 95% "
    "interval "
    "that holds both samples (Newcombe's hybrid score interval for proportions, Welch's for means; the paper's n from "
    "the "
    "paper) widened by the paper's rounding (half a unit of its last printed digit), with the unit's equivalence "
    "margin: "
    "equivalent = the 90% interval lies within ± the margin; differs = the 95% interval excludes 0; inconclusive = "
    "neither "
    "(underpowered: even a perfect match at our n could not lie within the margin, so a run this small cannot say); "
    "equal / differs for a count; not comparable = the reasons given. Only equivalent, equal and holds are green. "
    "docs/reproduction.md explains the margins and the calibration of these verdicts by simulation."
)


def cited(paper: Paper) -> str:
    """``Cited as arXiv:2305.14739.``: the paper's public identifiers."""
    return f"Cited as {', '.join(paper.cite)}."


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(_md_cell(c) for c in line) + " |" for line in body),
    ]


def _groups(rows: Sequence[Mapping]) -> dict[str, list[Mapping]]:
    """Rows by the paper's table or figure, in first-seen order."""
    groups: dict[str, list[Mapping]] = {}
    for row in rows:
        groups.setdefault(row["table"] or "other rows", []).append(row)
    return groups


def why_none_equivalent(rows: Sequence[Mapping]) -> str:
    """Where no row of ``rows`` (one paper's) is ``equivalent``, one sentence on why, from the rows' verdicts and
    reasons (a demo's models are not the paper's, and its n is far too small); empty where one is."""
    c = counts(rows)
    if not rows or c[EQUIVALENT]:
        return ""
    other = c[NOT_COMPARABLE] - c["model absent"]
    differ = [r for r in rows if r["verdict"] == DIFFERS]
    parts = [
        f"{c['model absent']} rows are of models this run does not have" if c["model absent"] else "",
        f"{c['underpowered']} are underpowered (even a perfect match at this run's n could not be equivalent)"
        if c["underpowered"]
        else "",
        f"{c[INCONCLUSIVE] - c['underpowered']} others are inconclusive" if c[INCONCLUSIVE] > c["underpowered"] else "",
        f"{c[DIFFERS]} differ"
        + (
            " (counts: this run's sample is not the paper's whole set)"
            if all(r["unit"] == COUNT for r in differ)
            else ""
        )
        if differ
        else "",
        f"{other} are not comparable for the other reasons their rows give" if other > 0 else "",
    ]
    return "No row is equivalent: " + "; ".join(part for part in parts if part)


def _sections(papers, rows, claims, exclusions):
    """Per paper: (paper, its summary line with why no row is equivalent where none is, its rows by table, its
    claims, its exclusions)."""
    for paper in papers:
        mine = [r for r in rows if r["paper"] == paper.key]
        said = [c for c in claims if c["paper"] == paper.key]
        line = ". ".join(t for t in (summary_line(mine, said), why_none_equivalent(mine)) if t)
        yield paper, line, _groups(mine), said, [e for e in exclusions if e.paper == paper.key]


def render_markdown(
    papers: Sequence[Paper],
    rows: Sequence[Mapping],
    *,
    run: str,
    claims: Sequence[Mapping] = (),
    exclusions: Sequence[Exclusion] = (),
) -> str:
    """The report as Markdown. ``rows``: :func:`compare_all`'s; ``claims``: :func:`evaluate_claims`'s;
    ``exclusions``: the papers' exclusion lists; ``run``: one line on this run's models and judge."""
    out = [
        "# Reproduction report: the papers' numbers and claims beside this run's",
        "",
        INTRO,
        "",
        f"This run: {run}",
        "",
    ]
    for paper, line, groups, said, excluded in _sections(papers, rows, claims, exclusions):
        out += [
            "",
            f"## {paper.title}",
            "",
            f"**{line}.**",
            "",
            f"{cited(paper)} {paper.note}",
        ]
        for table, mine in groups.items():
            out += ["", f"### {table}", ""]
            out += _md_table([h for h, _ in COLUMNS], [[cell(r) for _, cell in COLUMNS] for r in mine])
        if said:
            out += ["", "### Claims", ""] + _md_table(CLAIM_COLUMNS, [[c[k] for k in CLAIM_COLUMNS] for c in said])
        if excluded:
            out += ["", "### Numbers that are no row", ""]
            out += _md_table(("what", "source", "reason"), [[e.what, e.source, e.reason] for e in excluded])
    return "\n".join(out) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 120em; color: #222; line-height: 1.4; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.equivalent, td.equal, td.holds { background: #e3f4e1; } td.differs, td.fails { background: #fde8e8; }
td.inconclusive { background: #fff6db; } td.notcomparable { background: #f3f3f3; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""


def _html_table(head: Sequence[str], body: Sequence[Sequence[str]], marked: int | None = None) -> str:
    """An HTML table; the cells of column ``marked`` get their text (spaces dropped) as their class."""
    lines = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for line in body:
        cells = [f'<td class="{str(text).replace(" ", "")}">' if j == marked else "<td>" for j, text in enumerate(line)]
        lines.append("<tr>" + "".join(f"{td}{html.escape(str(text))}</td>" for td, text in zip(cells, line)) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def verdict_table_html(rows: Sequence[Mapping], columns=COLUMNS) -> str:
    """Report rows as an HTML table whose verdict cells are coloured (also used by the model profile pages)."""
    head = [h for h, _ in columns]
    return _html_table(head, [[cell(r) for _, cell in columns] for r in rows], head.index("verdict"))


def render_html(
    papers: Sequence[Paper],
    rows: Sequence[Mapping],
    *,
    run: str,
    claims: Sequence[Mapping] = (),
    exclusions: Sequence[Exclusion] = (),
) -> str:
    """The report as one self-contained HTML page (the same content as :func:`render_markdown`)."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Reproduction report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Reproduction report: the papers' numbers and claims beside this run's</h1>",
        f'<p class="note">{html.escape(INTRO)}</p>',
        f"<p><b>This run:</b> {html.escape(run)}</p>",
    ]
    for paper, line, groups, said, excluded in _sections(papers, rows, claims, exclusions):
        out += [
            f"<h2>{html.escape(paper.title)}</h2>",
            f"<p><b>{html.escape(line)}.</b></p>",
            f'<p class="note">{html.escape(cited(paper))} {html.escape(paper.note)}</p>',
        ]
        for table, mine in groups.items():
            out += [f"<h3>{html.escape(table)}</h3>", verdict_table_html(mine)]
        if said:
            out += [
                "<h3>Claims</h3>",
                _html_table(
                    CLAIM_COLUMNS, [[c[k] for k in CLAIM_COLUMNS] for c in said], CLAIM_COLUMNS.index("status")
                ),
            ]
        if excluded:
            out += [
                "<h3>Numbers that are no row</h3>",
                _html_table(("what", "source", "reason"), [[e.what, e.source, e.reason] for e in excluded]),
            ]
    out.append("</body></html>")
    return "\n".join(out) + "\n"

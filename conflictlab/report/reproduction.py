"""The reproduction report: each paper's headline numbers beside this run's.

Each benchmark package types in its paper's numbers
(``conflictlab.<benchmark>.paper_numbers``: a :class:`Paper` and its
:class:`PaperNumber` rows), since a paper's particulars belong to its
benchmark; this module, below the benchmarks, holds the record types,
finds this run's number of each row in the result tables
(``results/tables/*.csv``) and renders the report.

A row's verdict, from this run's estimate and its 95% interval (the one
its table gives: Wilson for proportions, percentile bootstrap for means),
converted to the paper's unit:

- ``inside``: the paper's value, as printed, lies inside our interval:
  sampling allows it;
- ``outside``: it does not;
- ``equal`` / ``differs``: a count (of samples, queries, records), which
  has no interval;
- ``not comparable``, with every reason that applies: the paper's text
  copy gives no number; the number cannot be matched whatever the run
  holds (``caveat``: unreleased human labels, a setting the text leaves
  open, a difference of two rows); the paper's model is absent from this
  config's model list; a judge or scorer other than the paper's (or one
  the paper does not name); no table, no row, no value, or n < 2 (no
  interval).

Every row shows our n. Matching a paper's model name to a configured
model is :func:`conflictlab.report.paper_models.paper_model_name`.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from conflictlab.report.paper_models import paper_model_name
from conflictlab.stats import MIN_N_INTERVAL

INSIDE, OUTSIDE, EQUAL, DIFFERS, NOT_COMPARABLE = "inside", "outside", "equal", "differs", "not comparable"
VERDICTS = (INSIDE, OUTSIDE, EQUAL, DIFFERS, NOT_COMPARABLE)
COUNT = "count"
# Decimals of this run's estimate by the paper's unit (others: one).
DECIMALS = {"κ": 3, "proportion": 2, "log-likelihood": 3}


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    file: str  # its text copy in ../shared/papers/
    note: str  # what the copy holds, and what holds for every row


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


@dataclass(frozen=True)
class Instrument:
    """The model a number depends on besides the one it is of."""

    role: str  # "judge" (judges.model), "conflicts judge" (conflicts.judge over judges) or "scorer" (scorers)
    name: str | None  # the paper's; None where the paper names none


@dataclass(frozen=True)
class Derived:
    """This run's number computed from other rows of the same paper (by
    :attr:`PaperNumber.key`): ``difference`` is ``of[0] - of[1]``, in the
    rows' unit; ``paired`` when both rows are over the same items (a
    steered and an unsteered run of one model), which the verdict uses for
    the difference's interval."""

    op: str  # "difference"
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
    result CSVs), ``rows`` (the compared report rows by
    :attr:`PaperNumber.id`, each a :func:`compare` dict), ``model_lists``
    and ``sources`` as :func:`compare` takes them."""

    tables: Mapping[str, Sequence[Mapping]]
    rows: Mapping[str, Mapping]
    model_lists: Mapping[str, Sequence[str]]
    sources: Mapping[str, str]

    def model(self, paper_name: str, model_list: str) -> str | None:
        """This run's model (in config list ``model_list``) that the paper calls ``paper_name``."""
        configured = self.model_lists.get(model_list, ())
        return next((m for m in configured if paper_model_name(m, self.sources.get(m), [paper_name])), None)


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


def compare(
    number: PaperNumber,
    tables: Mapping[str, Sequence[Mapping]],
    model_lists: Mapping[str, Sequence[str]],
    sources: Mapping[str, str],
    instruments: Mapping[str, Sequence[str]],
) -> dict:
    """``number`` beside this run's: one report row (a dict).

    ``tables``: ``{table stem: rows}`` of the result tables this run made;
    ``model_lists``: ``{config key: models}``; ``sources``: each configured
    model's source (``hf:<repo>``, ``hosted:<id>``, ...); ``instruments``:
    ``{"judge": [judges.model], "scorer": scorers}``. The row holds the
    paper's value, ours (``our_model``, ``ours``, ``low``, ``high``, ``n``
    in the paper's unit), ``verdict`` and ``why`` (the reasons, ``; ``-joined).
    """
    row = {"paper": number.paper, "metric": number.metric, "model": number.model, "setting": number.setting,
           "value": number.value, "unit": number.unit, "source": number.source, "note": number.note,
           "our_model": None, "ours": None, "low": None, "high": None, "n": None, "our_source": None}
    reasons = []
    if number.value is None:
        reasons.append("no number in the paper's text copy")
    if number.caveat:
        reasons.append(number.caveat)
    ours = number.ours
    if ours is None:
        if not reasons:
            raise ValueError(f"{number.paper}: '{number.metric}' of {number.model}: a paper number without ours needs a caveat")
        return {**row, "verdict": NOT_COMPARABLE, "why": "; ".join(reasons)}

    filters = dict(ours.where)
    present = True
    if ours.models is not None:
        configured = list(model_lists.get(ours.models, ()))
        found = next((m for m in configured if paper_model_name(m, sources.get(m), [number.model])), None)
        if found is None:
            present = False
            reasons.append(f"model absent: {number.model} is not in {ours.models} (this run: {_listed(configured)})")
        else:
            row["our_model"] = filters["model"] = found
    if number.instrument is not None:
        role, wanted = number.instrument.role, number.instrument.name
        candidates = list(instruments.get(role, ()))
        chosen = next((m for m in candidates if wanted and paper_model_name(m, sources.get(m), [wanted])), None)
        if chosen is None:
            chosen = candidates[0] if candidates else None
            reasons.append(f"different {role}: the paper's is {wanted}; this run's is {chosen or 'none'}" if wanted
                           else f"unknown {role}: the paper names none; this run's is {chosen or 'none'}")
        if ours.instrument_column and chosen:
            filters[ours.instrument_column] = chosen
    row["our_source"] = f"results/tables/{ours.table}.csv: {ours.column}" + "".join(f", {k} = {v}" for k, v in filters.items())

    if present:
        rows = tables.get(ours.table)
        if rows is None:
            reasons.append(f"results/tables/{ours.table}.csv is not made in this run")
        else:
            reasons += _read(row, [r for r in rows if _matches(r, filters)], ours)
    if reasons:
        return {**row, "verdict": NOT_COMPARABLE, "why": "; ".join(reasons)}
    if number.unit == COUNT:
        return {**row, "verdict": EQUAL if round(row["ours"]) == round(number.value) else DIFFERS, "why": ""}
    if row["low"] is None:
        return {**row, "verdict": NOT_COMPARABLE,
                "why": f"no interval (n = {row['n']} < {MIN_N_INTERVAL})" if (row["n"] or 0) < MIN_N_INTERVAL else "no interval in the table"}
    # the scaled bounds carry float error (100 * 0.14 is 14.000000000000002): a bound equal to the printed value counts as inside
    slack = 1e-9 * max(1.0, abs(number.value))
    inside = row["low"] - slack <= number.value <= row["high"] + slack
    return {**row, "verdict": INSIDE if inside else OUTSIDE, "why": ""}


def _read(row: dict, matching: Sequence[Mapping], ours: Ours) -> list[str]:
    """Fill ``row`` from the ``matching`` table rows; the reasons it cannot be compared."""
    if not matching:
        return ["no matching row in this run's table"]
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
    """:func:`compare` of every number, in order (``context``: its other arguments)."""
    return [compare(number, **context) for number in numbers]


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


def format_ours(row: Mapping) -> str:
    """``gpt-oss-20b: 34.1 [28.0, 40.2]`` in the paper's unit; ``–`` without a value."""
    if row["ours"] is None:
        return f"{row['our_model']}: –" if row["our_model"] else "–"
    decimals = DECIMALS.get(row["unit"], 1)
    if row["unit"] == COUNT:
        text = f"{round(row['ours']):,}"
    else:
        text = f"{row['ours']:.{decimals}f}"
        if row["low"] is not None:
            text += f" [{row['low']:.{decimals}f}, {row['high']:.{decimals}f}]"
    return f"{row['our_model']}: {text}" if row["our_model"] else text


# The report's columns: (header, cell text of a row).
COLUMNS: tuple[tuple[str, Callable[[Mapping], str]], ...] = (
    ("metric", lambda r: r["metric"]),
    ("model (paper's name)", lambda r: r["model"] or "–"),
    ("setting", lambda r: r["setting"]),
    ("paper", lambda r: format_value(r["value"], r["unit"]) + ("" if r["unit"] == COUNT or r["value"] is None else f" {r['unit']}")),
    ("this run [95% CI]", format_ours),
    ("n", lambda r: "–" if r["n"] is None else f"{r['n']:,}"),
    ("verdict", lambda r: r["verdict"]),
    ("why / note", lambda r: "; ".join(t for t in (r["why"], r["note"]) if t)),
    ("paper's source", lambda r: r["source"]),
    ("this run's source", lambda r: r["our_source"] or "–"),
)


def counts(rows: Sequence[Mapping]) -> dict[str, int]:
    """Rows per verdict, and ``model absent`` (not comparable for that reason among others)."""
    found = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    found["model absent"] = sum("model absent" in r["why"] for r in rows)
    return found


def _summary(papers: Sequence[Paper], rows: Sequence[Mapping]) -> tuple[list[str], list[list[str]]]:
    head = ["paper", "rows", *VERDICTS, "of which model absent"]
    body = []
    for paper in papers:
        mine = [r for r in rows if r["paper"] == paper.key]
        c = counts(mine)
        body.append([paper.title, str(len(mine)), *(str(c[v]) for v in VERDICTS), str(c["model absent"])])
    return head, body


INTRO = (
    "Each paper's headline numbers, as its text copy states them (the copies' tables lost their cells; a number the text does "
    "not state is shown as – with the table it was in), beside the number this run produced for the same model and setting, "
    "in the paper's unit, with its 95% interval (as the named table gives it: Wilson for proportions, percentile bootstrap "
    "for means; none at n < 2) and its n. Verdict: inside = the paper's value lies inside this run's interval (sampling "
    "allows it); outside = it does not; equal / differs = a count; not comparable = the reasons given. The paper's value "
    "is compared as printed (rounded). This run's numbers stand on this run's samples (for the demo, a few per subset), "
    "the paper's on its full data."
)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(_md_cell(c) for c in line) + " |" for line in body)]


def render_markdown(papers: Sequence[Paper], rows: Sequence[Mapping], *, run: str) -> str:
    """The report as Markdown. ``rows``: :func:`compare_all`'s; ``run``: one
    line on this run's models and judge."""
    out = ["# Reproduction report: the papers' headline numbers beside this run's", "", INTRO, "", f"This run: {run}", ""]
    out += _md_table(*_summary(papers, rows))
    for paper in papers:
        out += ["", f"## {paper.title}", "", f"Text copy: `../shared/papers/{paper.file}`. {paper.note}", ""]
        out += _md_table([h for h, _ in COLUMNS], [[cell(r) for _, cell in COLUMNS] for r in rows if r["paper"] == paper.key])
    return "\n".join(out) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 110em; color: #222; line-height: 1.4; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.inside, td.equal { background: #e3f4e1; } td.outside, td.differs { background: #fde8e8; }
td.notcomparable { background: #f3f3f3; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""


def _html_table(head: Sequence[str], body: Sequence[Sequence[str]], classes: Sequence[Sequence[str]] | None = None) -> str:
    lines = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for i, line in enumerate(body):
        cells = [f'<td class="{classes[i][j]}">' if classes and classes[i][j] else "<td>" for j in range(len(line))]
        lines.append("<tr>" + "".join(f"{td}{html.escape(text)}</td>" for td, text in zip(cells, line)) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def render_html(papers: Sequence[Paper], rows: Sequence[Mapping], *, run: str) -> str:
    """The report as one self-contained HTML page (the same content as :func:`render_markdown`)."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>Reproduction report</title>",
           f"<style>{_STYLE}</style></head><body>", "<h1>Reproduction report: the papers' headline numbers beside this run's</h1>",
           f'<p class="note">{html.escape(INTRO)}</p>', f"<p><b>This run:</b> {html.escape(run)}</p>",
           _html_table(*_summary(papers, rows))]
    verdict_column = [h for h, _ in COLUMNS].index("verdict")
    for paper in papers:
        mine = [r for r in rows if r["paper"] == paper.key]
        out += [f"<h2>{html.escape(paper.title)}</h2>",
                f'<p class="note">Text copy: <code>../shared/papers/{html.escape(paper.file)}</code>. {html.escape(paper.note)}</p>']
        body = [[cell(r) for _, cell in COLUMNS] for r in mine]
        classes = [["" if j != verdict_column else r["verdict"].replace(" ", "") for j in range(len(COLUMNS))] for r in mine]
        out.append(_html_table([h for h, _ in COLUMNS], body, classes))
    out.append("</body></html>")
    return "\n".join(out) + "\n"

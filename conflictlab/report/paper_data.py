"""A paper's published numbers as data: ``conflictlab/papers/<paper>.yaml``, checked against
``conflictlab/papers/paper.schema.yaml`` and read into the report's records (:mod:`conflictlab.report.reproduction`).

A file holds the paper's report key, title, public identifiers (arXiv id or DOI), a note, and its rows: a
number row (key, table, metric, model, setting, value as printed, unit, the paper's n, where in the paper, this
run's counterpart ``ours`` or ``derived``, caveat, note) or an exclusion row (``what``, ``source``,
``excluded``: the reason it is no row). YAML, because a row's source quote and note are prose that reads best
as text blocks, and a value quoted as a string keeps what the paper printed ("68.0", "5,781"); the schema
refuses an unquoted number, which YAML would read as a float and lose its trailing zero. The claims that read
the rows stay code, in the module the benchmark's descriptor names (``claims``).

Every error names the file, the row (its index and key) and the field. :func:`load_paper` checks, beyond the
schema: unique keys, derived rows that name rows of the same paper, and a caveat on a row with no counterpart.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from conflictlab.report.reproduction import Claim, Derived, Exclusion, Instrument, Ours, Paper, PaperNumber

# libyaml's loader where PyYAML has it (the files are read at every workflow start), else the pure-Python one
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FOLDER = Path(__file__).resolve().parent.parent / "papers"
SCHEMA = FOLDER / "paper.schema.yaml"


class PaperDataError(ValueError):
    """A paper file that does not hold what the schema and the report need; the message names file, row, field."""


@dataclass(frozen=True)
class PaperRecord:
    """One paper as the report reads it: its header, rows, exclusions and claims (the claims module's)."""

    paper: Paper
    numbers: tuple[PaperNumber, ...]
    exclusions: tuple[Exclusion, ...]
    claims: tuple[Claim, ...] = ()
    path: Path | None = None


def paper_file(name: str) -> Path:
    """The data file of paper ``name`` (a benchmark descriptor's ``paper``)."""
    return FOLDER / f"{name}.yaml"


@functools.cache
def _schema() -> dict:
    return yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))


def _validate(instance, definition: str | None, where: str) -> None:
    """``instance`` against the whole schema (``definition`` None) or one of its ``$defs``; the first error,
    deepest first, as a :class:`PaperDataError` naming ``where`` and the field."""
    schema = _schema()
    if definition is not None:
        schema = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: (-len(e.absolute_path), str(e.absolute_path)))
    if errors:
        error = errors[0]
        field = ".".join(str(p) for p in error.absolute_path) or "(the whole entry)"
        raise PaperDataError(f"{where}: field {field}: {error.message}")


def parse_printed(text: str) -> int | float:
    """The number a printed value stands for: ``"5,781"`` -> 5781, ``"68.0"`` -> 68.0."""
    plain = text.replace(",", "")
    return float(plain) if "." in plain else int(plain)


def decimals_printed(text: str) -> int:
    """The digits after the point as printed: ``"68.0"`` -> 1, ``"5,781"`` -> 0."""
    return len(text.partition(".")[2])


def _counterpart(row: dict) -> Ours | Derived | None:
    """This run's counterpart of a number row: ``ours`` (a table's cells) or ``derived`` (from other rows)."""
    if row.get("ours"):
        return Ours(**row["ours"])
    if row.get("derived"):
        derived = row["derived"]
        return Derived(derived["op"], tuple(derived["of"]), derived.get("paired", False))
    return None


def _number(paper: str, row: dict) -> PaperNumber:
    printed = row.get("value")
    instrument = row.get("instrument")
    return PaperNumber(
        paper,
        row["metric"],
        row["model"],
        row["setting"],
        None if printed is None else parse_printed(printed),
        row["unit"],
        row["source"],
        ours=_counterpart(row),
        instrument=Instrument(**instrument) if instrument else None,
        caveat=row.get("caveat"),
        note=row.get("note"),
        paper_n=row.get("paper_n"),
        paper_sd=row.get("paper_sd"),
        decimals=None if printed is None else decimals_printed(printed),
        table=row["table"],
        key=row["key"],
        printed=printed,
    )


def load_paper(path: str | Path, claims: Sequence[Claim] = ()) -> PaperRecord:
    """The paper in ``path``, checked (:class:`PaperDataError` on the first problem), with ``claims``."""
    path = Path(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.YAMLError as error:
        raise PaperDataError(f"{path}: not YAML: {error}") from error
    _validate({**data, "rows": []} if isinstance(data, dict) else data, None, str(path))
    paper = data["paper"]
    numbers, exclusions, keys = [], [], {}
    for i, row in enumerate(data["rows"]):
        where = f"{path}: row {i + 1}" + (f" (key {row['key']})" if isinstance(row, dict) and "key" in row else "")
        if isinstance(row, dict) and "excluded" in row:
            _validate(row, "exclusion", where)
            exclusions.append(Exclusion(paper, row["what"], row["source"], row["excluded"]))
            continue
        _validate(row, "number", where)
        if row["key"] in keys:
            raise PaperDataError(f"{where}: field key: {row['key']!r} is also row {keys[row['key']]}'s")
        if not row.get("ours") and not row.get("derived") and not row.get("caveat") and row.get("value") is not None:
            raise PaperDataError(f"{where}: field caveat: a printed value without ours or derived needs a caveat")
        keys[row["key"]] = i + 1
        numbers.append(_number(paper, row))
    for number in numbers:
        if isinstance(number.ours, Derived):
            for key in number.ours.of:
                if key not in keys:
                    raise PaperDataError(f"{path}: row key {number.key}: field derived.of: no row {key!r} in {paper}")
    for claim in claims:
        if claim.paper != paper:
            raise PaperDataError(f"{path}: claim {claim.key} is of paper {claim.paper!r}, not {paper!r}")
        for key in claim.reads:
            if isinstance(key, str) and key not in keys:
                raise PaperDataError(f"{path}: claim {claim.key} reads row {key!r}, which {paper} does not have")
    header = Paper(paper, data["title"], tuple(data["cite"]), data["note"])
    return PaperRecord(header, tuple(numbers), tuple(exclusions), tuple(claims), path)

"""The paper's risk-proportional audit (ContextConflict §2.2) as annotation sheets, and reading them back.

Which items go on the sheets (seeded):

* ``double``: subsets whose perturbation can flip the gold label (the paper:
  FOLIO / EntailmentBank inferential, ConflictBank temporal): every
  constructed instance, labelled by two annotators (A and B) independently;
* ``sampled``: augmentations that rarely change the label (SciFact
  misinformation): a ``sample_rate`` share (paper: 30%), one annotator;
* ``spot``: preserved originals (released subsets the workflow reads and
  this construction does not make): a ``spot_rate`` share (paper: 10%), one annotator.

A share is rounded up (at least one item of a non-empty subset). Each
annotator gets one CSV sheet and a static HTML form that fills the same
columns; :func:`read_sheets` reads completed CSVs strictly and
:func:`agreement` reports percent agreement of the double-annotated items
with a Wilson interval (:func:`conflictlab.stats.wilson_interval`), the
disagreements, and the share judged wrong per subset.
"""

from __future__ import annotations

import csv
import html
import math
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pyarrow as pa

from conflictlab.stats import wilson_interval

VERDICTS = ("ok", "wrong")
SHEET_COLUMNS = (
    "item_id",
    "audit",
    "conflict_type",
    "subset",
    "check",
    "question",
    "evidence",
    "answer",
    "verdict",
    "corrected_answer",
    "note",
)


def audit_plan(
    items: Sequence[Mapping],
    *,
    double: Iterable[str],
    sampled: Iterable[str],
    sample_rate: float,
    spot_rate: float,
    seed: int,
    constructed: bool,
) -> list[dict]:
    """The items of one kind (``constructed`` instances or preserved
    originals) chosen for the audit, each with ``audit`` and ``annotators``.

    ``items``: mappings with ``item_id``, ``conflict_type``, ``subset``,
    ``question``, ``evidence`` (list of str), ``answer`` and ``check``."""
    double, sampled = set(double), set(sampled)
    chosen = []
    for subset in sorted({(i["conflict_type"], i["subset"]) for i in items}):
        members = sorted((i for i in items if (i["conflict_type"], i["subset"]) == subset), key=lambda i: i["item_id"])
        kind = subset[0]
        if not constructed:
            audit, rate, annotators = "spot", spot_rate, ("A",)
        elif kind in double:
            audit, rate, annotators = "double", 1.0, ("A", "B")
        elif kind in sampled:
            audit, rate, annotators = "sampled", sample_rate, ("A",)
        else:
            raise ValueError(f"audit: conflict type {kind!r} is in neither audit.double nor audit.sampled")
        k = min(len(members), math.ceil(rate * len(members)))
        picked = members if k == len(members) else random.Random(f"{seed}/{subset}").sample(members, k)
        chosen += [{**i, "audit": audit, "annotators": annotators} for i in sorted(picked, key=lambda i: i["item_id"])]
    return chosen


def write_sheets(plan: Sequence[Mapping], folder: str | os.PathLike) -> list[Path]:
    """One CSV and one HTML form per annotator (``sheet_A.csv``, ``sheet_A.html``, ...) under ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for annotator in sorted({a for item in plan for a in item["annotators"]}):
        rows = [
            {
                "item_id": i["item_id"],
                "audit": i["audit"],
                "conflict_type": i["conflict_type"],
                "subset": i["subset"],
                "check": i["check"],
                "question": i["question"],
                "evidence": "\n".join(f"[{k}] {e}" for k, e in enumerate(i["evidence"], 1)),
                "answer": i["answer"],
                "verdict": "",
                "corrected_answer": "",
                "note": "",
            }
            for i in plan
            if annotator in i["annotators"]
        ]
        path = folder / f"sheet_{annotator}.csv"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        html_path = folder / f"sheet_{annotator}.html"
        html_path.write_text(_form(rows, annotator), encoding="utf-8")
        written += [path, html_path]
    return written


def _form(rows: Sequence[Mapping], annotator: str) -> str:
    """A static page: one block per item (its evidence, the proposed answer,
    ok / wrong, a corrected answer, a note) and a button that downloads the
    filled sheet as the CSV :func:`read_sheets` reads."""
    esc = html.escape
    blocks = []
    for n, row in enumerate(rows):
        evidence = "".join(f"<li>{esc(line)}</li>" for line in row["evidence"].split("\n"))
        radios = "".join(f'<label><input type="radio" name="verdict{n}" value="{v}"> {v}</label> ' for v in VERDICTS)
        blocks.append(
            f'<fieldset data-item="{esc(row["item_id"])}" data-row="{n}">'
            f"<legend>{esc(row['item_id'])} ({esc(row['audit'])})</legend>"
            f"<p><b>Check:</b> {esc(row['check'])}</p><p><b>Question:</b> {esc(row['question'])}</p><ol>{evidence}</ol>"
            f"<p><b>Proposed answer:</b> {esc(row['answer'])}</p><p>{radios}</p>"
            f'<p>Corrected answer: <input name="corrected{n}"> Note: <input name="note{n}"></p></fieldset>'
        )
    import json

    data = json.dumps([{k: row[k] for k in SHEET_COLUMNS} for row in rows])
    return (
        f"<!doctype html><meta charset=utf-8><title>Audit sheet {esc(annotator)}</title>"
        f"<h1>Audit sheet, annotator {esc(annotator)}</h1>"
        "<p>Label each item alone; do not consult the other annotator.</p>"
        f"<form id=f>{''.join(blocks)}</form><button onclick=save()>Download sheet_{esc(annotator)}.csv</button>"
        f"<script>const rows={data};const cols={json.dumps(list(SHEET_COLUMNS))};"
        "function q(v){return '\"'+String(v).replace(/\"/g,'\"\"')+'\"'}"
        "function save(){const f=document.getElementById('f');rows.forEach((r,n)=>{"
        "const c=f.querySelector('input[name=verdict'+n+']:checked');r.verdict=c?c.value:'';"
        "r.corrected_answer=f.elements['corrected'+n].value;r.note=f.elements['note'+n].value});"
        "const text=[cols.join(',')].concat(rows.map(r=>cols.map(c=>q(r[c])).join(','))).join('\\r\\n')+'\\r\\n';"
        f"const a=document.createElement('a');a.href=URL.createObjectURL(new Blob([text],{{type:'text/csv'}}));"
        f"a.download='sheet_{esc(annotator)}.csv';a.click()}}</script>\n"
    )


class SheetError(ValueError):
    """A completed sheet that cannot be read; the message names the file, the row and the field."""


def read_sheets(paths: Mapping[str, str | os.PathLike]) -> list[dict]:
    """Completed sheets (annotator -> CSV path) as rows with ``annotator``;
    SheetError for a missing column, an empty or unknown verdict, or an item twice."""
    rows = []
    for annotator, path in sorted(paths.items()):
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [
                c
                for c in ("item_id", "audit", "conflict_type", "subset", "verdict", "corrected_answer")
                if c not in (reader.fieldnames or [])
            ]
            if missing:
                raise SheetError(f"{path}: column(s) {', '.join(missing)} missing")
            seen = set()
            for number, row in enumerate(reader, start=2):  # row 1 is the header
                verdict = (row["verdict"] or "").strip().lower()
                if verdict not in VERDICTS:
                    raise SheetError(
                        f"{path}: row {number} (item {row['item_id']}): field 'verdict' is {row['verdict']!r}, "
                        f"not one of {VERDICTS}"
                    )
                if row["item_id"] in seen:
                    raise SheetError(f"{path}: row {number}: item {row['item_id']} appears twice")
                seen.add(row["item_id"])
                rows.append({**row, "verdict": verdict, "annotator": annotator})
    return rows


AGREEMENT_SCHEMA = pa.schema(
    [
        pa.field("measure", pa.string(), nullable=False),  # "agreement (double)" | "judged wrong"
        pa.field("group", pa.string(), nullable=False),  # "all" or "<type>/<subset>"
        pa.field("n", pa.int64(), nullable=False),
        pa.field("share", pa.float64()),
        pa.field("low", pa.float64()),  # Wilson 95% interval; null below the minimum n
        pa.field("high", pa.float64()),
    ]
)


def _label(row: Mapping) -> tuple[str, str]:
    """What two annotators agree on: the verdict and, for 'wrong', the corrected answer (case and spaces ignored)."""
    corrected = " ".join(row["corrected_answer"].split()).lower() if row["verdict"] == "wrong" else ""
    return row["verdict"], corrected


def agreement(rows: Sequence[Mapping]) -> tuple[pa.Table, list[dict]]:
    """(table, disagreements): percent agreement of the items two annotators
    labelled, overall and per subset, and the share of items judged wrong
    (an item of two annotators counts as wrong when either says so), each with
    its n and Wilson interval; disagreements: item, both labels."""
    by_item: dict[str, list[Mapping]] = {}
    for row in rows:
        by_item.setdefault(row["item_id"], []).append(row)
    out, disagreements = [], []

    def add(measure, group, hits, n):
        share, low, high = wilson_interval(hits, n) if n else (None, None, None)
        clean = lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else v  # noqa: E731
        out.append(
            {"measure": measure, "group": group, "n": n, "share": clean(share), "low": clean(low), "high": clean(high)}
        )

    pairs = {item: labels for item, labels in by_item.items() if len(labels) == 2}
    groups = sorted({f"{r[0]['conflict_type']}/{r[0]['subset']}" for r in by_item.values()})
    for group in ["all", *groups]:
        members = [
            i
            for i, labels in pairs.items()
            if group == "all" or f"{labels[0]['conflict_type']}/{labels[0]['subset']}" == group
        ]
        if members:
            add(
                "agreement (double)",
                group,
                sum(_label(pairs[i][0]) == _label(pairs[i][1]) for i in members),
                len(members),
            )
    for item, labels in sorted(pairs.items()):
        if _label(labels[0]) != _label(labels[1]):
            disagreements.append(
                {"item_id": item, **{f"{r['annotator']}": "/".join(filter(None, _label(r))) for r in labels}}
            )
    for group in ["all", *groups]:
        members = [
            labels
            for labels in by_item.values()
            if group == "all" or f"{labels[0]['conflict_type']}/{labels[0]['subset']}" == group
        ]
        add(
            "judged wrong", group, sum(any(r["verdict"] == "wrong" for r in labels) for labels in members), len(members)
        )
    return pa.Table.from_pylist(out, schema=AGREEMENT_SCHEMA), disagreements

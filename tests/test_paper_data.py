"""The papers' data files (conflictlab/papers/*.yaml, conflictlab.report.paper_data): each is valid against its
schema, a bad row is refused with its file, row and field named, and every row names a table and columns that a
rule of this workflow writes."""

from __future__ import annotations

import csv
import re

import pytest
import yaml

from conflictlab.paper_registries import REGISTRIES, paper_files
from conflictlab.report import reproduction as R
from conflictlab.report.paper_data import (
    FOLDER,
    PaperDataError,
    decimals_printed,
    load_paper,
    parse_printed,
)
from conflictlab.report.reproduction import Claim, Derived, Ours, Reads

from .conftest import REPO, snakemake_cmd

ROW = {
    "key": "t3:x",
    "table": "Table 3",
    "metric": "exact match",
    "model": "OPT-13B",
    "setting": "regular decoding",
    "value": "68.0",
    "unit": "%",
    "source": "Table 3",
    "ours": {"table": "nq_swap", "column": "value"},
}


def write(tmp_path, rows, **header):
    data = {"paper": "demo", "title": "A demo paper", "cite": ["arXiv:2305.14739"], "note": "n", "rows": rows}
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump({**data, **header}, allow_unicode=True), encoding="utf-8")
    return path


def test_a_value_keeps_what_the_paper_printed():
    assert (parse_printed("68.0"), decimals_printed("68.0")) == (68.0, 1)
    assert (parse_printed("5,781"), decimals_printed("5,781")) == (5781, 0)
    assert isinstance(parse_printed("95"), int) and isinstance(parse_printed("9.45"), float)


def test_a_good_file_loads_into_rows_and_exclusions(tmp_path):
    derived = {**ROW, "key": "gain", "value": "54.4", "derived": {"op": "relative", "of": ["t3:x", "t3:y"]}}
    derived.pop("ours")
    rows = [ROW, {**ROW, "key": "t3:y"}, derived, {"what": "a number", "source": "§2", "excluded": "not a result"}]
    record = load_paper(write(tmp_path, rows))
    assert [n.key for n in record.numbers] == ["t3:x", "t3:y", "gain"]
    assert record.numbers[0].value == 68.0 and record.numbers[0].decimals == 1
    assert isinstance(record.numbers[0].ours, Ours) and record.numbers[2].ours == Derived("relative", ("t3:x", "t3:y"))
    assert [e.reason for e in record.exclusions] == ["not a result"] and record.paper.cite == ("arXiv:2305.14739",)


@pytest.mark.parametrize(
    "rows, header, message",
    [
        ([{**ROW, "value": 68.0}], {}, "row 1 (key t3:x): field value: 68.0 is not of type 'string', 'null'"),
        ([{**ROW, "value": "68.0 %"}], {}, "field value: '68.0 %' does not match"),
        ([{k: v for k, v in ROW.items() if k != "unit"}], {}, "row 1 (key t3:x): field (the whole entry): 'unit'"),
        ([ROW, ROW], {}, "row 2 (key t3:x): field key: 't3:x' is also row 1's"),
        ([{**ROW, "ours": {"table": "nq_swap"}}], {}, "field ours: 'column' is a required property"),
        ([{**ROW, "derived": {"op": "difference", "of": ["a", "b"]}}], {}, "row 1 (key t3:x): field (the whole"),
        ([{k: v for k, v in ROW.items() if k != "ours"}], {}, "field caveat: a printed value without ours"),
        ([{**ROW, "instrument": {"role": "referee", "name": None}}], {}, "field instrument.role"),
        ([{"what": "w", "source": "s", "excluded": ""}], {}, "row 1: field excluded"),
        ([ROW], {"cite": ["../shared/papers/000.txt"]}, "field cite.0"),
    ],
)
def test_a_bad_file_is_refused_naming_its_row_and_field(tmp_path, rows, header, message):
    path = write(tmp_path, rows, **header)
    with pytest.raises(PaperDataError) as refused:
        load_paper(path)
    assert str(refused.value).startswith(str(path)) and message in str(refused.value), str(refused.value)


def test_a_derived_row_and_a_claim_must_name_rows_of_the_paper(tmp_path):
    derived = {k: v for k, v in ROW.items() if k != "ours"} | {
        "key": "d",
        "derived": {"op": "difference", "of": ["t3:x", "nope"]},
    }
    with pytest.raises(PaperDataError, match="row key d: field derived.of: no row 'nope' in demo"):
        load_paper(write(tmp_path, [ROW, derived]))
    claim = Claim("demo", "c", "a sentence", "§1", reads=("t3:x", "gone"))
    with pytest.raises(PaperDataError, match="claim c reads row 'gone', which demo does not have"):
        load_paper(write(tmp_path, [ROW]), [claim])


def test_every_registered_paper_is_a_data_file_in_the_folder_and_no_file_is_unregistered():
    assert set(FOLDER.glob("*.yaml")) - {FOLDER / "paper.schema.yaml"} == set(paper_files().values())
    assert [r.paper.key for r in REGISTRIES] == list(paper_files())
    for record in REGISTRIES:
        assert all(re.fullmatch(r"arXiv:\d{4}\.\d{4,5}|doi:10\.\S+", c) for c in record.paper.cite)
    assert not list(REPO.glob("conflictlab/*/paper_numbers.py"))


def test_a_bad_paper_file_stops_the_workflow_before_any_job(workflow_copy):
    path = workflow_copy / "conflictlab" / "papers" / "memotrap.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace('value: "32.5"', "value: 32.5", 1), encoding="utf-8")
    result = snakemake_cmd("-n", cwd=workflow_copy, env={"PYTHONPATH": str(workflow_copy)})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "memotrap.yaml: row 1 (key cad:t3:memotrap:opt-13b:regular): field value: 32.5 is not of type" in output
    assert "Job stats" not in output  # no job was planned


# --------------------------------------------------------------------------
# Every row names a table and columns a rule writes


def _csv_tables(registry_tables) -> set[str]:
    return {t for t in registry_tables if "{model}" not in t and not t.startswith("mechanistic_")}


def test_every_row_and_claim_names_a_table_that_a_rule_writes():
    """The reproduction job of the default config (every benchmark selected) takes as input every result table
    a rule writes; each row's table (``ours.table``) and each CSV table a claim reads must be among them."""
    result = snakemake_cmd("-n", "--forceall", "reproduction", "--cores", "1", env={"PYTHONPATH": str(REPO)})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    job = output[output.index("rule reproduction:") :]
    inputs = job[job.index("input:") + len("input:") : job.index("\n", job.index("input:"))]
    written = {m.group(1) for m in re.finditer(r"results/tables/([\w.-]+)\.csv", inputs)}
    assert {"accuracy", "nq_swap", "memotrap_accuracy"} <= written
    named = {n.ours.table for r in REGISTRIES for n in r.numbers if isinstance(n.ours, Ours)}
    read = _csv_tables({x.table for r in REGISTRIES for c in r.claims for x in c.reads if isinstance(x, Reads)})
    assert named - written == set() and read - written == set()


@pytest.mark.slow
def test_every_row_names_columns_that_the_smoke_runs_tables_have(smoke_run):
    """Each row's column, n, interval and filter columns are in the header of its table as the smoke run wrote
    it (every table the smoke config makes; the names are checked against the rules above)."""
    workflow, run = smoke_run
    assert run.returncode == 0, run.stderr[-3000:]
    headers = {}
    for path in (workflow / "results" / "tables").glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as handle:
            headers[path.stem] = set(next(csv.reader(handle), []))
    missing, checked = [], set()
    for record in REGISTRIES:
        for number in record.numbers:
            ours = number.ours
            if not isinstance(ours, Ours) or ours.table not in headers:
                continue
            checked.add(ours.table)
            wanted = [ours.column, ours.n, ours.low, ours.high, ours.instrument_column, *ours.where]
            wanted += ["model"] if ours.models is not None else []
            missing += [f"{record.paper.key}: {number.key}: {c}" for c in wanted if c and c not in headers[ours.table]]
    assert len(checked) >= 8, sorted(checked)
    assert missing == []


def test_the_report_shows_the_value_as_printed(tmp_path):
    rows = [ROW, {**ROW, "key": "t3:y", "value": "95"}, {**ROW, "key": "t3:z", "value": "0.50", "unit": "κ"}]
    record = load_paper(write(tmp_path, rows))
    compared = R.compare_all(record.numbers, tables={}, model_lists={}, sources={}, instruments={})
    text = R.render_markdown([record.paper], compared, run="none")
    assert all(f"| {cell} |" in text for cell in ("68.0 %", "95 %", "0.50 κ")), text
    assert "Cited as arXiv:2305.14739." in text


def test_the_plan_counts_the_cells_and_leaves_a_relative_gain_out():
    registry = [r for r in REGISTRIES if r.paper.key == "nq_swap"][0]
    rows = R.plan(
        registry.numbers,
        (),
        tables_made=["nq_swap"],
        model_lists={"nq_swap.models": ["neox", "flan"]},
        sources={"neox": "hf:EleutherAI/gpt-neox-20b", "flan": "hf:google/flan-t5-xl"},
        instruments={},
    )
    by_key = {r["key"]: r for r in rows}
    cell = by_key["cad:t3:nq_swap:gpt-neox-20b:cad"]
    assert cell["comparable"] is True and cell["counted"] == "yes"
    gain = by_key["cad:gain:nq_swap:gpt-neox-20b"]
    assert gain["comparable"] is False and gain["counted"].startswith("no: a relative gain")
    # NQ's CAD cell reads the original-context CAD run (nq_swap.original_methods); FLAN-T5's cells, run as the
    # encoder-decoder model it is, are comparable where the list names it, absent where it does not
    assert by_key["cad:t3:nq:gpt-neox-20b:cad"]["comparable"] is True
    assert by_key["cad:t3:nq:flan-t5-xl:cad"]["comparable"] is True
    assert by_key["cad:t3:nq:flan-t5-xxl:cad"]["why_not"].startswith("model absent: FLAN-T5 XXL")

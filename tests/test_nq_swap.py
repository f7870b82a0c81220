"""NQ-Swap without a model: the released format, exact match, the memorisation ratio, the paired table,
cross-fitted steering directions, the config checks, the profile cells and the paper's claims."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conflictlab.lm.methods import faithful_prompt
from conflictlab.nq_swap import claims, profile, report
from conflictlab.nq_swap.checks import check_section
from conflictlab.nq_swap.dataset import (
    HUB_SCHEMA,
    ITEM_SCHEMA,
    REJECTION_SCHEMA,
    RecordError,
    build_items,
    open_source,
    read_local,
    table_records,
)
from conflictlab.nq_swap.generation import run_names
from conflictlab.nq_swap.metrics import SCORE_SCHEMA, answer_of, exact_match, normalize_answer, score_responses
from conflictlab.nq_swap.prompts import closed_book_prompt, context_prompt
from conflictlab.nq_swap.steering import cas_direction, cross_fitted_directions, fold_of, run_name
from conflictlab.paired import paired_columns
from conflictlab.paper_registries import BY_BENCHMARK
from conflictlab.report import reproduction as R
from conflictlab.stats import clopper_pearson_interval

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo" / "nq_swap" / "dev.jsonl"
# 19 real records of the hub's dev split, line for line (tests/fixtures/real/nq_swap/README.md lists which)
REAL = REPO / "tests" / "fixtures" / "real" / "nq_swap" / "dev.jsonl"
# The whole dev split (JSON Lines or the hub's Parquet file), where a user has it
RELEASE = os.environ.get("NQ_SWAP_RELEASE")
RECORD = {
    "question": "who wrote the novel emma",
    "org_context": "<P> Emma is a novel written by Jane Austen . </P>",
    "org_answer": ["Jane Austen"],
    "sub_context": "<P> Emma is a novel written by Mary Shelley . </P>",
    "sub_answer": ["Mary Shelley"],
}


def build(records, **kw):
    return build_items(
        enumerate(records), source="test.jsonl", **{"on_error": "fail", "max_items": None, "seed": 0, **kw}
    )


# --------------------------------------------------------------------------
# The released format


def test_the_demo_is_in_the_released_fields_and_reads_whole():
    lines = [json.loads(line) for line in DEMO.read_text().splitlines()]
    assert len(lines) == 12 and all(
        set(r) == {"question", "org_context", "org_answer", "sub_context", "sub_answer"} for r in lines
    )
    items, rejected = build_items(read_local(DEMO), source=str(DEMO), on_error="fail", max_items=None, seed=0).tables()
    assert items.num_rows == 12 and rejected.num_rows == 0 and items.schema.equals(ITEM_SCHEMA)
    assert items.column("item_id").to_pylist()[:2] == ["nqswap-0", "nqswap-1"]


def test_the_releases_parquet_file_reads_as_its_json_lines(tmp_path):
    # the hub's Parquet: answers as list<string>
    path = tmp_path / "dev-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([RECORD, {**RECORD, "question": "who wrote emma"}]), path)
    items = build([record for _, record in read_local(path)]).items
    assert [i["org_answer"] for i in items] == [["Jane Austen"]] * 2


@pytest.mark.parametrize(
    "change, field, problem",
    [
        ({"question": ""}, "question", "non-empty string"),
        ({"sub_answer": []}, "sub_answer", "non-empty list"),
        ({"org_answer": ["Jane Austen", 3]}, "org_answer", "non-string"),
        ({"sub_context": RECORD["org_context"]}, "sub_context", "unchanged"),
        ({"sub_answer": ["jane  austen."]}, "sub_answer", "matches org_answer"),
    ],
)
def test_a_bad_record_names_the_file_the_row_and_the_field(change, field, problem):
    with pytest.raises(RecordError, match=rf"test.jsonl: row 1: field '{field}': .*{problem}"):
        build([RECORD, {**RECORD, **change}])
    built = build([RECORD, {**RECORD, **change}], on_error="reject")
    assert len(built.items) == 1 and built.rejections == [
        {"row": 1, "source": "test.jsonl", "line": None, "field": field, "reason": built.rejections[0]["reason"]}
    ]


def test_a_missing_field_and_a_line_that_is_not_json_are_named(tmp_path):
    with pytest.raises(RecordError, match="field 'sub_answer': is missing"):
        build([{k: v for k, v in RECORD.items() if k != "sub_answer"}])
    path = tmp_path / "dev.jsonl"
    path.write_text(json.dumps(RECORD) + "\n{not json\n")
    with pytest.raises(RecordError, match=r"dev.jsonl: row 1 \(line 2\): field '<line>': not JSON"):
        list(read_local(path))


def test_a_bare_string_answer_is_a_one_answer_list_and_the_sample_is_seeded():
    assert build([{**RECORD, "sub_answer": "Mary Shelley"}]).items[0]["sub_answer"] == ["Mary Shelley"]
    records = [{**RECORD, "question": f"q{i}"} for i in range(10)]
    first, again = build(records, max_items=4, seed=3).items, build(records, max_items=4, seed=3).items
    assert [i["row"] for i in first] == [i["row"] for i in again] == sorted(i["row"] for i in first)
    assert len(first) == 4


# --------------------------------------------------------------------------
# The real release: committed records, the hub's schema, and the whole split where it is present

HUB_FEATURES = {  # the dataset card's features: strings, and the answers a sequence of strings
    "question": "string",
    "org_context": "string",
    "org_answer": "sequence",
    "sub_context": "string",
    "sub_answer": "sequence",
}


def local_items(path):
    source = open_source({"source": "local", "path": str(path)})
    return build_items(source.records, source=source.name, on_error="fail", max_items=None, seed=0, lines=source.lines)


def test_the_real_records_read_whole_with_their_values():
    items = local_items(REAL).items
    assert len(items) == 19 and [i["row"] for i in items] == list(range(19))
    first = items[0]  # the split's row 0
    assert first["question"] == "how many episodes are in chicago fire season 4"
    assert first["org_context"].startswith("<P> The fourth season of Chicago Fire , an American drama television")
    assert first["org_context"].endswith("The season contained 23 episodes . </P>")
    assert first["sub_context"].endswith("The season contained 775 episodes . </P>")
    assert (first["org_answer"], first["sub_answer"]) == (["23"], ["775"])
    this_is_us = items[4]  # row 10: four answers, one substitute written at each place
    assert this_is_us["org_answer"] == ["Pittsburgh", "Los Angeles", "New Jersey", "New York City"]
    assert (
        this_is_us["sub_answer"] == ["Caucasus Mountains"]
        and this_is_us["sub_context"].count("Caucasus Mountains") == 5
    )
    table = items[5]  # row 11: a table passage, its attributes' quotes escaped in the JSON
    assert table["org_context"].startswith('<Table> <Tr> <Th colspan="2"> Patrick Brown MPP </Th> </Tr>')
    assert (table["org_answer"], table["sub_answer"]) == (["Patrick Brown"], ["John Roberts"])
    assert "Jenna von Oÿ" in items[6]["org_context"]  # row 13: non-ASCII written as is
    assert items[9]["org_answer"] == ["Vienna", "Vienna"]  # row 54: a repeated answer is kept
    assert len(items[15]["org_answer"]) == 23  # row 2617: the most answers of the split
    tags = {i["org_context"].split(" ")[0] for i in items}
    assert tags == {"<P>", "<Table>", "<Li>", "<Ul>", "<Tr>", "<Ol>", "<Dl>", "<Dd>"}


def hub_dataset(records):
    from datasets import Dataset, Features, Sequence, Value

    features = Features(
        {k: Sequence(Value("string")) if v == "sequence" else Value(v) for k, v in HUB_FEATURES.items()}
    )
    return Dataset.from_list(records, features=features)


def test_the_hub_split_is_read_through_the_local_readers_code(monkeypatch, tmp_path):
    import datasets

    records = [record for _, record in read_local(REAL)]
    split = hub_dataset(records)
    assert split.data.table.schema.remove_metadata().equals(HUB_SCHEMA)
    calls = []

    def load_dataset(name, revision=None, split=None):
        calls.append((name, revision, split))
        return hub_dataset(records)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    section = {"source": "huggingface", "hf_dataset": "pminervini/NQ-Swap", "hf_revision": None, "split": "dev"}
    source = open_source(section)
    hub = build_items(source.records, source=source.name, on_error="fail", max_items=None, seed=0).items
    assert calls == [("pminervini/NQ-Swap", None, "dev")] and source.name == "pminervini/NQ-Swap@main:dev"
    # the hub's Parquet file, copied locally, reads the same
    path = tmp_path / "dev-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(records, schema=HUB_SCHEMA), path)
    parquet = local_items(path).items
    jsonl = local_items(REAL).items
    strip = [{k: v for k, v in i.items() if k != "source"} for i in jsonl]
    assert [{k: v for k, v in i.items() if k != "source"} for i in hub] == strip
    assert [{k: v for k, v in i.items() if k != "source"} for i in parquet] == strip


def test_the_hubs_single_context_splits_are_refused_by_name():
    original = pa.table({"question": ["q"], "context": ["<P> c </P>"], "answer": [["a"]]})
    with pytest.raises(ValueError, match=r"x:original: no column org_context, org_answer.*'original' or 'substituted'"):
        list(table_records(original, "x:original"))


def test_an_answer_written_as_a_list_literal_reads_as_its_list():
    for text in ("['Jane Austen', \"O'Brien\"]", '["Jane Austen", "O\'Brien"]'):
        assert build([{**RECORD, "org_answer": text}]).items[0]["org_answer"] == ["Jane Austen", "O'Brien"]
    with pytest.raises(RecordError, match="field 'sub_answer': looks like a list literal"):
        build([{**RECORD, "sub_answer": "[Mary Shelley]"}])


def test_a_bad_real_record_is_named_by_its_line(tmp_path):
    path = tmp_path / "dev.jsonl"
    shutil.copy(REAL, path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace('"sub_answer": ["Bhimrao Ramji Ambedkar"]', '"sub_answer": []')
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RecordError, match=r"dev.jsonl: row 3 \(line 4\): field 'sub_answer': must be a non-empty list"):
        local_items(path)
    source = open_source({"source": "local", "path": str(path)})
    built = build_items(source.records, source=source.name, on_error="reject", max_items=None, seed=0, lines=True)
    items, rejected = built.tables()
    assert items.num_rows == 18 and rejected.schema.equals(REJECTION_SCHEMA)
    assert rejected.select(["row", "line", "field"]).to_pylist() == [{"row": 3, "line": 4, "field": "sub_answer"}]


@pytest.mark.skipif(not RELEASE, reason="NQ_SWAP_RELEASE (the dev split as JSON Lines or Parquet) is not set")
def test_the_whole_dev_split_reads_every_record():
    source = open_source({"source": "local", "path": RELEASE})
    items, rejected = build_items(
        source.records, source=source.name, on_error="reject", max_items=None, seed=0, lines=source.lines
    ).tables()
    assert (items.num_rows, rejected.num_rows) == (4746, 0)


# --------------------------------------------------------------------------
# Prompts


def test_the_prompts_are_zhou_et_al_s_base_template_and_its_rewrites():
    assert closed_book_prompt("who wrote emma") == "Q:who wrote emma?\nA:"
    assert context_prompt("C.", "who wrote emma?") == "C.\nQ:who wrote emma?\nA:"
    for style in ("opinion", "instructed", "opinion_instructed"):
        assert context_prompt("C.", "who wrote emma", style) == faithful_prompt("C.", "who wrote emma?", style)
    assert context_prompt('He said "x".', "who wrote emma", "opinion") == (
        'Bob said "He said x."\nQ: who wrote emma in Bob\'s opinion?\nA:'
    )


# --------------------------------------------------------------------------
# Exact match and the memorisation ratio


@pytest.mark.parametrize(
    "prediction, answers, expected",
    [
        ("The Amazon.", ["Amazon"], True),  # article and punctuation
        ("  amazon   river ", ["Amazon River"], True),
        ("Amazon River basin", ["Amazon River"], False),  # exact, not containment
        ("", ["Amazon"], False),
        ("an", ["a"], False),  # both normalise to nothing: no match
    ],
)
def test_exact_match_normalises_the_squad_way(prediction, answers, expected):
    assert exact_match(prediction, answers) is expected


def test_squad_normalisation_and_the_answer_line():
    assert normalize_answer("The  Eiffel-Tower, an icon!") == "eiffeltower icon"
    assert answer_of("\n Lyon\nQ: next question") == "Lyon" and answer_of("\n\n") == ""


def scores(rows):
    return pa.Table.from_pylist(
        [dict(zip(("item_id", "model", "run", "answer", "em_sub", "em_org"), r)) for r in rows], schema=SCORE_SCHEMA
    )


def test_responses_are_scored_against_both_answer_lists():
    items, _ = build([RECORD, {**RECORD, "question": "q2"}]).tables()
    responses = pa.table(
        {
            "item_id": ["nqswap-0", "nqswap-1"],
            "model": ["m", "m"],
            "run": ["greedy"] * 2,
            "text": [" Mary Shelley\nQ:", "Jane Austen."],
        }
    )
    scored = score_responses(items, responses).to_pylist()
    assert [(r["em_sub"], r["em_org"]) for r in scored] == [(True, False), (False, True)]
    with pytest.raises(ValueError, match="item 'nqswap-9'"):
        score_responses(items, responses.set_column(0, "item_id", pa.array(["nqswap-0", "nqswap-9"])))


def test_the_memorisation_ratio_is_over_the_items_that_match_either_answer():
    # 10 items: 3 substituted, 4 original, 3 neither
    rows = [(f"i{k}", "m", "greedy", "x", k < 3, 3 <= k < 7) for k in range(10)]
    cells = {c["metric"]: c for c in report.cells(scores(rows))}
    assert cells["MR"]["value"] == pytest.approx(4 / 7) and cells["MR"]["n"] == 7
    assert (cells["MR"]["ci_low"], cells["MR"]["ci_high"]) == pytest.approx(clopper_pearson_interval(4, 7)[1:])
    assert cells["EM sub"]["n"] == cells["EM org"]["n"] == 10 and cells["EM org"]["value"] == pytest.approx(0.4)
    assert cells["EM org"]["higher_is_better"] is False and cells["EM sub"]["higher_is_better"] is True


def test_every_row_is_paired_with_greedy_and_the_settings_are_never_marked():
    rng = np.random.default_rng(0)
    n = 40
    greedy = rng.random(n) < 0.3
    runs = {
        "closed_book": np.zeros(n, bool),
        "original": np.zeros(n, bool),
        "greedy": greedy,
        "adacad": np.ones(n, bool),
    }
    rows = [(f"i{k}", "m", run, "x", bool(sub[k]), not sub[k]) for run, sub in runs.items() for k in range(n)]
    table = report.paired_cells(scores(rows), min_n=30).to_pylist()
    cell = {(c["method"], c["metric"]): c for c in table}
    expected = paired_columns(
        ([f"i{k}" for k in range(n)], np.ones(n)),
        ([f"i{k}" for k in range(n)], greedy.astype(float)),
        proportion=True,
        what="t",
    )
    got = cell["adacad", "EM sub"]
    assert got["n_pairs"] == n and got["difference"] == pytest.approx(expected["difference"])
    assert got["p_paired"] == pytest.approx(expected["p_paired"]) and got["best"]
    assert cell["closed_book", "EM sub"]["n_pairs"] == n and cell["greedy", "EM sub"]["n_pairs"] is None
    assert not any(c["best"] for c in table if c["method"] in ("closed_book", "original"))
    assert report.run_order(report.paired_cells(scores(rows), min_n=30))[:3] == ["closed_book", "original", "greedy"]


# --------------------------------------------------------------------------
# Cross-fitted steering


def test_folds_are_seeded_and_balanced():
    fold = fold_of(11, 3, seed=5)
    assert np.array_equal(fold, fold_of(11, 3, seed=5)) and sorted(np.bincount(fold)) == [3, 4, 4]
    with pytest.raises(ValueError, match="2 <= folds <= items"):
        fold_of(3, 4, seed=0)


def test_no_item_is_steered_by_a_direction_from_its_own_states():
    rng = np.random.default_rng(1)
    n, layers, d = 8, 2, 5
    with_context, closed = rng.normal(size=(n, layers, d)), rng.normal(size=(n, layers, d))
    fold = fold_of(n, 2, seed=0)
    directions = cross_fitted_directions(with_context, closed, fold)
    # changing fold 0's states leaves fold 0's direction unchanged and moves fold 1's
    moved = with_context.copy()
    moved[fold == 0] += 100.0
    again = cross_fitted_directions(moved, closed, fold)
    assert np.allclose(again[0], directions[0]) and not np.allclose(again[1], directions[1])
    assert np.allclose(np.linalg.norm(directions, axis=-1), 1.0, atol=1e-6)
    # each is the normalised mean difference of the other folds' items
    diff = with_context[fold != 0].mean(0) - closed[fold != 0].mean(0)
    assert np.allclose(directions[0], diff / np.linalg.norm(diff, axis=-1, keepdims=True), atol=1e-6)
    assert np.allclose(cas_direction(with_context, with_context), 0.0)  # no difference: a zero vector, not NaN


def test_run_names_list_every_setting_method_and_the_steered_run():
    assert run_names(["cad-a1", "adacad", "cfp-opinion"], {"alpha": 2.0}) == [
        "closed_book",
        "original",
        "greedy",
        "cad-a1",
        "adacad",
        "cfp-opinion",
        "cas-a2",
    ]
    assert run_names([], None) == ["closed_book", "original", "greedy"] and run_name(0.5) == "cas-a0.5"
    assert run_names(["cad-a1"], None, ["cad-a1", "adacad"]) == [
        "closed_book",
        "original",
        "greedy",
        "cad-a1",
        "original-cad-a1",
        "original-adacad",
    ]


# --------------------------------------------------------------------------
# Config checks, profile, paper rows and claims


@pytest.mark.parametrize(
    "methods, models, message",
    [
        (["cad-a0"], ["m"], "nq_swap.methods: not a method"),
        (["greedy"], ["m"], "greedy is the baseline"),
    ],
)
def test_the_config_checks_name_the_key(methods, models, message):
    with pytest.raises(ValueError, match=message):
        check_section({"methods": methods, "models": models, "original_methods": []})
    check_section({"methods": ["cad-a1", "adacad", "cfp-opinion"], "models": ["m"], "original_methods": ["cad-a1"]})


@pytest.mark.parametrize(
    "original, message",
    [(["cfp-opinion"], "original_methods: cfp-opinion is not contrastive"), (["cad-x"], "original_methods: ")],
)
def test_an_original_context_method_must_be_contrastive(original, message):
    with pytest.raises(ValueError, match=message):
        check_section({"methods": [], "models": ["m"], "original_methods": original})


def csv_rows(table: pa.Table) -> list[dict]:
    """Rows as the profile and the claims read them: the CSV's text cells."""
    return [{k: "" if v is None else str(v) for k, v in r.items()} for r in table.to_pylist()]


def demo_table(greedy_sub, cad_sub, greedy_org, cad_org, adacad_sub, n=20):
    rows = []
    for run, n_sub, n_org in (
        ("greedy", greedy_sub, greedy_org),
        ("cad-a1", cad_sub, cad_org),
        ("adacad", adacad_sub, 0),
    ):
        rows += [(f"i{k}", "m", run, "x", k < n_sub, n_sub <= k < n_sub + n_org) for k in range(n)]
    return csv_rows(report.paired_cells(scores(rows), min_n=30))


def test_profile_cells_take_the_tables_numbers_and_sections():
    cells = profile.cells(demo_table(5, 9, 6, 2, 12), models=["m"])
    by_key = {c["key"]: c for c in cells}
    assert by_key["em_sub/greedy"]["value"] == pytest.approx(0.25) and by_key["em_sub/greedy"]["n"] == 20
    assert by_key["mr/greedy"]["n"] == 11 and by_key["em_sub/greedy"]["section"] == "settings"
    assert by_key["em_sub/adacad"]["section"] == "methods" and all(c["benchmark"] == "nq_swap" for c in cells)
    assert profile.cells(None, models=["m"]) == [] and profile.cells(demo_table(5, 9, 6, 2, 12), models=["x"]) == []


@pytest.mark.parametrize(
    "numbers, cad_holds, adacad_holds",
    [((5, 9, 6, 2, 12), True, True), ((5, 9, 6, 7, 8), False, False)],
)
def test_the_claims_compare_cad_and_adacad_with_greedy(numbers, cad_holds, adacad_holds):
    ctx = R.ClaimContext(
        tables={"nq_swap": demo_table(*numbers)}, rows={}, model_lists={"nq_swap.models": ["m"]}, sources={}
    )
    assert claims.cad_overrides_prior(ctx).status == (R.HOLDS if cad_holds else R.FAILS)
    assert claims.adacad_outperforms(ctx).status == (R.HOLDS if adacad_holds else R.FAILS)
    empty = R.ClaimContext(tables={}, rows={}, model_lists={"nq_swap.models": ["m"]}, sources={})
    assert claims.cad_overrides_prior(empty).status == "not comparable"


def test_cads_table_3_rows_read_this_runs_table_and_adacads_say_its_cells_were_not_reached():
    registry = BY_BENCHMARK["nq_swap"]
    assert registry.paper.key == "nq_swap"
    table = demo_table(5, 9, 6, 2, 12)  # n = 20: greedy EM sub 25%, cad-a1 45%
    # this run's model "m" is the paper's GPT-Neo 20B (EleutherAI/gpt-neox-20b)
    context = dict(
        tables={"nq_swap": table},
        model_lists={"nq_swap.models": ["m"]},
        sources={"m": "hf:EleutherAI/gpt-neox-20b"},
        instruments={},
    )
    rows = {r["key"]: r for r in R.compare_all(registry.numbers, **context)}
    cad = [n for n in registry.numbers if n.key.startswith("cad:t3:")]
    assert len(cad) == 32 and all(n.value is not None and n.table == "Table 3" for n in cad)
    regular, steered = rows["cad:t3:nq_swap:gpt-neox-20b:regular"], rows["cad:t3:nq_swap:gpt-neox-20b:cad"]
    assert (regular["value"], regular["ours"], regular["our_n"]) == (16.1, pytest.approx(25.0), 20)
    assert steered["ours"] == pytest.approx(45.0) and steered["verdict"] != R.NOT_COMPARABLE
    assert "model absent" in rows["cad:t3:nq_swap:opt-13b:regular"]["why"]
    # NQ's CAD cell reads the original-context CAD run (nq_swap.original_methods), which this table lacks
    assert rows["cad:t3:nq:gpt-neox-20b:cad"]["why"] == "no matching row in this run's table"
    assert "model absent" in rows["cad:t3:nq:flan-t5-xl:cad"]["why"]  # FLAN-T5 runs (encoder-decoder), not here
    # the text's 128% is a relative gain: this run's (45 - 25) / 25 = 80% is shown, without a verdict
    gain = rows["cad:gain:nq_swap:gpt-neox-20b"]
    assert gain["value"] == 128 and gain["ours"] == pytest.approx(80.0)
    assert gain["verdict"] == R.NOT_COMPARABLE and gain["why"].startswith(R.RELATIVE)
    for number in registry.numbers:
        if number.key.startswith("adacad:"):
            assert number.value is None and "could not be reached" in number.source
            assert rows[number.key]["verdict"] == R.NOT_COMPARABLE
    assert any("14.21" in e.what for e in BY_BENCHMARK["nq_swap"].exclusions)
    assert {c.key for c in BY_BENCHMARK["nq_swap"].claims} == {
        "cad-overrides-prior",
        "adacad-outperforms",
        "adacad-no-conflict",
        "cad-gain-gpt-neo-20b",
        "cad-gain-llama-30b",
        "cad-beats-regular",
    }

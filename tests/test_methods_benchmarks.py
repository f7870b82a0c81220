"""Conflict-resolution methods on each benchmark: their prompts, context-free
prompts, read-outs and the methods table's cells."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA as ARBITRATION_PREDICTIONS
from conflictlab.arbitration.methods import method_cells as arbitration_cells
from conflictlab.arbitration.prompts import (
    ArbitrationConfig,
    context_free_prompt,
    encode_arbitration_prompt,
    generate_instances,
    instance_unit,
    method_prompt,
)
from conflictlab.conflictbank.dataset import build_records, read_jsonl
from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA as CONFLICTBANK_PREDICTIONS
from conflictlab.conflictbank.methods import method_cells as conflictbank_cells
from conflictlab.conflictbank.prompts import SETTINGS_BY_NAME, render_prompt
from conflictlab.conflicts.methods import method_cells as conflicts_cells
from conflictlab.conflicts.prompts import context_free_messages, task2_messages
from conflictlab.contextconflict.methods import method_cells as contextconflict_cells
from conflictlab.lm.methods import INSTRUCTION
from conflictlab.report.methods import with_paired
from conflictlab.stats import unit_proportion_interval

REPO = Path(__file__).resolve().parents[1]
CONFLICTBANK_DEMO = REPO / "resources" / "demo" / "conflictbank" / "QA_dataset.jsonl"


@pytest.fixture(scope="module")
def records() -> pa.Table:
    return build_records(read_jsonl(CONFLICTBANK_DEMO), source="demo").tables()[0]


@pytest.fixture(scope="module")
def instances() -> pa.Table:
    return generate_instances(ArbitrationConfig(n_per_setting=4, seeds=(0,)))


# --------------------------------------------------------------------------
# Prompts.


def test_conflictbank_styles_rewrite_only_prompts_with_evidence(records):
    record = records.to_pylist()[0]
    misinformation = SETTINGS_BY_NAME["misinformation"]
    plain = render_prompt(record, misinformation)
    opinion = render_prompt(record, misinformation, "opinion")
    evidence = record["misinformation_evidence"].replace('"', "")
    assert f'Evidence: Bob said "{evidence}"' in opinion and "in Bob's opinion?" in opinion
    assert opinion.endswith("\nAnswer:") and plain.count("\n") == opinion.count("\n")
    assert render_prompt(record, misinformation, "instructed") == f"{INSTRUCTION}\n\n{plain}"
    both = render_prompt(record, misinformation, "opinion_instructed")
    assert both == f"{INSTRUCTION}\n\n{opinion}"
    default = SETTINGS_BY_NAME["default"]
    assert render_prompt(record, default, "opinion_instructed") == render_prompt(record, default)
    with pytest.raises(ValueError, match="not a context-faithful prompt style: 'loud'"):
        render_prompt(record, misinformation, "loud")


def test_arbitration_context_free_prompt_is_closed_book(instances):
    for row in instances.to_pylist():
        free = context_free_prompt(row)
        assert "Time series:" not in free and "Text summary:" not in free and "External forecasting tool" not in free
        assert not any(word in free for word in ("source", "information above", "observations", "evidence"))
        assert (
            free.endswith(row["prompt"][-150:]) and "Question: Will the " in free and "The task is to predict" in free
        )
        assert free.split("\n\n")[0] == row["prompt"].split("\n\n")[0]  # the domain's framing
        assert method_prompt(row) == row["prompt"]


def test_arbitration_opinion_prompt_reframes_context_and_question(instances):
    row = instances.filter(pa.compute.equal(instances["condition"], "conflict")).to_pylist()[0]
    opinion = method_prompt(row, "opinion")
    assert 'Bob said "' in opinion and row["question"].removesuffix("?") + " in Bob's opinion?" in opinion
    assert row["context"] not in opinion and opinion.endswith("Answer:")
    assert method_prompt(row, "instructed") == f"{INSTRUCTION}\n\n{row['prompt']}"
    with pytest.raises(ValueError, match="exactly once, found it 0 times"):
        context_free_prompt({**row, "context": "not in the prompt"})


def test_conflicts_vanilla_styles_and_context_free_prompt():
    results = [{"url": "u", "title": "t", "snippet": "s", "short_text": 'He said "no".'}]
    plain = task2_messages("vanilla", "Who won?", results)[0]["content"]
    opinion = task2_messages("vanilla", "Who won?", results, style="opinion")[0]["content"]
    assert "Query: Who won in Bob's opinion?" in opinion and 'Bob said "[1] URL: u' in opinion and '"no"' not in opinion
    assert (
        task2_messages("vanilla", "Who won?", results, style="instructed")[0]["content"] == f"{INSTRUCTION}\n\n{plain}"
    )
    free = context_free_messages("Who won?")[0]["content"]
    assert "Who won?" in free and "[1]" not in free and "Search results" not in free and free.endswith("Response:")


# --------------------------------------------------------------------------
# Cells of the methods table.

RUNS = {"m@greedy": ("m", "base"), "m@cad-a1": ("m", "cad-a1")}


def test_arbitration_cells_count_accuracy_and_text_following_by_hand(instances):
    conflict = instances.filter(pa.compute.equal(instances["condition"], "conflict"))
    rng = np.random.default_rng(0)
    rows = []
    for run in RUNS:
        for r in instances.to_pylist():
            letter = ["A", "B", "tie"][rng.integers(0, 3)]
            rows.append(
                {
                    "instance_id": r["instance_id"],
                    "model": run,
                    "logit_a": 0.0,
                    "logit_b": 0.0,
                    "predicted_letter": letter,
                    "correct": letter == r["answer_letter"],
                    "read_out": "logits",
                }
            )
    predictions = pa.Table.from_pylist(rows, schema=ARBITRATION_PREDICTIONS)
    cells = {(c["method"], c["metric"]): c for c in arbitration_cells(instances, predictions, RUNS)}
    meta = {r["instance_id"]: r for r in conflict.to_pylist()}
    for run, (_, method) in RUNS.items():
        mine = [r for r in rows if r["model"] == run and r["instance_id"] in meta]

        def by_unit(rows_, value):  # each instance once: the mean over its evidence orders
            units = {}
            for r in rows_:
                units.setdefault(instance_unit(r["instance_id"]), []).append(value(r))
            return [float(np.mean(v)) for _, v in sorted(units.items())]

        correct = by_unit(mine, lambda r: r["correct"])
        acc = cells[method, "Acc (conflict)"]
        assert acc["n"] == len(correct) == conflict.num_rows // 2
        assert acc["value"] == pytest.approx(np.mean(correct)) and acc["interval"] == "clopper-pearson over units"
        text_rows = [r for r in mine if meta[r["instance_id"]]["setting"] != "tool"]
        follows = by_unit(
            text_rows,
            lambda r: (
                r["predicted_letter"] != "tie"
                and (r["predicted_letter"] == meta[r["instance_id"]]["answer_letter"])
                == (meta[r["instance_id"]]["aligned_source"] == "text")
            ),
        )
        text = cells[method, "Text followed"]
        _, low, high = unit_proportion_interval(np.array(follows))
        assert (text["n"], text["value"], text["higher_is_better"]) == (
            len(follows),
            pytest.approx(np.mean(follows)),
            None,
        )
        np.testing.assert_allclose([text["ci_low"], text["ci_high"]], [low, high])


def test_conflictbank_cells_score_every_method_on_the_greedy_subset(records):
    rows = records.to_pylist()[:4]
    letters = "ABCD"

    def prediction(run, setting, row, letter):
        p = [0.1] * 4
        p[letters.index(letter)] = 0.7
        return {
            "record_id": row["record_id"],
            "setting": setting,
            "model": run,
            "probabilities": p,
            "predicted_letter": letter,
            "correct_letter": row["correct_letter"],
            "replaced_letter": row["replaced_letter"],
            "uncertain_letter": row["uncertain_letter"],
            "read_out": "logits",
        }

    table = []
    # greedy knows records 0-2 (right without and with the correct evidence), not record 3
    for i, row in enumerate(rows):
        known = row["correct_letter"] if i < 3 else row["uncertain_letter"]
        table += [prediction("m@greedy", s, row, known) for s in ("default", "correct")]
        # greedy keeps its memory on records 0-1; CAD follows the evidence on all
        table.append(
            prediction("m@greedy", "misinformation", row, row["correct_letter"] if i < 2 else row["replaced_letter"])
        )
        table.append(prediction("m@cad-a1", "misinformation", row, row["replaced_letter"]))
        # a method's own "correct" read-out would change its subset: it must not be used
        table.append(prediction("m@cad-a1", "correct", row, row["uncertain_letter"]))
    cells = conflictbank_cells(
        pa.Table.from_pylist(table, schema=CONFLICTBANK_PREDICTIONS), RUNS, greedy={"m": "m@greedy"}
    )
    by = {(c["method"], c["metric"]): c for c in cells}
    assert (
        by["base", "MR misinformation"]["value"] == pytest.approx(2 / 3) and by["base", "MR misinformation"]["n"] == 3
    )
    assert by["cad-a1", "MR misinformation"]["value"] == 0.0 and by["cad-a1", "CAR misinformation"]["value"] == 1.0
    assert (
        by["cad-a1", "OAR misinformation"]["n"] == 3
        and by["base", "OAR misinformation"]["samples"] == by["cad-a1", "OAR misinformation"]["samples"]
    )
    assert {c["shown"] for c in cells if c["metric"].startswith("MR")} == {True}
    assert {c["shown"] for c in cells if not c["metric"].startswith("MR")} == {False}
    assert {c["metric"].split()[1] for c in cells} == {"misinformation"}
    # MR is compared with greedy over all 3 scored records (issue 59.1), not the records both answered with the
    # correct or the replaced option: greedy 2 of 3 correct, CAD 0 of 3, a difference of -2/3 over 3 records
    paired = {(c["method"], c["metric"]): c for c in with_paired(cells, base="base", min_n=2)}
    mr = paired["cad-a1", "MR misinformation"]
    assert mr["n_pairs"] == 3 and mr["difference"] == pytest.approx(-2 / 3)
    assert mr["paired_test"].startswith("swap permutation (exact)") and mr["p_paired"] == pytest.approx(0.5)


def test_conflicts_cells_score_missing_responses_zero_and_leave_unreadable_verdicts_out():
    base = {"strategy": "vanilla", "conflict_type": "no_conflict", "recall_status": "ok"}
    judged = pa.Table.from_pylist(
        [
            {**base, "model": "m@greedy", "query_id": 1, "status": "ok", "adheres": 1, "answer_recall": 1},
            {
                **base,
                "model": "m@greedy",
                "query_id": 2,
                "status": "empty",
                "adheres": None,
                "answer_recall": None,
                "recall_status": "not_generated",
            },
            {
                **base,
                "model": "m@greedy",
                "query_id": 3,
                "status": "ok",
                "adheres": None,
                "answer_recall": 0,
            },  # unreadable behaviour verdict
            {
                **base,
                "model": "m@greedy",
                "query_id": 4,
                "status": "ok",
                "adheres": 1,
                "answer_recall": None,
                "recall_status": "no_gold",
                "conflict_type": "complementary",
            },
            {
                **base,
                "model": "m@greedy",
                "query_id": 5,
                "status": "ok",
                "adheres": 0,
                "answer_recall": 1,
                "strategy": "oracle",
            },
            {**base, "model": "other", "query_id": 1, "status": "ok", "adheres": 0, "answer_recall": 0},
        ]
    )
    by = {c["metric"]: c for c in conflicts_cells(judged, RUNS)}
    assert (by["Expected behaviour"]["value"], by["Expected behaviour"]["n"]) == (pytest.approx(2 / 3), 3)
    assert (by["Answer recall"]["value"], by["Answer recall"]["n"]) == (pytest.approx(1 / 3), 3)


def test_contextconflict_cells_pool_types_and_keep_only_defined_scores():
    accuracy = pa.table(
        {
            "model": ["m@base", "m@base", "m@cad-a1", "x"],
            "sample_id": ["a", "b", "a", "a"],
            "correct": [True, False, True, True],
        }
    )
    attributions = pa.table(
        {"model": ["m@base", "m@base"], "sample_id": ["c", "d"], "balance": [0.2, None], "undefined": [False, True]}
    )
    judged = pa.table({"model": ["m@cad-a1", "m@cad-a1"], "sample_id": ["a", "c"], "faithfulness": [0.5, None]})
    runs = {"m@base": ("m", "base"), "m@cad-a1": ("m", "cad-a1")}
    cells = {
        (c["method"], c["metric"]): c
        for c in contextconflict_cells(runs, accuracy=accuracy, attributions=attributions, faithfulness=judged)
    }
    assert cells["base", "Acc (reasoning)"]["value"] == 0.5 and cells["cad-a1", "Acc (reasoning)"]["n"] == 1
    assert (
        cells["base", "Bal (summarization)"]["n"] == 1
        and cells["base", "Bal (summarization)"]["higher_is_better"] is False
    )
    assert (cells["cad-a1", "Fth (all types)"]["value"], cells["cad-a1", "Fth (all types)"]["n"]) == (0.5, 1)
    assert ("base", "Fth (all types)") not in cells


# --------------------------------------------------------------------------
# Read-outs on a tiny model.


def test_conflictbank_cad_read_out_contrasts_with_the_default_prompt(tiny_llama_dir, records):
    from conflictlab.conflictbank.evaluation import letter_token_ids, read_out, read_out_with_method
    from conflictlab.lm.choices import choice_logits
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir)
    few = records.slice(0, 2)
    settings = [SETTINGS_BY_NAME["misinformation"]]
    greedy = read_out(lm, few, settings, model_name="g")
    assert greedy.equals(read_out_with_method(lm, few, settings, "greedy", model_name="g"))
    cad = read_out_with_method(lm, few, settings, "cad-a1", model_name="c")

    def encode(text):
        return lm.tokenizer(text)["input_ids"]

    letters = letter_token_ids(lm.tokenizer)
    rows = few.to_pylist()
    with_ctx = choice_logits(lm, [encode(render_prompt(r, settings[0])) for r in rows], letters)
    without = choice_logits(lm, [encode(render_prompt(r, SETTINGS_BY_NAME["default"])) for r in rows], letters)
    expected = np.exp(2 * with_ctx - without - (2 * with_ctx - without).max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.array(cad.column("probabilities").to_pylist()), expected, atol=1e-4)


def test_methods_sharing_two_passes_equal_each_computed_alone(tiny_llama_dir, instances):
    from conflictlab.arbitration.evaluation import answer_token_ids
    from conflictlab.lm.choices import choice_logits, choice_logits_under
    from conflictlab.lm.loading import load
    from conflictlab.lm.methods import contrast_option_logits

    lm = load(tiny_llama_dir)
    rows = instances.slice(0, 6).to_pylist()
    prompts = [encode_arbitration_prompt(lm.tokenizer, r["prompt"]) for r in rows]
    free = [encode_arbitration_prompt(lm.tokenizer, context_free_prompt(r)) for r in rows]
    answers = answer_token_ids(lm.tokenizer, chat=lm.has_chat_template)
    greedy, cad = choice_logits_under(lm, prompts, free, answers, ["greedy", "cad-a0.5"], batch_size=4)
    alone_with, alone_without = choice_logits(lm, prompts, answers), choice_logits(lm, free, answers)
    np.testing.assert_allclose(greedy, alone_with, atol=1e-4)
    np.testing.assert_allclose(cad, contrast_option_logits(alone_with, alone_without, 0.5), atol=1e-4)
    with pytest.raises(ValueError, match="prompting method reads prompts of its own"):
        choice_logits_under(lm, prompts, free, answers, ["cfp-opinion"])

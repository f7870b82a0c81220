import math

import pyarrow as pa
import pytest

from conflictlab.contextconflict.accuracy import (
    ACCURACY_SCHEMA,
    extract_answer,
    normalize,
    score_answer,
    score_responses,
    summarize_accuracy,
)
from conflictlab.contextconflict.dataset import SAMPLE_SCHEMA
from conflictlab.lm.shards import RESPONSE_SCHEMA
from conflictlab.stats import proportion_interval


def test_last_answer_span_wins():
    assert extract_answer("<answer>False</answer> wait... <answer>True</answer>") == ("True", True)
    assert extract_answer("<ANSWER>\nYes\n</ANSWER>") == ("\nYes\n", True)


def test_missing_or_unclosed_tag_scores_whole_response():
    assert extract_answer("The answer is True.") == ("The answer is True.", False)
    assert extract_answer("<answer>True") == ("<answer>True", False)


def test_normalize():
    assert normalize("  INSUFFICIENT_INFORMATION ") == "insufficient information"
    assert normalize("Yes.") == "yes"
    assert normalize("Ｔｒｕｅ!") == "true"


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("True", "True", True),
        ("The hypothesis is true.", "True", True),
        ("True or False", "True", False),  # hedged: names two labels
        ("It could be true, but it is uncertain", "Uncertain", False),
        ("Uncertain", "Uncertain", True),
        ("false", "True", False),
        ("Yes", "Yes.", True),
        ("No", "Yes", False),
        ("Yes and no", "No", False),
        ("Yes, although there is insufficient information", "Yes", False),
    ],
)
def test_label_golds_are_strict(answer, gold, correct):
    score = score_answer(answer, [gold])
    assert score.rule == "label"
    assert score.correct is correct


@pytest.mark.parametrize(
    "answer, correct",
    [("INSUFFICIENT_INFORMATION", True), ("There is insufficient information.", True), ("University of Bergen", False)],
)
def test_abstention_gold(answer, correct):
    score = score_answer(answer, ["INSUFFICIENT_INFORMATION"])
    assert (score.rule, score.correct) == ("abstain", correct)


@pytest.mark.parametrize(
    "answer, golds, correct",
    [
        ("Luis Ortega", ["Luis Ortega"], True),
        ("The coach is luis ortega.", ["Luis Ortega"], True),
        ("Ortega", ["Luis Ortega"], False),
        ("17 members", ["7"], False),  # word boundary for short golds
        ("It now has 7 members.", ["7"], True),
        ("£2.50", ["£2.50"], True),
        # long golds: substring after normalisation, leading article dropped
        (
            "He worked at University of Texas Health Science Center at San Antonio",
            ["The University of Texas Health Science Center at San Antonio."],
            True,
        ),
        ("Gout", ["Gout", "Acute gouty arthritis"], True),  # any element of a list gold
        ("acute gouty arthritis of the toe", ["Gout", "Acute gouty arthritis"], True),
        ("Pseudogout", ["Gout"], False),
        ("University of Bergen, or insufficient information", ["University of Bergen"], False),
    ],
)
def test_free_text_golds(answer, golds, correct):
    score = score_answer(answer, golds)
    long_gold = any(len(g.split()) > 3 for g in golds)
    assert (score.rule, score.correct) == ("free_text_long" if long_gold else "free_text", correct)


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        # True/False/Uncertain is not binary: a negated label is ambiguous, hence wrong
        ("Not true", "True", False),
        ("The hypothesis is not true.", "True", False),
        ("The hypothesis is not true.", "False", False),
        ("The hypothesis is not true.", "Uncertain", False),
        ("not false", "True", False),
        ("It isn't true.", "True", False),
        ("It is never uncertain: true", "True", False),
        ("It is not uncertain.", "True", False),
        # Yes/No is binary: a negated label names the other one
        ("The answer is not yes.", "No", True),
        ("The answer is not yes.", "Yes", False),
        ("It isn't no", "Yes", True),
        ("No, the claim is not supported.", "No", True),
        ("Yes, the claim does not fail.", "Yes", True),  # negation of a non-label word
        ("not yes, but yes", "Yes", False),  # names both
    ],
)
def test_negated_labels(answer, gold, correct):
    score = score_answer(answer, [gold])
    assert (score.rule, score.correct) == ("label", correct)


def test_summary_counts_the_samples_each_rule_decided():
    rows = [
        {
            "model": "m",
            "conflict_type": "temporal",
            "subset": "root",
            "implicit": True,
            "status": "ok",
            "tag_found": True,
            "extracted": "x",
            "gold": ["g"],
            "rule": rule,
            "correct": correct,
        }
        for rule, correct in (
            ("label", True),
            ("free_text", False),
            ("free_text_long", True),
            ("free_text_long", False),
        )
    ]
    table = pa.Table.from_pylist([{**r, "sample_id": str(i)} for i, r in enumerate(rows)], schema=ACCURACY_SCHEMA)
    row = next(r for r in summarize_accuracy(table).to_pylist() if r["level"] == "type")
    assert (row["n_label"], row["n_free_text"], row["n_free_text_long"], row["n_abstain"]) == (1, 1, 2, 0)
    assert row["accuracy"] == 0.5


def _samples(rows):
    base = {
        "task_family": "reasoning",
        "implicit": False,
        "evidence": ["e"],
        "n_evidence": 1,
        "accuracy_labels": None,
        "extras": "{}",
        "source_path": "x",
    }
    return pa.Table.from_pylist([{**base, **r} for r in rows], schema=SAMPLE_SCHEMA)


def _responses(rows):
    base = {
        "template": "reasoning_combined",
        "prompt": "p",
        "n_prompt_tokens": 1,
        "n_response_tokens": 1,
        "finish_reason": "stop",
        "backend": "hf",
        "model": "m",
        "model_checksum": "c",
        "decoding": "{}",
        "seed": 0,
        "message": None,
    }
    return pa.Table.from_pylist([{**base, **r} for r in rows], schema=RESPONSE_SCHEMA)


def test_score_responses_keeps_every_sample_in_the_denominator():
    samples = _samples(
        [
            {
                "sample_id": "inferential/folio/1",
                "conflict_type": "inferential",
                "subset": "folio",
                "question": "q",
                "answer": ["True"],
                "implicit": True,
            },
            {
                "sample_id": "inferential/folio/2",
                "conflict_type": "inferential",
                "subset": "folio",
                "question": "q",
                "answer": ["False"],
                "implicit": True,
            },
            {
                "sample_id": "inferential/entailment_bank/1",
                "conflict_type": "inferential",
                "subset": "entailment_bank",
                "question": "q",
                "answer": ["evaporation"],
            },
        ]
    )
    responses = _responses(
        [
            {"sample_id": "inferential/folio/1", "response": "Reasoning... <answer>True</answer>", "status": "ok"},
            {
                "sample_id": "inferential/folio/2",
                "response": None,
                "status": "too_long",
                "n_response_tokens": None,
                "finish_reason": None,
            },
            {"sample_id": "inferential/entailment_bank/1", "response": "It is evaporation.", "status": "ok"},
        ]
    )
    scored = score_responses(samples, responses, "m").to_pylist()
    assert [r["correct"] for r in scored] == [True, False, True]
    assert [r["tag_found"] for r in scored] == [True, False, False]
    assert scored[1]["rule"] == "not_generated"

    summary = {
        (r["level"], r["group"]): r for r in summarize_accuracy(score_responses(samples, responses, "m")).to_pylist()
    }
    overall = summary[("type", "all")]
    assert overall["n"] == 3 and overall["n_not_generated"] == 1
    assert overall["accuracy"] == pytest.approx(2 / 3)
    assert overall["missing_tag_rate"] == pytest.approx(0.5)  # 1 of the 2 generated
    assert summary[("subset", "folio")]["accuracy"] == pytest.approx(0.5)
    assert summary[("implicit", "implicit")]["n"] == 2
    assert summary[("implicit", "explicit")]["accuracy"] == 1.0


def test_missing_response_row_is_an_error():
    samples = _samples(
        [
            {
                "sample_id": "temporal/root/1",
                "conflict_type": "temporal",
                "subset": "root",
                "question": "q",
                "answer": ["x"],
            }
        ]
    )
    with pytest.raises(ValueError, match="no row for sample 'temporal/root/1'"):
        score_responses(samples, _responses([]), "m")


def test_score_responses_matches_scoring_each_sample_alone_whatever_the_response_order():
    """The columnar join gives each sample its own response: rows in the
    samples' order, equal to scoring each (sample, response) by itself, with
    the responses shuffled, in several chunks, and one for an unknown sample."""
    golds = [["True"], ["Paris"], ["INSUFFICIENT_INFORMATION"], ["seven"], ["No"]]
    texts = ["<answer>True</answer>", "It is Lyon.", None, "<answer>insufficient information</answer>", "No, never."]
    statuses = ["ok", "ok", "too_long", "ok", "ok"]
    samples = _samples(
        [
            {
                "sample_id": f"temporal/root/{i}",
                "conflict_type": "temporal",
                "subset": "root",
                "question": "q",
                "answer": g,
            }
            for i, g in enumerate(golds)
        ]
    )
    rows = [
        {"sample_id": f"temporal/root/{i}", "response": t, "status": s} for i, (t, s) in enumerate(zip(texts, statuses))
    ]
    rows.append({"sample_id": "temporal/root/unknown", "response": "x", "status": "ok"})
    shuffled = _responses(rows[::-1])
    scored = score_responses(samples, pa.concat_tables([shuffled.slice(0, 2), shuffled.slice(2)]), "m").to_pylist()
    assert [r["sample_id"] for r in scored] == samples.column("sample_id").to_pylist()
    for row, gold, text, status in zip(scored, golds, texts, statuses):
        if status != "ok":
            assert (row["status"], row["rule"], row["correct"], row["tag_found"], row["extracted"]) == (
                status,
                "not_generated",
                False,
                False,
                None,
            )
            continue
        extracted, tag_found = extract_answer(text)
        expected = score_answer(extracted, gold)
        assert (row["extracted"], row["tag_found"], row["rule"], row["correct"]) == (
            extracted,
            tag_found,
            expected.rule,
            expected.correct,
        )
    assert [r["correct"] for r in scored] == [True, False, False, False, True]


def test_a_repeated_response_row_is_an_error():
    samples = _samples(
        [
            {
                "sample_id": "temporal/root/1",
                "conflict_type": "temporal",
                "subset": "root",
                "question": "q",
                "answer": ["x"],
            }
        ]
    )
    responses = _responses([{"sample_id": "temporal/root/1", "response": "x", "status": "ok"}] * 2)
    with pytest.raises(ValueError, match="duplicate sample_id 'temporal/root/1'"):
        score_responses(samples, responses, "m")


@pytest.mark.parametrize(
    "answer,gold,correct",
    [
        # a later "no" is not the answer: the leading clause names "yes"
        ("Yes, there is no evidence against it.", "Yes", True),
        ("Yes, there is no evidence against it.", "No", False),
        ("No. Yes would need more evidence.", "No", True),
        ("Based on the evidence, the answer is yes; no source disagrees", "Yes", True),
        # one clause naming two labels stays ambiguous
        ("True or False", "True", False),
        ("It is true and false at once, no?", "True", False),
        # a label in a later clause decides when the first names none
        ("After reading both passages: False", "False", True),
        # a negated label after the leading one does not undo it
        ("True. It is not uncertain.", "True", True),
        # naming the abstention label anywhere hedges the answer
        ("Yes, but there is insufficient information to be sure", "Yes", False),
    ],
)
def test_the_leading_clause_decides_a_label(answer, gold, correct):
    score = score_answer(answer, [gold])
    assert (score.rule, score.correct) == ("label", correct)


def test_accuracy_interval_is_clopper_pearson_and_absent_below_two():
    rows = [
        {
            "model": "m",
            "conflict_type": "temporal",
            "subset": subset,
            "implicit": False,
            "status": "ok",
            "tag_found": True,
            "extracted": "x",
            "gold": ["g"],
            "rule": "free_text",
            "correct": True,
        }
        for subset in ("root", "root", "root", "root", "single")
    ]
    table = pa.Table.from_pylist([{**r, "sample_id": str(i)} for i, r in enumerate(rows)], schema=ACCURACY_SCHEMA)
    summary = {(r["level"], r["group"]): r for r in summarize_accuracy(table).to_pylist()}
    overall = summary[("type", "all")]
    # 5 of 5: Clopper-Pearson [47.8%, 100%], where the percentile bootstrap gives [100%, 100%]
    assert overall["accuracy"] == 1.0 and overall["ci_high"] == 1.0
    assert overall["ci_low"] == pytest.approx(proportion_interval(5, 5)[1]) and overall["ci_low"] < 0.6
    single = summary[("subset", "single")]
    assert single["n"] == 1 and single["accuracy"] == 1.0
    assert single["ci_low"] is None or math.isnan(single["ci_low"])

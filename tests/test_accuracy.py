import numpy as np
import pyarrow as pa
import pytest

from conflictlab.contextconflict.accuracy import ACCURACY_SCHEMA, extract_answer, normalize, score_answer, score_responses, summarize_accuracy
from conflictlab.contextconflict.dataset import SAMPLE_SCHEMA
from conflictlab.lm.shards import RESPONSE_SCHEMA
from conflictlab.stats import bootstrap_mean_ci


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
        ("He worked at University of Texas Health Science Center at San Antonio", ["The University of Texas Health Science Center at San Antonio."], True),
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
        ("True. It is not uncertain.", "True", False),
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
        {"model": "m", "conflict_type": "temporal", "subset": "root", "implicit": True, "status": "ok", "tag_found": True,
         "extracted": "x", "gold": ["g"], "rule": rule, "correct": correct}
        for rule, correct in (("label", True), ("free_text", False), ("free_text_long", True), ("free_text_long", False))
    ]
    table = pa.Table.from_pylist([{**r, "sample_id": str(i)} for i, r in enumerate(rows)], schema=ACCURACY_SCHEMA)
    row = next(r for r in summarize_accuracy(table, n_resamples=50).to_pylist() if r["level"] == "type")
    assert (row["n_label"], row["n_free_text"], row["n_free_text_long"], row["n_abstain"]) == (1, 1, 2, 0)
    assert row["accuracy"] == 0.5


def _samples(rows):
    base = {"task_family": "reasoning", "implicit": False, "evidence": ["e"], "n_evidence": 1,
            "accuracy_labels": None, "extras": "{}", "source_path": "x"}
    return pa.Table.from_pylist([{**base, **r} for r in rows], schema=SAMPLE_SCHEMA)


def _responses(rows):
    base = {"template": "reasoning_combined", "prompt": "p", "n_prompt_tokens": 1, "n_response_tokens": 1,
            "finish_reason": "stop", "backend": "hf", "model": "m", "model_checksum": "c", "decoding": "{}",
            "seed": 0, "message": None}
    return pa.Table.from_pylist([{**base, **r} for r in rows], schema=RESPONSE_SCHEMA)


def test_score_responses_keeps_every_sample_in_the_denominator():
    samples = _samples([
        {"sample_id": "inferential/folio/1", "conflict_type": "inferential", "subset": "folio", "question": "q", "answer": ["True"], "implicit": True},
        {"sample_id": "inferential/folio/2", "conflict_type": "inferential", "subset": "folio", "question": "q", "answer": ["False"], "implicit": True},
        {"sample_id": "inferential/entailment_bank/1", "conflict_type": "inferential", "subset": "entailment_bank", "question": "q", "answer": ["evaporation"]},
    ])
    responses = _responses([
        {"sample_id": "inferential/folio/1", "response": "Reasoning... <answer>True</answer>", "status": "ok"},
        {"sample_id": "inferential/folio/2", "response": None, "status": "too_long", "n_response_tokens": None, "finish_reason": None},
        {"sample_id": "inferential/entailment_bank/1", "response": "It is evaporation.", "status": "ok"},
    ])
    scored = score_responses(samples, responses, "m").to_pylist()
    assert [r["correct"] for r in scored] == [True, False, True]
    assert [r["tag_found"] for r in scored] == [True, False, False]
    assert scored[1]["rule"] == "not_generated"

    summary = {(r["level"], r["group"]): r for r in summarize_accuracy(score_responses(samples, responses, "m"), n_resamples=200).to_pylist()}
    overall = summary[("type", "all")]
    assert overall["n"] == 3 and overall["n_not_generated"] == 1
    assert overall["accuracy"] == pytest.approx(2 / 3)
    assert overall["missing_tag_rate"] == pytest.approx(0.5)  # 1 of the 2 generated
    assert summary[("subset", "folio")]["accuracy"] == pytest.approx(0.5)
    assert summary[("implicit", "implicit")]["n"] == 2
    assert summary[("implicit", "explicit")]["accuracy"] == 1.0


def test_missing_response_row_is_an_error():
    samples = _samples([{"sample_id": "temporal/root/1", "conflict_type": "temporal", "subset": "root", "question": "q", "answer": ["x"]}])
    with pytest.raises(ValueError, match="no row for sample 'temporal/root/1'"):
        score_responses(samples, _responses([]), "m")


def test_bootstrap_ci_brackets_the_mean_and_shrinks_with_n():
    rng = np.random.default_rng(1)
    small = rng.random(20) < 0.5
    large = rng.random(2000) < 0.5
    m1, lo1, hi1 = bootstrap_mean_ci(small)
    m2, lo2, hi2 = bootstrap_mean_ci(large)
    assert lo1 <= m1 <= hi1 and lo2 <= m2 <= hi2
    assert (hi2 - lo2) < (hi1 - lo1)
    assert bootstrap_mean_ci(np.array([1.0])) == (1.0, 1.0, 1.0)

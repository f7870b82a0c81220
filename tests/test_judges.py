"""The judge layer: request shapes, cache, arithmetic of the judged metrics, the gold set."""

import json
import math

import numpy as np
import pyarrow as pa
import pytest

from conflictlab.judges.cache import JudgeCache, JudgeSession, cached_replies
from conflictlab.judges.faithfulness import (
    cut_short,
    faithfulness_rows,
    faithfulness_score,
    is_refusal,
    join_faithfulness,
    parse_statements,
    summarize_faithfulness,
)
from conflictlab.judges.gold import GOLD_KINDS, gold_agreement, read_gold
from conflictlab.judges.prompts.evidence_rating import rating_request
from conflictlab.judges.prompts.ragas import (
    STATEMENTS_INSTRUCTION,
    VERDICT_INSTRUCTION,
    statements_request,
    verdict_request,
)
from conflictlab.judges.ratings import (
    RATING_SCALE,
    agreement_table,
    cohen_kappa,
    judge_balance_table,
    rating_balance,
    shapley_ratings,
    spearman_rho,
)
from conflictlab.judges.requests import JudgeRequest, read_choices

from .conftest import REPO

# --------------------------------------------------------------------------
# Requests and replies


def test_closed_request_schema_and_strict_reading():
    request = JudgeRequest(template="t_v1", messages=(("user", "q"),), fields=("a", "b"), options=("0", "1"))
    schema = request.schema()
    assert schema["required"] == ["a", "b"] and schema["properties"]["a"]["enum"] == ["0", "1"]
    assert read_choices(request, '{"a": "1", "b": "0"}') == ["1", "0"]
    assert read_choices(request, '{"a": "2", "b": "0"}') == [None, "0"]  # not an option
    assert read_choices(request, '{"a": "1", "b": ') == [None, None]  # cut short
    assert read_choices(request, "[1, 0]") == [None, None]
    with pytest.raises(ValueError, match="either fields"):
        JudgeRequest(template="t", messages=(), reply_schema="{}", fields=("a",), options=("0", "1"))
    with pytest.raises(ValueError, match="repeated"):
        JudgeRequest(template="t", messages=(), fields=("a", "a"), options=("0", "1"))


def test_request_key_changes_with_template_version_and_input():
    base = verdict_request("ctx", ["s1"])
    assert base.key() == verdict_request("ctx", ["s1"]).key()
    assert base.key() != verdict_request("ctx", ["s2"]).key()
    renamed = JudgeRequest(
        template="ragas_verdict_v2", messages=base.messages, fields=base.fields, options=base.options
    )
    assert renamed.key() != base.key()


def test_ragas_prompts_quote_the_published_instructions():
    """Quoted exactly as ../shared/references/judges.md gives them (when present)."""
    reference = REPO.parent / "shared" / "references" / "judges.md"
    if not reference.is_file():
        pytest.skip(f"reference file not present at {reference}")
    text = reference.read_text()
    assert f'"{STATEMENTS_INSTRUCTION}"' in text and f'"{VERDICT_INSTRUCTION}"' in text
    assert STATEMENTS_INSTRUCTION in statements_request("q", "a", max_new_tokens=8).messages[0][1]
    request = verdict_request("the context", ["one", "two", "three"])
    assert request.fields == ("statement_1", "statement_2", "statement_3")
    assert "statement_3: three" in request.messages[0][1] and "Context: the context" in request.messages[0][1]


def test_rating_request_numbers_every_source_in_order():
    request = rating_request("Q?", ["first piece", "second piece", "third piece"], "the response")
    text = request.messages[0][1]
    assert request.fields == ("Source 1", "Source 2", "Source 3") and request.options == ("1", "2", "3", "4", "5")
    assert (
        text.index("Source 1: first piece") < text.index("Source 2: second piece") < text.index("Source 3: third piece")
    )
    assert "5 – Dominant Contribution" in text and "Avoid position bias" in text


# --------------------------------------------------------------------------
# Cache


def _echo_judge(calls):
    def ask(requests):
        calls.append(len(requests))
        return [json.dumps({f: request.options[-1] for f in request.fields}) for request in requests]

    return ask


def test_cache_asks_only_what_it_has_not_stored_and_survives_a_new_job(tmp_path):
    requests = [verdict_request("ctx", [f"s{i}"]) for i in range(3)]
    calls = []
    cache = JudgeCache(tmp_path, judge="j", writer="job1")
    replies, sent = cached_replies(requests + requests[:1], _echo_judge(calls), cache)
    assert sent == 3 and calls == [3] and len(replies) == 4 and replies[0] == replies[3]
    # a new job (a fresh cache object) reads the stored file: nothing is asked
    again = JudgeCache(tmp_path, judge="j", writer="job2")
    assert cached_replies(requests, _echo_judge(calls), again) == (replies[:3], 0) and calls == [3]
    # another template version asks again, only for itself
    bumped = [
        JudgeRequest(template="ragas_verdict_v2", messages=r.messages, fields=r.fields, options=r.options)
        for r in requests[:1]
    ]
    _, sent = cached_replies(requests + bumped, _echo_judge(calls), again)
    assert sent == 1 and calls == [3, 1]
    # another judge shares nothing
    assert cached_replies(requests, _echo_judge(calls), JudgeCache(tmp_path, judge="other", writer="job3"))[1] == 3


def test_session_opens_the_judge_only_on_a_cache_miss(tmp_path):
    opened = []

    class Fake:
        def __init__(self):
            self.ask = _echo_judge([])

        def __enter__(self):
            opened.append(1)
            return self

        def __exit__(self, *exc):
            return False

    requests = [verdict_request("ctx", ["s"])]
    with JudgeSession(Fake, JudgeCache(tmp_path, judge="j", writer="w")) as session:
        session.ask(requests)
    assert opened == [1] and session.calls == 1
    with JudgeSession(Fake, JudgeCache(tmp_path, judge="j", writer="w")) as session:
        session.ask(requests)
    assert opened == [1] and session.calls == 0  # all cached: no model loaded


# --------------------------------------------------------------------------
# Faithfulness


def test_statement_parsing_is_strict():
    assert parse_statements('{"statements": ["A is B.", " ", "C is D."]}') == ["A is B.", "C is D."]
    assert parse_statements('{"statements": []}') == []
    assert parse_statements('{"statements": ["A is B.", ') is None  # cut short
    assert parse_statements('{"statements": [1, 2]}') is None
    assert parse_statements('{"claims": ["x"]}') is None
    assert parse_statements("A is B.") is None


def test_faithfulness_score_and_its_nan_cases():
    assert faithfulness_score([1, 0, 1]) == pytest.approx(2 / 3)
    assert faithfulness_score([0, 0]) == 0.0
    assert math.isnan(faithfulness_score([]))


def _scripted(statements_by_answer, verdicts_by_statement):
    """A judge that answers step 1 from the answer text and step 2 per statement."""

    def ask(requests):
        replies = []
        for request in requests:
            text = request.messages[0][1]
            if request.closed:
                statements = [line.split(": ", 1)[1] for line in text.split("\n") if line.startswith("statement_")][
                    -len(request.fields) :
                ]
                replies.append(
                    json.dumps({f: verdicts_by_statement.get(s, "x") for f, s in zip(request.fields, statements)})
                )
            else:
                answer = json.loads(text.rsplit("Input: ", 1)[1].rsplit("\nOutput:", 1)[0])["answer"]
                replies.append(statements_by_answer[answer])
        return replies

    return ask


def test_faithfulness_rows_on_a_hand_computed_set():
    samples = [
        {"sample_id": f"s{i}", "question": "Q", "evidence": ["e1", "e2"], "conflict_type": "perspective"}
        for i in range(6)
    ]
    responses = [
        {"sample_id": "s0", "status": "ok", "response": "two of three"},
        {"sample_id": "s1", "status": "ok", "response": "nothing to say"},
        {"sample_id": "s2", "status": "ok", "response": "garbled"},
        {"sample_id": "s3", "status": "too_long", "response": None},
        {"sample_id": "s4", "status": "ok", "response": "bad verdict"},
        {"sample_id": "s5", "status": "ok", "response": "cut"},
    ]
    ask = _scripted(
        {
            "two of three": '{"statements": ["a", "b", "c"]}',
            "nothing to say": '{"statements": []}',
            "garbled": "Statements: a, b",
            "bad verdict": '{"statements": ["a", "zz"]}',
            "cut": '{"statements": ["a", "b is',
        },
        {"a": "1", "b": "0", "c": "1"},  # "zz" gets an invalid verdict
    )
    rows = {
        r["sample_id"]: r
        for r in faithfulness_rows([("m", samples, responses)], ask, judge="j", max_statement_tokens=8).to_pylist()
    }
    assert (
        rows["s0"]["status"] == "ok"
        and rows["s0"]["faithfulness"] == pytest.approx(2 / 3)
        and rows["s0"]["verdicts"] == [1, 0, 1]
    )
    assert rows["s1"]["status"] == "no_statements" and rows["s1"]["faithfulness"] is None
    assert rows["s2"]["status"] == "unparseable" and rows["s2"]["faithfulness"] is None
    assert rows["s3"]["status"] == "not_generated" and rows["s3"]["faithfulness"] is None
    assert rows["s4"]["status"] == "unparseable" and rows["s4"]["faithfulness"] is None
    assert rows["s5"]["status"] == "truncated" and rows["s5"]["faithfulness"] is None
    summary = summarize_faithfulness(
        faithfulness_rows([("m", samples, responses)], ask, judge="j", max_statement_tokens=8), n_resamples=200
    ).to_pylist()[0]
    assert (summary["n"], summary["n_scored"], summary["nan_rate"]) == (6, 1, pytest.approx(5 / 6))
    assert (
        summary["n_no_statements"],
        summary["n_unparseable"],
        summary["n_not_generated"],
        summary["n_truncated"],
    ) == (1, 2, 1, 1)
    # one scored response: the mean, no interval
    assert summary["faithfulness"] == pytest.approx(2 / 3) and summary["ci_low"] is None and summary["ci_high"] is None


def test_refusals_and_empty_responses_are_nan_with_their_reason_and_never_judged():
    samples = [
        {"sample_id": f"s{i}", "question": "Q", "evidence": ["e1", "e2"], "conflict_type": "temporal"} for i in range(4)
    ]
    responses = [
        {"sample_id": "s0", "status": "ok", "response": "I'm sorry, but I can't help with that."},
        {"sample_id": "s1", "status": "ok", "response": "   \n"},
        {"sample_id": "s2", "status": "ok", "response": ""},
        {"sample_id": "s3", "status": "ok", "response": "a claim"},
    ]
    sent = []
    # The judge would score each refusal 0 (a statement the context does not support).
    statements = {r["response"]: '{"statements": ["The assistant cannot answer."]}' for r in responses}
    statements["a claim"] = '{"statements": ["a"]}'
    scripted = _scripted(statements, {"a": "1", "The assistant cannot answer.": "0"})

    def ask(requests):
        sent.extend(requests)
        return scripted(requests)

    rows = {
        r["sample_id"]: r
        for r in faithfulness_rows([("m", samples, responses)], ask, judge="j", max_statement_tokens=8).to_pylist()
    }
    assert rows["s0"]["status"] == "refusal" and rows["s0"]["faithfulness"] is None
    assert rows["s1"]["status"] == rows["s2"]["status"] == "empty_response"
    assert rows["s1"]["faithfulness"] is None and rows["s2"]["faithfulness"] is None
    assert rows["s3"]["status"] == "ok" and rows["s3"]["faithfulness"] == 1.0
    assert len(sent) == 2  # one statement request and one verdict request, both for s3
    summary = summarize_faithfulness(
        faithfulness_rows([("m", samples, responses)], ask, judge="j", max_statement_tokens=8)
    ).to_pylist()[0]
    assert (summary["n_refusal"], summary["n_empty_response"], summary["n_scored"]) == (1, 2, 1)


@pytest.mark.parametrize(
    "text,refusal",
    [
        ("I'm sorry, but I can't help with that.", True),
        ("I cannot answer this question based on the provided evidence.", True),
        ("As an AI language model, I cannot determine which source is right.", True),
        ("I don't know.", True),
        ("Sorry.", True),
        ("Source 1 says the bridge opened in 1932, Source 2 says 1933.", False),
        ("The sources disagree; I'm sorry to say neither gives a date.", False),  # not an opener
        # a hedge that goes on to claim things is judged as any response
        (
            "I'm sorry, the evidence conflicts. " + "Source 1 reports that the treaty was signed in Paris in 1920 " * 4,
            False,
        ),
    ],
)
def test_is_refusal_is_narrow(text, refusal):
    assert is_refusal(text) is refusal


def test_cut_short_tells_a_truncated_reply_from_a_malformed_one():
    assert cut_short('{"statements": ["a", "b is')  # inside a string
    assert cut_short('{"statements": ["a", ')  # after a comma
    assert cut_short('{"statements": ["a"]')  # object left open
    assert not cut_short('{"statements": ["a"]}')  # complete
    assert not cut_short("Statements: a, b")
    assert not cut_short('{"statements": ["a"]} trailing')
    assert not cut_short("")


def test_summary_nan_rate_has_a_clopper_pearson_interval_and_join_gives_the_fth_n():
    from conflictlab.judges.faithfulness import FAITHFULNESS_SCHEMA
    from conflictlab.stats import proportion_interval

    rows = [
        {
            "sample_id": f"s{i}",
            "model": "m",
            "conflict_type": "temporal",
            "judge": "j",
            "status": "ok" if i < 7 else "refusal",
            "statements": None,
            "verdicts": None,
            "faithfulness": (i % 3) / 2 if i < 7 else None,
        }
        for i in range(10)
    ]
    summary = summarize_faithfulness(pa.Table.from_pylist(rows, schema=FAITHFULNESS_SCHEMA), n_resamples=200)
    row = summary.to_pylist()[0]
    assert (row["nan_rate"], row["nan_ci_low"], row["nan_ci_high"]) == pytest.approx(proportion_interval(3, 10))
    assert row["n_scored"] == 7 and row["n_refusal"] == 3
    accuracy = pa.Table.from_pylist(
        [
            {"model": "m", "conflict_type": "temporal", "level": "type", "n": 50},
            {"model": "m", "conflict_type": "temporal", "level": "subset", "n": 25},
        ]
    )
    joined = join_faithfulness(accuracy, summary, where=lambda r: r["level"] == "type").to_pylist()
    assert joined[0]["fth_n"] == 7 and joined[0]["n"] == 50 and joined[1]["fth_n"] is None
    assert joined[0]["faithfulness"] == pytest.approx(row["faithfulness"])


def test_the_paper_config_gives_statement_extraction_ragas_budget():
    import yaml

    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert config["judges"]["max_statement_tokens"] >= 2048


def test_faithfulness_refuses_a_sample_without_response():
    samples = [{"sample_id": "s0", "question": "Q", "evidence": ["e"], "conflict_type": "temporal"}]
    with pytest.raises(ValueError, match="no row for samples"):
        faithfulness_rows([("m", samples, [])], lambda r: [], judge="j", max_statement_tokens=8)


# --------------------------------------------------------------------------
# Ratings, kappa, Tables 2 and 7


@pytest.mark.parametrize(
    "a,b",
    [
        ([1, 2, 3, 4, 5, 1, 2], [1, 2, 3, 4, 5, 2, 1]),
        ([1, 1, 1, 2, 2, 2], [1, 1, 2, 2, 2, 1]),
        (["yes", "no", "yes", "yes"], ["yes", "yes", "yes", "no"]),
        ([3, 3, 3, 3], [3, 3, 3, 4]),  # one rater constant
        ([1, 5, 1, 5, 1], [5, 1, 5, 1, 5]),  # full disagreement
    ],
)
def test_cohen_kappa_equals_sklearn(a, b):
    from sklearn.metrics import cohen_kappa_score

    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_cohen_kappa_on_a_known_table_and_degenerate_cases():
    # 2x2 table [[20, 5], [10, 15]]: po = 0.7, pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert math.isnan(cohen_kappa([2, 2, 2], [2, 2, 2]))  # chance agreement is 1
    assert cohen_kappa(np.array(a, dtype=np.int8), np.array(b, dtype=np.int8)) == cohen_kappa(
        a, b
    )  # arrays, as Table 2 passes them
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
@pytest.mark.parametrize(
    "a,b",
    [
        ([1, 2, 3, 4, 5, 1, 2], [1, 2, 3, 4, 5, 2, 1]),
        ([1, 1, 3, 5, 5, 3], [1, 2, 3, 4, 5, 5]),
        ([2, 2, 2, 4], [2, 2, 4, 4]),  # 1, 3 and 5 unused: the scale still spaces 2 and 4 two steps apart
        ([1, 5, 1, 5, 1], [5, 1, 5, 1, 5]),
    ],
)
def test_weighted_kappa_equals_sklearn_over_the_full_scale(a, b, weights):
    from sklearn.metrics import cohen_kappa_score

    expected = cohen_kappa_score(a, b, weights=weights, labels=list(RATING_SCALE))
    assert cohen_kappa(a, b, weights=weights, labels=RATING_SCALE) == pytest.approx(expected)
    assert cohen_kappa(a, b, labels=RATING_SCALE) == pytest.approx(
        cohen_kappa_score(a, b)
    )  # unused labels change nothing unweighted


def test_weighted_kappa_credits_a_near_miss_and_rejects_unknown_labels():
    truth, near, far = (
        [5, 4, 1, 2, 3],
        [4, 5, 1, 2, 3],
        [1, 5, 1, 2, 3],
    )  # two misses each: by one step, or by four and one
    assert cohen_kappa(truth, near) == pytest.approx(cohen_kappa(truth, far), abs=0.1)
    assert (
        cohen_kappa(truth, near, weights="linear", labels=RATING_SCALE)
        > cohen_kappa(truth, far, weights="linear", labels=RATING_SCALE) + 0.3
    )
    with pytest.raises(ValueError, match="not among"):
        cohen_kappa([1, 6], [1, 2], labels=RATING_SCALE)
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")


def test_shapley_ratings_reproduce_the_guideline_examples():
    assert shapley_ratings([0.8, 0.0]) == [5, 1]  # Example A
    assert shapley_ratings([0.2, 0.2]) == [3, 3]  # Example B
    assert shapley_ratings([-0.1, 0.0]) == [1, 1]  # Example C: no positive contribution
    # n = 4, relative shares 4 * [0.5, 0.3, 0.2, 0] = [2, 1.2, 0.8, 0] -> 1 + round(2 * [2, 1.2, 0.8, 0])
    assert shapley_ratings([0.5, 0.3, 0.2, -1.0]) == [5, 3, 3, 1]
    assert shapley_ratings([0.125, 0.875]) == [2, 5]  # n = 2: 2 * 2 * 0.125 = 0.5 rounds up


@pytest.mark.parametrize("n", [2, 3, 6])
def test_shapley_ratings_are_invariant_to_the_number_of_pieces(n):
    assert shapley_ratings([0.7] * n) == [3] * n  # an even split is "Moderate" at every n
    assert shapley_ratings([0.1 / 3] * n) == [3] * n  # float noise in the shares does not move a rating
    assert shapley_ratings([1.0] + [0.0] * (n - 1)) == [5] + [1] * (n - 1)  # all mass on one piece
    even = [1.0 / n] * n
    assert shapley_ratings([2 * p for p in even[: n // 2]] + [0.0] * (n - n // 2)) == [5] * (n // 2) + [1] * (
        n - n // 2
    )


def test_at_two_pieces_the_mapping_is_the_guideline_based_1_plus_round_4p():
    for share in np.linspace(0.0, 1.0, 41):
        assert shapley_ratings([share, 1.0 - share])[0] == int(np.floor(round(4 * share, 9) + 0.5)) + 1


def test_rating_balance_uses_rating_minus_one_as_mass():
    shares, value = rating_balance([3, 3])
    assert shares.tolist() == [0.5, 0.5] and value == 0.0
    shares, value = rating_balance([5, 3])
    assert shares.tolist() == [pytest.approx(2 / 3), pytest.approx(1 / 3)] and value == pytest.approx(
        1 / 3
    )  # n = 2: |p1 - p2|
    shares, value = rating_balance([1, 1, 1])  # Example C: no piece contributes, as no positive phi
    assert np.isnan(shares).all() and math.isnan(value)


@pytest.mark.parametrize("n", [2, 3, 6])
def test_judge_and_shapley_balance_share_one_scale_at_every_n(n):
    from conflictlab.stats import balance

    one_dominant = [5] + [1] * (n - 1)
    assert rating_balance(one_dominant)[1] == pytest.approx(1.0) == balance(np.array([1.0] + [0.0] * (n - 1))).balance
    assert rating_balance([4] * n)[1] == pytest.approx(0.0)
    # the judge's Balance equals the Shapley Balance of phi proportional to rating - 1
    ratings = [5, 2, 3, 1, 4, 4][:n]
    assert rating_balance(ratings)[1] == pytest.approx(balance(np.array(ratings, dtype=float) - 1).balance)


def test_spearman_rho_nan_on_ties_and_values():
    assert spearman_rho([1, 2, 3], [0.1, 0.5, 0.9]) == pytest.approx(1.0)
    assert spearman_rho([3, 2, 1], [0.1, 0.5, 0.9]) == pytest.approx(-1.0)
    assert math.isnan(spearman_rho([2, 2], [0.1, 0.4]))


def _ratings_table(rows):
    from conflictlab.judges.ratings import RATING_SCHEMA

    full = []
    for sid, ctype, ratings in rows:
        status = "ok" if ratings is not None else "unparseable"
        balance = None if ratings is None else rating_balance(ratings)[1]
        full.append(
            {
                "sample_id": sid,
                "model": "m",
                "conflict_type": ctype,
                "judge": "j",
                "status": status,
                "ratings": ratings,
                "shares": None,
                "balance": balance,
            }
        )
    return pa.Table.from_pylist(full, schema=RATING_SCHEMA)


def _attributions(rows):
    return pa.Table.from_pylist(
        [
            {"sample_id": sid, "model": "m", "phi": phi, "balance": bal, "undefined": bal is None}
            for sid, phi, bal in rows
        ]
    )


def test_tables_2_and_7_on_hand_computed_ratings():
    ratings = _ratings_table(
        [
            ("a", "perspective", [5, 1]),
            ("b", "perspective", [3, 3]),
            ("c", "ambiguity", [1, 5]),
            ("d", "ambiguity", None),
            ("e", "ambiguity", [3, 3, 3]),
            ("f", "ambiguity", [1, 1]),
        ]
    )
    attributions = _attributions(
        [
            ("a", [0.9, 0.0], 1.0),
            ("b", [0.1, 0.3], 0.5),
            ("c", [0.2, 0.2], 0.0),
            ("d", [0.3, 0.1], 0.5),
            ("e", [0.1, 0.1, 0.1], 0.0),
            ("f", [0.3, 0.1], 0.5),
        ]
    )
    table2 = {
        (r["comparison"], r["conflict_type"], r["n_evidence"]): r
        for r in agreement_table(ratings, attributions, scorer="s").to_pylist()
    }
    pooled = table2["Shapley (s) vs LLM judge", "all", "all"]
    # Shapley ratings: a [5, 1], b [2, 4], c [3, 3], e [3, 3, 3], f [4, 2]; judge: [5, 1], [3, 3], [1, 5], [3, 3, 3],
    # [1, 1]
    judge, shapley = [5, 1, 3, 3, 1, 5, 3, 3, 3, 1, 1], [5, 1, 2, 4, 3, 3, 3, 3, 3, 4, 2]
    assert pooled["kappa"] == pytest.approx(cohen_kappa(judge, shapley))
    assert pooled["kappa_linear"] == pytest.approx(cohen_kappa(judge, shapley, weights="linear", labels=RATING_SCALE))
    assert pooled["kappa_quadratic"] == pytest.approx(
        cohen_kappa(judge, shapley, weights="quadratic", labels=RATING_SCALE)
    )
    assert (pooled["n_pieces"], pooled["n_samples"]) == (11, 5)  # d is unparseable: left out
    # rho: a = +1; b, c, e, f have tied ratings or phi: undefined
    assert pooled["mean_spearman"] == pytest.approx(1.0) and pooled["n_spearman"] == 1
    # per number of pieces: n = 3 is e alone, an even split rated equal by both: full agreement
    three = table2["Shapley (s) vs LLM judge", "all", "3"]
    assert (three["n_samples"], three["n_pieces"]) == (1, 3) and three[
        "kappa"
    ] is None  # one label only: kappa undefined
    assert table2["Shapley (s) vs LLM judge", "all", "2"]["n_samples"] == 4
    assert table2["Shapley (s) vs LLM judge", "ambiguity", "all"]["n_samples"] == 3
    assert (
        table2["Human 1 vs Human 2", "all", "all"]["kappa"] is None
        and "not released" in table2["Human 1 vs Human 2", "all", "all"]["note"]
    )

    table7 = {r["conflict_type"]: r for r in judge_balance_table(ratings, attributions, n_resamples=200).to_pylist()}
    perspective = table7["perspective"]
    # judge Balance from rating - 1: a [4, 0] -> 1, b [2, 2] -> 0
    assert perspective["judge_balance"] == pytest.approx(100 * (1.0 + 0.0) / 2)
    assert perspective["shapley_balance"] == pytest.approx(75.0)
    assert perspective["n"] == 2 and perspective["n_evidence"] == "n=2: 2"
    ambiguity = table7["ambiguity"]
    # c and e have both Balances; d unparseable; f: every rating 1, so no judge Balance, and its Shapley Balance is left
    # out too
    assert (ambiguity["n"], ambiguity["n_samples"], ambiguity["n_unparseable"], ambiguity["n_judge_undefined"]) == (
        2,
        4,
        1,
        1,
    )
    assert ambiguity["n_evidence"] == "n=2: 1; n=3: 1"
    assert ambiguity["judge_balance"] == pytest.approx(100 * (1.0 + 0.0) / 2)
    assert ambiguity["shapley_balance"] == pytest.approx(0.0) and ambiguity["human"] is None


def test_table7_averages_both_columns_over_the_same_samples():
    ratings = _ratings_table([("a", "granularity", [5, 1]), ("b", "granularity", [3, 3]), ("c", "granularity", [2, 4])])
    # b's Shapley Balance is undefined (no positive phi): b leaves both columns
    attributions = _attributions([("a", [0.9, 0.1], 0.8), ("b", [-0.1, -0.2], None), ("c", [0.3, 0.1], 0.5)])
    row = judge_balance_table(ratings, attributions, n_resamples=200).to_pylist()[0]
    judge_a, judge_c = rating_balance([5, 1])[1], rating_balance([2, 4])[1]
    assert row["judge_balance"] == pytest.approx(100 * (judge_a + judge_c) / 2)
    assert row["shapley_balance"] == pytest.approx(100 * (0.8 + 0.5) / 2)
    assert (row["n"], row["n_shapley_undefined"], row["n_judge_undefined"]) == (2, 1, 0)
    # two samples: below the Student-t interval's minimum n, so none (its coverage there is under 93%)
    assert row["judge_ci_low"] is None and row["judge_ci_high"] is None


# --------------------------------------------------------------------------
# Gold set


def test_the_shipped_gold_set_has_at_least_30_items_of_every_kind():
    from conflictlab.conflicts.gold import GOLD_KINDS as CONFLICTS_GOLD_KINDS

    items = read_gold(REPO / "resources" / "judges" / "gold.jsonl", {**GOLD_KINDS, **CONFLICTS_GOLD_KINDS})
    kinds = [i["kind"] for i in items]
    assert len(items) >= 30 and {"verdict", "rating", "equivalence"} <= set(kinds)
    assert {i["verdict"] for i in items if i["kind"] == "verdict"} == {0, 1}  # both verdicts occur


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"id": "x", "kind": "score"}', "field 'kind'"),
        ('{"id": "x", "kind": "verdict", "context": "c", "statement": "s", "verdict": 2}', "field 'verdict'"),
        ('{"id": "x", "kind": "verdict", "context": "c", "verdict": 1}', "field 'statement'"),
        (
            '{"id": "x", "kind": "rating", "question": "q", "evidence": ["a", "b"], "response": "r", "ratings": [1]}',
            "field 'ratings'",
        ),
        ("not json", "not JSON"),
    ],
)
def test_a_bad_gold_line_names_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "gold.jsonl"
    path.write_text(
        '{"id": "ok", "kind": "equivalence", "question": "q", "references": ["a"], "candidate": "a", "equivalent": '
        '"yes"}\n' + line + "\n"
    )
    with pytest.raises(ValueError, match=f"gold.jsonl, line 2: {message}"):
        read_gold(path, GOLD_KINDS)


def test_gold_agreement_counts_unreadable_labels_as_disagreement():
    from conflictlab.judges.gold import GOLD_SCHEMA

    judged = pa.Table.from_pylist(
        [
            {"id": "1", "kind": "verdict", "judge": "j", "gold": ["1"], "judged": ["1"]},
            {"id": "2", "kind": "verdict", "judge": "j", "gold": ["0"], "judged": ["1"]},
            {"id": "3", "kind": "verdict", "judge": "j", "gold": ["0"], "judged": [None]},
            {"id": "4", "kind": "rating", "judge": "j", "gold": ["5", "1"], "judged": ["3", "3"]},
        ],
        schema=GOLD_SCHEMA,
    )
    rows = {r["kind"]: r for r in gold_agreement(judged).to_pylist()}
    assert rows["verdict"]["agreement"] == pytest.approx(1 / 3) and rows["verdict"]["n_unparseable"] == 1
    assert rows["verdict"]["kappa"] == pytest.approx(cohen_kappa(["1", "0"], ["1", "1"]))
    assert rows["rating"]["balance_mae"] == pytest.approx(
        100 * abs(rating_balance([3, 3])[1] - rating_balance([5, 1])[1])
    )


# --------------------------------------------------------------------------
# The in-process judge on a real model


def test_hf_judge_reads_each_field_as_a_full_forward_would(tiny_llama_dir):
    """Field by field with cached keys and values, the chosen options equal
    the argmax of a plain forward over the whole text at each field."""
    import torch
    from transformers import AutoModelForCausalLM

    from conflictlab.judges.backends import HFJudge
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")
    judge = HFJudge(lm, name="test")
    request = rating_request(
        "Which fruit is red?", ["Apples are red.", "Bananas are yellow.", "Limes are green."], "Apples are red."
    )
    reply = json.loads(judge.ask([request])[0])
    assert list(reply) == list(request.fields) and all(v in request.options for v in reply.values())

    plain = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()
    text = judge._chat(request)
    for index, field in enumerate(request.fields):
        text += request.field_opening(index)
        context, firsts = judge.option_read_out(request, text)
        with torch.inference_mode():
            logits = plain(input_ids=torch.tensor([context])).logits[0, -1, list(firsts)]
        assert reply[field] == request.options[int(torch.argmax(logits))], field
        text += reply[field]


def test_answer_match_overrides_only_long_free_text_golds():
    from conflictlab.contextconflict.accuracy import score_responses, summarize_accuracy

    samples = pa.Table.from_pylist(
        [
            {
                "sample_id": "long",
                "conflict_type": "inferential",
                "subset": "medical_qa",
                "implicit": False,
                "answer": ["iron deficiency anemia of the elderly"],
            },
            {
                "sample_id": "short",
                "conflict_type": "inferential",
                "subset": "medical_qa",
                "implicit": False,
                "answer": ["Paris"],
            },
        ]
    )
    responses = pa.Table.from_pylist(
        [
            {"sample_id": "long", "status": "ok", "response": "<answer>anemia from low iron in old age</answer>"},
            {"sample_id": "short", "status": "ok", "response": "<answer>Lyon</answer>"},
        ]
    )
    verbatim = {r["sample_id"]: r for r in score_responses(samples, responses, "m").to_pylist()}
    assert verbatim["long"]["rule"] == "free_text_long" and not verbatim["long"]["correct"]
    judged = {
        r["sample_id"]: r
        for r in score_responses(samples, responses, "m", judged={"long": True, "short": True}).to_pylist()
    }
    assert judged["long"]["rule"] == "free_text_judged" and judged["long"]["correct"]
    assert judged["short"]["rule"] == "free_text" and not judged["short"]["correct"]  # short golds stay verbatim
    unreadable = {
        r["sample_id"]: r for r in score_responses(samples, responses, "m", judged={"long": None}).to_pylist()
    }
    assert unreadable["long"]["rule"] == "free_text_long"
    summary = summarize_accuracy(score_responses(samples, responses, "m", judged={"long": True})).to_pylist()[0]
    assert summary["n_free_text_judged"] == 1 and summary["n_free_text"] == 1 and summary["accuracy"] == 0.5


def test_answer_match_asks_every_models_long_golds_in_one_call():
    """One answer_match job judges every model: the requests of all of them go to the judge at once (so that it
    batches across models), each row keeps its model, and short golds are not asked."""
    from conflictlab.contextconflict.answer_match import judged_answer_matches
    from conflictlab.judges.requests import closed_reply

    samples = [
        {"sample_id": "long", "conflict_type": "temporal", "question": "Why?", "answer": ["a long gold answer here"]},
        {"sample_id": "short", "conflict_type": "temporal", "question": "Who?", "answer": ["Paris"]},
    ]

    def responses(text):
        return [{"sample_id": s["sample_id"], "status": "ok", "response": f"<answer>{text}</answer>"} for s in samples]

    calls = []

    def ask(requests):
        calls.append(len(requests))
        return [closed_reply(r, ["yes" if "the same long answer" in str(r.conversation()) else "no"]) for r in requests]

    table = judged_answer_matches(
        [("m", samples, responses("the same long answer")), ("m@base", samples, responses("other words"))],
        ask,
        judge="j",
    )
    assert calls == [2]
    assert [(r["model"], r["sample_id"], r["equivalent"]) for r in table.to_pylist()] == [
        ("m", "long", True),
        ("m@base", "long", False),
    ]


def test_facts_grounding_prompt_is_the_published_one_with_a_closed_reply():
    from conflictlab.judges.prompts.facts import FACTS_PROMPT, LABELS, grounding_request

    reference = REPO.parent / "shared" / "references" / "judges.md"
    if not reference.is_file():
        pytest.skip(f"reference file not present at {reference}")
    assert FACTS_PROMPT == reference.read_text().split("````text\n", 1)[1].split("\n````", 1)[0]
    request = grounding_request("Q?", "the context", "A [1]. B [2].", ["A [1].", "B [2]."])
    text = request.messages[0][1]
    assert "{{" not in text and "**User Query:**\nQ?" in text and "**Response:**\nA [1]. B [2]." in text
    assert request.fields == ("sentence_1", "sentence_2") and request.options == LABELS


def test_judge_name_holds_the_resolved_precision():
    from conflictlab.judges.backends import judge_name

    assert judge_name({"backend": "hf", "model": "m", "dtype": "float32"}) == "m|hf|float32"
    assert judge_name({"backend": "hf", "model": "m", "dtype": "auto"}) in ("m|hf|float32", "m|hf|bfloat16")
    assert judge_name({"backend": "served", "model": "m", "dtype": None, "max_model_len": 2048}) == "m|served|bfloat16"
    assert (
        judge_name({"backend": "openai", "endpoint": {"base_url": "http://x/v1", "model": "g"}})
        == "g|openai|http://x/v1"
    )


def test_hf_judge_shares_a_prompt_prefix_across_requests_without_changing_replies(tiny_llama_dir):
    """Requests sharing a template's instructions and examples, asked together,
    feed fewer tokens and get the replies each gets when asked alone."""
    from conflictlab.conflicts.judge_prompts import behaviour_request
    from conflictlab.judges.backends import HFJudge
    from conflictlab.lm.loading import load

    judge = HFJudge(load(tiny_llama_dir, dtype="float32"), name="test")
    requests = [
        behaviour_request("outdated", "Who leads the club?", answer)
        for answer in ("Ana has led it since 2024 [1].", "Bo led it in 2019 [2].", "Either Ana [1] or Bo [2].")
    ] + [rating_request("Which fruit is red?", ["Apples are red.", "Limes are green."], "Apples are red.")]
    together = judge.ask(requests)
    fed_together = judge.tokens_fed
    alone = [judge.ask([request])[0] for request in requests]
    assert together == alone
    assert fed_together < 0.6 * (judge.tokens_fed - fed_together)


def test_served_judge_starts_one_server_with_the_configured_engine_arguments(monkeypatch, tmp_path):
    """open_judge's `served` branch hands the judge settings to serve_vllm (the
    server itself is tested against the in-process engine in test_vllm.py)."""
    import contextlib

    import conflictlab.lm.server as server
    from conflictlab.judges.backends import GuidedJudge, open_judge
    from conflictlab.lm.endpoint import Endpoint
    from conflictlab.lm.guided import EndpointGuidedChat

    calls = []

    @contextlib.contextmanager
    def fake_serve(model_dir, **kwargs):
        calls.append((model_dir, kwargs))
        yield Endpoint(base_url="http://127.0.0.1:9/v1", model="model")

    monkeypatch.setattr(server, "serve_vllm", fake_serve)
    settings = {
        "backend": "served",
        "model": "m",
        "dtype": "bfloat16",
        "max_model_len": 1024,
        "vllm": {"gpu_memory_utilization": 0.3, "enforce_eager": True},
    }
    with open_judge(settings, tmp_path / "model", server_log=tmp_path / "server.log") as judge:
        assert isinstance(judge, GuidedJudge) and isinstance(judge.chat, EndpointGuidedChat)
        assert judge.chat.endpoint.base_url == "http://127.0.0.1:9/v1" and judge.name == "m|served|bfloat16"
    assert calls == [
        (
            tmp_path / "model",
            {
                "log_path": tmp_path / "server.log",
                "dtype": "bfloat16",
                "max_model_len": 1024,
                "gpu_memory_utilization": 0.3,
                "extra_args": ("--enforce-eager",),
            },
        )
    ]
    assert settings["vllm"] == {"gpu_memory_utilization": 0.3, "enforce_eager": True}  # the caller's settings untouched


@pytest.mark.parametrize(
    "name, value, flag",
    [
        ("enforce_eager", True, "--enforce-eager"),
        ("enforce_eager", False, "--no-enforce-eager"),
        ("max_num_seqs", 8, "--max-num-seqs=8"),
        ("compilation_config", {"level": 0}, '--compilation-config={"level": 0}'),
    ],
)
def test_engine_arguments_become_the_flags_vllms_server_parses(name, value, flag):
    """vLLM's server refuses ``--enforce-eager=True`` (its boolean flags take no value)."""
    from conflictlab.lm.server import server_flag

    assert server_flag(name, value) == flag

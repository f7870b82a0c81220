"""The judge gold set covers every judge the tables use, CONFLICTS' three included."""

import json

import pytest

from conflictlab.conflicts.gold import GOLD_KINDS as CONFLICTS_GOLD_KINDS
from conflictlab.judges.gold import GOLD_KINDS, gold_agreement, judge_gold, read_gold

from .conftest import REPO

GOLD = REPO / "resources" / "judges" / "gold.jsonl"
KINDS = {**GOLD_KINDS, **CONFLICTS_GOLD_KINDS}
CONFLICTS_KINDS = ("conflicts_behaviour", "conflicts_recall", "conflicts_grounding")


def test_the_gold_set_measures_each_conflicts_judge_on_both_answers():
    from conflictlab.conflicts.prompts import TAXONOMY

    items = read_gold(GOLD, KINDS)
    by_kind = {kind: [i for i in items if i["kind"] == kind] for kind in CONFLICTS_KINDS}
    assert all(len(members) >= 6 for members in by_kind.values()), {k: len(v) for k, v in by_kind.items()}
    behaviour = by_kind["conflicts_behaviour"]
    for category in TAXONOMY:  # an adherent and a non-adherent response per category
        assert {i["adheres"] for i in behaviour if i["category"] == category} == {"yes", "no"}, category
    assert {i["includes_answer"] for i in by_kind["conflicts_recall"]} == {"yes", "no"}
    # paper §4: a hedge that includes the gold answer counts as recalled
    hedged = [
        i
        for i in by_kind["conflicts_recall"]
        if " or " in i["response"] or "others" in i["response"] or "although" in i["response"]
    ]
    assert hedged and all(
        i["includes_answer"] == "yes" and i["answer"].casefold() in i["response"].casefold() for i in hedged
    )
    labels = {label for i in by_kind["conflicts_grounding"] for label in i["labels"]}
    assert labels == {"supported", "unsupported", "contradictory", "no_rad"}


def test_no_gold_item_is_a_few_shot_example_of_the_judge_it_measures():
    from conflictlab.conflicts.judge_prompts import EXAMPLES

    example_responses = {e.response for examples in EXAMPLES.values() for e in examples}
    example_queries = {e.query.casefold() for examples in EXAMPLES.values() for e in examples}
    for item in read_gold(GOLD, KINDS):
        if item["kind"] == "conflicts_behaviour":
            assert item["response"] not in example_responses and item["question"].casefold() not in example_queries, (
                item["id"]
            )


def test_gold_items_are_judged_with_the_very_requests_the_tables_use():
    """Each CONFLICTS gold item goes through the request builder that
    conflicts.judging uses on real responses, and is scored per label."""
    from conflictlab.conflicts.judging import judge_responses

    items = read_gold(GOLD, KINDS)
    picked = {kind: next(i for i in items if i["kind"] == kind) for kind in CONFLICTS_KINDS}
    asked = []

    def ask(requests):
        asked.extend(requests)
        return [json.dumps({f: r.options[0] for f in r.fields}) for r in requests]

    table = judge_gold(list(picked.values()), ask, judge="j", kinds=KINDS)
    rows = {r["kind"]: r for r in table.to_pylist()}
    assert rows["conflicts_grounding"]["gold"] == picked["conflicts_grounding"]["labels"]
    assert len(rows["conflicts_grounding"]["judged"]) == len(picked["conflicts_grounding"]["labels"])
    assert rows["conflicts_behaviour"]["gold"] == [picked["conflicts_behaviour"]["adheres"]]

    # the same query and response through the production path give the same requests
    grounding, recall = picked["conflicts_grounding"], picked["conflicts_recall"]
    query = {
        "query_id": 1,
        "question": grounding["question"],
        "conflict_type": picked["conflicts_behaviour"]["category"],
        "correct_answer": recall["answer"],
        "n_results": len(grounding["results"]),
        "search_results": grounding["results"],
    }
    production = []

    def record(requests):
        production.extend(requests)
        return ["{}"] * len(requests)

    judge_responses(
        [query],
        [{"query_id": 1, "model": "m", "strategy": "vanilla", "status": "ok", "response": grounding["response"]}],
        record,
        judge="j",
    )
    by_template = {r.template.split("_v")[0]: r for r in production}
    gold_grounding = next(r for r in asked if r.template.startswith("facts"))
    assert by_template["facts_grounding"] == gold_grounding
    assert {r.template for r in asked} >= {
        by_template["conflicts_answer_recall"].template,
        by_template[f"conflicts_behaviour_{query['conflict_type']}"].template,
    }
    agreement = {r["kind"]: r for r in gold_agreement(table).to_pylist()}
    assert set(agreement) == set(CONFLICTS_KINDS)


@pytest.mark.parametrize(
    "line,message",
    [
        (
            '{"id": "x", "kind": "conflicts_behaviour", "category": "contradiction", "question": "q", "response": "r", '
            '"adheres": "yes"}',
            "field 'category'",
        ),
        (
            '{"id": "x", "kind": "conflicts_behaviour", "category": "outdated", "question": "q", "response": "r", '
            '"adheres": "1"}',
            "field 'adheres'",
        ),
        (
            '{"id": "x", "kind": "conflicts_recall", "question": "q", "answer": "a", "response": "r", '
            '"includes_answer": "maybe"}',
            "field 'includes_answer'",
        ),
        (
            '{"id": "x", "kind": "conflicts_grounding", "question": "q", "results": [{"url": "u", "title": "t", '
            '"snippet": "s", "date": "NA", "short_text": "x"}], '
            '"response": "One [1]. Two [1].", "labels": ["supported"]}',
            "field 'labels'",
        ),
        (
            '{"id": "x", "kind": "conflicts_grounding", "question": "q", "results": [{"url": "u"}], "response": "One '
            '[1].", "labels": ["supported"]}',
            "field 'results'",
        ),
    ],
)
def test_a_bad_conflicts_gold_line_names_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "gold.jsonl"
    path.write_text(
        '{"id": "ok", "kind": "equivalence", "question": "q", "references": ["a"], "candidate": "a", "equivalent": '
        '"yes"}\n' + line + "\n"
    )
    with pytest.raises(ValueError, match=f"gold.jsonl, line 2: {message}"):
        read_gold(path, KINDS)


def test_kinds_come_from_the_caller_and_judging_checks_them_too(tmp_path):
    """judges.gold knows only the generic kinds; without kinds read_gold reads
    the envelope (id, kind), and judge_gold checks every item it judges."""
    lines = [
        '{"id": "a", "kind": "equivalence", "question": "q", "references": ["x"], "candidate": "x", "equivalent": '
        '"yes"}',
        '{"id": "b", "kind": "conflicts_recall", "question": "q", "answer": "x", "response": "x", "includes_answer": '
        '"maybe"}',
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert set(GOLD_KINDS).isdisjoint(CONFLICTS_GOLD_KINDS)
    with pytest.raises(ValueError, match="line 2: field 'kind' is 'conflicts_recall', expected one of"):
        read_gold(path, GOLD_KINDS)
    items = read_gold(path)
    assert [i["id"] for i in items] == ["a", "b"]
    with pytest.raises(ValueError, match="gold item 'b': field 'includes_answer' must be 'yes' or 'no'"):
        judge_gold(items, lambda requests: [], judge="j", kinds=KINDS)
    with pytest.raises(ValueError, match="gold item 'b': field 'kind'"):
        judge_gold(items, lambda requests: [], judge="j", kinds=GOLD_KINDS)
    path.write_text(lines[0] + "\n" + lines[0] + "\n")
    with pytest.raises(ValueError, match="line 2: field 'id' 'a' repeats an earlier item"):
        read_gold(path)

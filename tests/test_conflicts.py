"""CONFLICTS: loader (demo data and hand-broken copies), dates, citations, prompts, Task 1 read-out."""

import datetime as dt
import json

import numpy as np
import pytest

from conflictlab.conflicts.citations import citation_quality, citations, sentences
from conflictlab.conflicts.dataset import CATEGORIES, RecordError, parse_date, read_conflicts
from conflictlab.conflicts.prompts import LABELS, STRATEGIES, TAXONOMY, parse_label, parse_taxonomy_aware, task1_messages, task2_messages

from .conftest import REPO

DEMO = REPO / "resources" / "demo" / "conflicts" / "conflicts.jsonl"


def test_demo_data_has_three_queries_per_category_in_the_release_format():
    queries, rejected = read_conflicts(DEMO)
    assert rejected.num_rows == 0
    rows = queries.to_pylist()
    counts = {name: sum(r["conflict_type"] == name for r in rows) for name in CATEGORIES}
    assert all(n >= 3 for n in counts.values()) and len(rows) >= 15
    assert all(5 <= r["n_results"] <= 10 for r in rows)
    assert [r["query_id"] for r in rows] == list(range(1, len(rows) + 1))  # line numbers
    # the release's exact field sets
    for line in DEMO.read_text().splitlines():
        record = json.loads(line)
        assert set(record) == {"source", "question", "conflict_type", "correct_answer", "search_results"}
        assert all(set(r) == {"title", "url", "snippet", "date", "response_str", "short_text"} for r in record["search_results"])
    # an empty gold is null; dated and undated results both occur
    assert any(r["correct_answer"] is None for r in rows) and any(r["correct_answer"] for r in rows)
    dates = [res["parsed_date"] for r in rows for res in r["search_results"]]
    assert any(d is None for d in dates) and any(d is not None for d in dates)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2021-06-02", dt.date(2021, 6, 2)),
        ("2021-06-02T10:15:00Z", dt.date(2021, 6, 2)),
        ("March 3, 2019", dt.date(2019, 3, 3)),
        ("Mar 3, 2019", dt.date(2019, 3, 3)),
        ("12 May 2018", dt.date(2018, 5, 12)),
        ("NA", None),
        ("", None),
        ("2 days ago", None),  # relative: the crawl date is not released
        ("1 hour ago", None),
        ("February 30, 2020", None),
        ("sometime in spring", None),
    ],
)
def test_parse_date_on_each_released_form(text, expected):
    assert parse_date(text) == expected


def _broken(tmp_path, mutate):
    lines = DEMO.read_text().splitlines()
    record = json.loads(lines[1])
    mutate(record)
    lines[1] = json.dumps(record)
    path = tmp_path / "conflicts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


BROKEN = [
    (lambda r: r.update(conflict_type="Contradiction"), "conflict_type"),
    (lambda r: r.pop("question"), "question"),
    (lambda r: r.update(question="  "), "question"),
    (lambda r: r.pop("search_results"), "search_results"),
    (lambda r: r.update(search_results=[]), "search_results"),
    (lambda r: r["search_results"][0].update(title=3), "search_results[1].title"),
]


@pytest.mark.parametrize("mutate,field", BROKEN)
def test_a_bad_record_is_a_named_error(tmp_path, mutate, field):
    path = _broken(tmp_path, mutate)
    with pytest.raises(RecordError) as err:
        read_conflicts(path)
    assert (err.value.line, err.value.field) == (2, field) and "conflicts.jsonl, line 2" in str(err.value)


@pytest.mark.parametrize("mutate,field", BROKEN)
def test_a_bad_record_is_a_recorded_rejection_under_reject(tmp_path, mutate, field):
    path = _broken(tmp_path, mutate)
    queries, rejected = read_conflicts(path, on_error="reject")
    assert rejected.to_pylist() == [{"query_id": 2, "path": str(path), "field": field, "reason": rejected.column("reason")[0].as_py()}]
    assert queries.num_rows == 14 and 2 not in queries.column("query_id").to_pylist()


def test_both_spellings_of_the_third_category_and_a_line_that_is_not_json(tmp_path):
    path = _broken(tmp_path, lambda r: r.update(conflict_type="Conflicting opinions or research outcomes"))
    queries, _ = read_conflicts(path)
    assert queries.to_pylist()[1]["conflict_type"] == "conflicting_opinions"
    path.write_text(DEMO.read_text() + "{not json\n")
    with pytest.raises(RecordError, match="line 16: field '\\(line\\)': not JSON"):
        read_conflicts(path)


def test_the_pinned_release_check_refuses_another_file():
    with pytest.raises(ValueError, match="is not the pinned release"):
        read_conflicts(DEMO, check_release=True)


@pytest.mark.parametrize(
    "text,expected",
    [("It opened in 1889 [2].", [2]), ("Both [1][3].", [1, 3]), ("Both [1, 3].", [1, 3]), ("All [1-3].", [1, 2, 3]),
     ("All [1–3] and [5].", [1, 2, 3, 5]), ("No citation.", []), ("Not a citation [a].", [])],
)
def test_citation_forms(text, expected):
    assert citations(text) == expected


def test_sentences_keep_their_closing_citations_and_quality_counts():
    text = "It premiered on April 4, 2017 [2]. It ended in May [1][3]. Some say 2018. [7] Others disagree."
    assert sentences(text) == ["It premiered on April 4, 2017 [2].", "It ended in May [1][3].", "Some say 2018. [7]", "Others disagree."]
    quality = citation_quality(text, n_results=5)
    assert (quality.n_sentences, quality.n_cited, quality.n_citations, quality.n_invalid) == (4, 3, 4, 1)
    assert quality.cited_share == 0.75


def test_every_prompt_renders_every_result_with_its_index():
    queries, _ = read_conflicts(DEMO)
    query = queries.to_pylist()[4]
    prompts = [task1_messages(query["question"], query["search_results"])]
    prompts += [task2_messages(s, query["question"], query["search_results"], conflict_type="outdated" if s in ("pipeline", "oracle") else None) for s in STRATEGIES]
    for messages in prompts:
        text = messages[-1]["content"]
        positions = [text.index(f"[{k}] URL: {r['url']}") for k, r in enumerate(query["search_results"], start=1)]
        assert positions == sorted(positions)
        for r in query["search_results"]:
            assert r["short_text"] in text and r["snippet"] in text
            assert ("Date: " + r["date"] in text) == (r["date"] not in ("NA", ""))


def test_pipeline_takes_the_given_type_and_vanilla_none():
    results = [{"url": "u", "title": "t", "snippet": "s", "date": "NA", "short_text": "x"}]
    pipeline = task2_messages("pipeline", "Q?", results, conflict_type="misinformation")[0]["content"]
    oracle = task2_messages("oracle", "Q?", results, conflict_type="complementary")[0]["content"]
    assert TAXONOMY["misinformation"].behaviour in pipeline and TAXONOMY["complementary"].behaviour not in pipeline
    assert TAXONOMY["complementary"].behaviour in oracle
    with pytest.raises(ValueError, match="needs conflict_type"):
        task2_messages("pipeline", "Q?", results)
    with pytest.raises(ValueError, match="takes no conflict_type"):
        task2_messages("vanilla", "Q?", results, conflict_type="outdated")
    assert all(label in task1_messages("Q?", results)[0]["content"] for label in LABELS)


def test_generated_labels_and_taxonomy_aware_replies_are_parsed_strictly():
    assert parse_label("Conflict due to outdated information.") == "outdated"
    assert parse_label("Type: No conflict\nbecause ...") == "no_conflict"
    assert parse_label("I think it is no conflict") is None
    assert parse_taxonomy_aware("Type: Complementary information\nExplanation: both fit.\nResponse: A [1]. B [2].") == ("complementary", "A [1]. B [2].")
    assert parse_taxonomy_aware("Complementary information. A [1].") == (None, None)


def test_task1_accuracy_and_confusion_count_unparseable_as_wrong():
    from conflictlab.conflicts.evaluation import ORDER, confusion_matrix, task1_accuracy

    gold = ["no_conflict", "outdated", "outdated", "misinformation"]
    predicted = ["no_conflict", "outdated", None, "outdated"]
    accuracy, low, high = task1_accuracy(predicted, gold, n_resamples=200)
    assert accuracy == 0.5 and 0.0 <= low <= 0.5 <= high <= 1.0
    matrix = confusion_matrix(predicted, gold)
    assert matrix.shape == (5, 6) and matrix.sum() == 4
    assert matrix[ORDER.index("outdated"), ORDER.index("outdated")] == 1 and matrix[ORDER.index("outdated"), 5] == 1
    assert matrix[ORDER.index("misinformation"), ORDER.index("outdated")] == 1


def test_task1_read_out_scores_every_category_name_in_full(smollm2_dir):
    from conflictlab.conflicts.evaluation import ORDER, predicted_category, task1_scores
    from conflictlab.lm.loading import load

    lm = load(smollm2_dir, dtype="float32")
    query = read_conflicts(DEMO)[0].to_pylist()[0]
    scores = task1_scores(lm, query["question"], query["search_results"][:2])
    assert scores.shape == (len(ORDER),) and np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert len(set(np.round(scores, 6))) == len(ORDER)  # the two "Conflict due to ..." names are told apart
    assert predicted_category(scores) == ORDER[int(np.argmax(scores))]

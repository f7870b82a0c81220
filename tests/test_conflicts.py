"""CONFLICTS: loader (demo data and hand-broken copies), dates, citations, prompts, Task 1 read-out."""

import datetime as dt
import json

import numpy as np
import pytest

from conflictlab.conflicts.citations import citation_quality, citations, sentences
from conflictlab.conflicts.dataset import CATEGORIES, RecordError, parse_date, read_conflicts
from conflictlab.conflicts.prompts import (
    LABELS,
    STRATEGIES,
    TAXONOMY,
    parse_label,
    parse_taxonomy_aware,
    task1_messages,
    task2_messages,
)

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
        assert all(
            set(r) == {"title", "url", "snippet", "date", "response_str", "short_text"}
            for r in record["search_results"]
        )
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
    assert rejected.to_pylist() == [
        {"query_id": 2, "path": str(path), "field": field, "reason": rejected.column("reason")[0].as_py()}
    ]
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
    [
        ("It opened in 1889 [2].", [2]),
        ("Both [1][3].", [1, 3]),
        ("Both [1, 3].", [1, 3]),
        ("All [1-3].", [1, 2, 3]),
        ("All [1–3] and [5].", [1, 2, 3, 5]),
        ("No citation.", []),
        ("Not a citation [a].", []),
    ],
)
def test_citation_forms(text, expected):
    assert citations(text) == expected


def test_sentences_keep_their_closing_citations_and_quality_counts():
    text = "It premiered on April 4, 2017 [2]. It ended in May [1][3]. Some say 2018. [7] Others disagree."
    assert sentences(text) == [
        "It premiered on April 4, 2017 [2].",
        "It ended in May [1][3].",
        "Some say 2018. [7]",
        "Others disagree.",
    ]
    quality = citation_quality(text, n_results=5)
    assert (quality.n_sentences, quality.n_cited, quality.n_citations, quality.n_invalid) == (4, 3, 4, 1)
    assert quality.cited_share == 0.75


def test_every_prompt_renders_every_result_with_its_index():
    queries, _ = read_conflicts(DEMO)
    query = queries.to_pylist()[4]
    prompts = [task1_messages(query["question"], query["search_results"])]
    prompts += [
        task2_messages(
            s,
            query["question"],
            query["search_results"],
            conflict_type="outdated" if s in ("pipeline", "oracle") else None,
        )
        for s in STRATEGIES
    ]
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
    assert parse_taxonomy_aware("Type: Complementary information\nExplanation: both fit.\nResponse: A [1]. B [2].") == (
        "complementary",
        "A [1]. B [2].",
    )
    assert parse_taxonomy_aware("Complementary information. A [1].") == (None, None)


def test_task1_accuracy_and_confusion_count_unparseable_as_wrong():
    from statsmodels.stats.proportion import proportion_confint

    from conflictlab.conflicts.evaluation import ORDER, confusion_matrix, task1_accuracy

    gold = ["no_conflict", "outdated", "outdated", "misinformation"]
    predicted = ["no_conflict", "outdated", None, "outdated"]
    accuracy, low, high = task1_accuracy(predicted, gold)
    assert accuracy == 0.5  # the unparseable label stays in the denominator
    assert (low, high) == pytest.approx(proportion_confint(2, 4, method="beta"))
    # Clopper-Pearson, not a bootstrap: all right still has a lower bound below 1
    assert (
        task1_accuracy(gold, gold)[1] == pytest.approx(proportion_confint(4, 4, method="beta")[0])
        and task1_accuracy(gold, gold)[1] < 1
    )
    assert np.isnan(task1_accuracy(["outdated"], ["outdated"])[1])  # no interval at n < 2
    matrix = confusion_matrix(predicted, gold)
    assert matrix.shape == (5, 6) and matrix.sum() == 4
    assert matrix[ORDER.index("outdated"), ORDER.index("outdated")] == 1 and matrix[ORDER.index("outdated"), 5] == 1
    assert matrix[ORDER.index("misinformation"), ORDER.index("outdated")] == 1


def test_task1_read_out_scores_every_category_name_in_full(tiny_llama_dir):
    from conflictlab.conflicts.evaluation import ORDER
    from conflictlab.conflicts.responses import predicted_category, task1_scores
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")
    query = read_conflicts(DEMO)[0].to_pylist()[0]
    scores = task1_scores(lm, query["question"], query["search_results"][:2])
    assert scores.shape == (len(ORDER),) and np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert len(set(np.round(scores, 6))) == len(ORDER)  # the two "Conflict due to ..." names are told apart
    assert predicted_category(scores) == ORDER[int(np.argmax(scores))]


# --------------------------------------------------------------------------
# Task 2 generation, judging and tables, on a character-level fake model


class CharTokenizer:
    """A tokenizer whose token ids are character codes (decodable in tests)."""

    def apply_chat_template(self, conversation, add_generation_prompt=True, tokenize=True, **template_kwargs):
        text = "".join(f"<{m['role']}>{m['content']}" for m in conversation) + (
            "<assistant>" if add_generation_prompt else ""
        )
        return [ord(c) for c in text] if tokenize else text

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids if i not in HARMONY_IDS.values())


HARMONY_IDS = {"<|channel|>": 1, "<|message|>": 2, "<|end|>": 3, "<|return|>": 4, "<|start|>": 5}


def harmony_ids(text):
    """A rendered harmony completion -> ids: markers 1-5, other characters their codes."""
    import re

    pieces = re.split("(" + "|".join(re.escape(m) for m in HARMONY_IDS) + ")", text)
    return [i for piece in pieces for i in ([HARMONY_IDS[piece]] if piece in HARMONY_IDS else [ord(c) for c in piece])]


def harmony_tokens():
    from conflictlab.lm.channels import HarmonyTokens

    return HarmonyTokens(channel=1, message=2, end=3, return_=4, start=5, final=tuple(ord(c) for c in "final"))


class ScriptedBackend:
    """Records every prompt; replies with ``reply(prompt text)``."""

    name = "scripted"

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    def generate(self, prompts, params):
        from conflictlab.lm.generation import Completion

        texts = ["".join(map(chr, p)) for p in prompts]
        self.prompts += texts
        self.max_new_tokens = params.max_new_tokens
        replies = [self.reply(t) for t in texts]
        return [Completion(harmony_ids(r), r, "stop") for r in replies]


def demo_queries(n=None):
    return read_conflicts(DEMO)[0].to_pylist()[:n]


def test_pipeline_answers_with_the_predicted_type_and_oracle_with_the_gold():
    from conflictlab.conflicts.responses import respond

    queries = [q for q in demo_queries() if q["conflict_type"] == "outdated"][:2]
    predicted = {queries[0]["query_id"]: "misinformation", queries[1]["query_id"]: None}
    backend = ScriptedBackend(lambda prompt: "An answer [1].")
    table = respond(
        backend,
        CharTokenizer(),
        queries,
        predicted,
        model="m",
        strategies=["pipeline", "oracle"],
        limit=100_000,
        max_new_tokens=8,
    )
    rows = {(r["strategy"], r["query_id"]): r for r in table.to_pylist()}
    first, second = (q["query_id"] for q in queries)
    assert rows["pipeline", first]["given_type"] == "misinformation" and rows["pipeline", first]["status"] == "ok"
    assert rows["pipeline", second]["status"] == "no_predicted_type" and rows["pipeline", second]["response"] is None
    assert rows["oracle", first]["given_type"] == rows["oracle", second]["given_type"] == "outdated"
    pipeline_prompt, *oracle_prompts = backend.prompts  # the unparseable prediction sent nothing
    assert TAXONOMY["misinformation"].label in pipeline_prompt and TAXONOMY["outdated"].label not in pipeline_prompt
    assert all(TAXONOMY["outdated"].label in p for p in oracle_prompts) and len(oracle_prompts) == 2


def test_taxonomy_aware_replies_are_prefilled_and_split_and_long_prompts_refused():
    from conflictlab.conflicts.responses import respond

    queries = demo_queries(3)
    replies = iter([" No conflict\nExplanation: they agree.\nResponse: It opened in 1889 [1].", " I cannot say."])
    backend = ScriptedBackend(lambda prompt: next(replies))
    table = respond(
        backend,
        CharTokenizer(),
        queries[:2],
        {},
        model="m",
        strategies=["taxonomy_aware"],
        limit=100_000,
        max_new_tokens=8,
    )
    ok, bad = table.to_pylist()
    assert all(p.endswith("<assistant>Type:") for p in backend.prompts)
    assert (ok["status"], ok["predicted_type"], ok["response"]) == ("ok", "no_conflict", "It opened in 1889 [1].")
    assert bad["status"] == "unparseable" and bad["response"] is None and bad["reply"] == " I cannot say."
    too_long = respond(
        ScriptedBackend(lambda p: "x"),
        CharTokenizer(),
        queries,
        {},
        model="m",
        strategies=["vanilla"],
        limit=200,
        max_new_tokens=8,
    )
    assert set(too_long.column("status").to_pylist()) == {"too_long"}


def test_generated_task1_labels_are_parsed_strictly_and_counted():
    from conflictlab.conflicts.responses import types_by_generation

    queries = demo_queries(3)
    replies = iter([" Complementary information", " complementary-ish", " No conflict."])
    table = types_by_generation(
        ScriptedBackend(lambda p: next(replies)), CharTokenizer(), queries, model="m", limit=100_000, seed=0
    )
    assert table.column("predicted").to_pylist() == ["complementary", None, "no_conflict"]
    assert table.column("status").to_pylist() == ["ok", "unparseable", "ok"]


ANALYSIS = "<|channel|>analysis<|message|>Let me think.<|end|><|start|>assistant"


def test_a_reasoning_models_final_channel_is_its_response_and_nothing_is_prefilled():
    """GPT-OSS's harmony replies are split as in ContextConflict: the final
    channel is parsed and judged, the analysis kept, a cut reply counted."""
    from conflictlab.conflicts.responses import respond

    queries = demo_queries(2)
    replies = {
        "vanilla": [
            ANALYSIS + "<|channel|>final<|message|>It opened in 1889 [1].<|return|>",
            "<|channel|>analysis<|message|>Still thinking",
        ],
        "taxonomy_aware": [
            ANALYSIS + "<|channel|>final<|message|>Type: No conflict\nExplanation: they agree.\n"
            "Response: In 1889 [1].<|return|>",
            ANALYSIS + "<|channel|>final<|message|>No conflict. In 1889 [1].<|return|>",
        ],
    }
    script = iter(replies["vanilla"] + replies["taxonomy_aware"])
    backend = ScriptedBackend(lambda prompt: next(script))
    table = respond(
        backend,
        CharTokenizer(),
        queries,
        {},
        model="m",
        strategies=["vanilla", "taxonomy_aware"],
        limit=100_000,
        max_new_tokens=64,
        harmony=harmony_tokens(),
    )
    rows = table.to_pylist()
    assert all(p.endswith("<assistant>") for p in backend.prompts)  # no "Type:" where the analysis starts
    assert (rows[0]["status"], rows[0]["response"], rows[0]["reasoning"]) == (
        "ok",
        "It opened in 1889 [1].",
        "analysisLet me think.assistant",
    )
    assert (
        rows[1]["status"] == "no_final_channel"
        and rows[1]["response"] is None
        and rows[1]["reasoning"] == "analysisStill thinking"
    )
    assert (rows[2]["status"], rows[2]["predicted_type"], rows[2]["response"]) == ("ok", "no_conflict", "In 1889 [1].")
    assert rows[3]["status"] == "unparseable" and "<|" not in rows[3]["reply"]


def test_a_reasoning_models_task1_label_is_read_from_its_final_channel():
    from conflictlab.conflicts.responses import TASK1_MAX_NEW_TOKENS, types_by_generation

    script = iter(
        [
            ANALYSIS + "<|channel|>final<|message|>Type: Complementary information<|return|>",
            "<|channel|>analysis<|message|>Hmm",
        ]
    )
    backend = ScriptedBackend(lambda prompt: next(script))
    table = types_by_generation(
        backend,
        CharTokenizer(),
        demo_queries(2),
        model="m",
        limit=100_000,
        seed=0,
        harmony=harmony_tokens(),
        reasoning_tokens=256,
    )
    assert table.column("predicted").to_pylist() == ["complementary", None]
    assert table.column("status").to_pylist() == ["ok", "no_final_channel"]
    assert backend.max_new_tokens == 256 > TASK1_MAX_NEW_TOKENS and all(
        p.endswith("<assistant>") for p in backend.prompts
    )


def test_the_option_read_out_of_a_reasoning_model_scores_inside_its_final_channel():
    from conflictlab.conflicts.responses import reply_prefix

    assert reply_prefix("task1") == reply_prefix("taxonomy_aware") == "Type:" and reply_prefix("vanilla") == ""
    assert reply_prefix("task1", harmony=harmony_tokens(), scored=True) == "<|channel|>final<|message|>Type:"
    assert reply_prefix("taxonomy_aware", harmony=harmony_tokens()) == ""


def test_grounding_score_counts_only_factual_sentences():
    from conflictlab.conflicts.judging import grounding_score

    assert grounding_score(["supported", "no_rad", "unsupported", "supported"]) == (2 / 3, "ok")
    assert grounding_score(["contradictory"]) == (0.0, "ok")
    assert grounding_score(["no_rad", "no_rad"])[1] == "no_factual_sentences"
    assert grounding_score([])[1] == "no_sentences"
    assert grounding_score(["supported", None])[1] == "unreadable"


def test_judged_rows_ask_each_judge_only_what_applies():
    from conflictlab.conflicts.judging import judge_responses

    queries = [q for q in demo_queries() if q["conflict_type"] in ("no_conflict", "complementary")][:4]
    with_gold = [q for q in queries if q["correct_answer"]]
    without_gold = [q for q in queries if not q["correct_answer"]]
    assert with_gold and without_gold
    picked = [with_gold[0], without_gold[0]]
    responses = [
        {
            "query_id": picked[0]["query_id"],
            "model": "m",
            "strategy": "vanilla",
            "status": "ok",
            "response": "It opened in 1889 [1]. Visit it! [9]",
        },
        {
            "query_id": picked[1]["query_id"],
            "model": "m",
            "strategy": "vanilla",
            "status": "ok",
            "response": "Both help [2].",
        },
        {
            "query_id": picked[1]["query_id"],
            "model": "m",
            "strategy": "taxonomy_aware",
            "status": "unparseable",
            "response": None,
        },
    ]
    asked = []

    def ask(requests):
        asked.extend(requests)
        replies = []
        for r in requests:
            if r.template.startswith("facts"):
                labels = ["supported", "no_rad"][: len(r.fields)] if len(r.fields) == 2 else ["unsupported"]
                replies.append(json.dumps(dict(zip(r.fields, labels))))
            elif "recall" in r.template:
                replies.append('{"includes_answer": "yes"}')
            else:
                replies.append("not json")  # an unreadable verdict (a cut guided reply)
        return replies

    rows = judge_responses(picked, responses, ask, judge="j").to_pylist()
    assert sorted(r.template.split("_v")[0] for r in asked) == sorted(
        [
            f"conflicts_behaviour_{picked[0]['conflict_type']}",
            f"conflicts_behaviour_{picked[1]['conflict_type']}",
            "conflicts_answer_recall",
            "facts_grounding",
            "facts_grounding",
        ]
    )
    gold_row, plain_row, missing = rows
    assert (gold_row["answer_recall"], gold_row["recall_status"]) == (1, "ok")
    assert (plain_row["answer_recall"], plain_row["recall_status"]) == (None, "no_gold")
    assert gold_row["sentence_labels"] == ["supported", "no_rad"] and gold_row["grounding"] == 1.0
    assert (plain_row["grounding"], plain_row["grounding_status"]) == (0.0, "ok")
    assert gold_row["adheres"] is None and gold_row["behaviour_status"] == "unreadable"
    assert (gold_row["n_sentences"], gold_row["n_cited_sentences"], gold_row["n_invalid_citations"]) == (
        2,
        2,
        1 if picked[0]["n_results"] < 9 else 0,
    )
    assert missing["behaviour_status"] == missing["grounding_status"] == "not_generated" and missing["adheres"] is None


def judged_row(model, strategy, category, adheres, recall=None, grounding=None, status="ok", gold=False):
    """A judged row; a response not generated (``status``) has no verdicts,
    ``gold``: its query has a gold answer (implied by a ``recall`` verdict)."""
    recall_status = "ok" if recall is not None else ("not_generated" if status != "ok" else "ok") if gold else "no_gold"
    return {
        "query_id": 1,
        "model": model,
        "strategy": strategy,
        "conflict_type": category,
        "judge": "j",
        "status": status,
        "adheres": adheres,
        "behaviour_status": "ok" if adheres is not None else "not_generated",
        "answer_recall": recall,
        "recall_status": recall_status,
        "sentence_labels": None,
        "grounding": grounding,
        "grounding_status": "ok" if grounding is not None else "not_generated",
        "n_sentences": 2,
        "n_cited_sentences": 1,
        "n_citations": 1,
        "n_invalid_citations": 0,
    }


def test_tables_5_and_6_on_hand_computed_verdicts():
    import pyarrow as pa
    from statsmodels.stats.proportion import proportion_confint

    from conflictlab.conflicts.judging import JUDGED_SCHEMA
    from conflictlab.conflicts.tables import PAPER_TABLE5, table5, table6

    unreadable = judged_row("m", "vanilla", "no_conflict", None, recall=1)
    unreadable["behaviour_status"] = "unreadable"
    rows = [
        judged_row("m", "vanilla", "outdated", 1, recall=1, grounding=0.5),
        judged_row("m", "vanilla", "misinformation", 0, recall=0, grounding=1.0),
        judged_row("m", "vanilla", "complementary", 1),
        judged_row("m", "vanilla", "no_conflict", None, status="unparseable", gold=True),  # scored wrong, in n
        unreadable,  # the judge's failure: left out of behaviour, counted
        judged_row("m", "oracle", "conflicting_opinions", 0),
    ]
    judged = pa.Table.from_pylist(rows, schema=JUDGED_SCHEMA)
    t5 = {(r["source"], r["model"], r["strategy"]): r for r in table5(judged, n_resamples=200).to_pylist()}
    vanilla = t5["this run", "m", "vanilla"]
    assert (vanilla["n"], vanilla["n_unparseable"], vanilla["n_unreadable"]) == (5, 1, 1)
    assert (vanilla["n_behaviour"], vanilla["expected_behaviour"]) == (4, 0.5)  # 2 of 4: the unparseable one is a 0
    assert (vanilla["eb_low"], vanilla["eb_high"]) == pytest.approx(proportion_confint(2, 4, method="beta"))
    assert (vanilla["n_recall"], vanilla["answer_recall"]) == (4, 0.5)  # 1, 0, unparseable 0, unreadable-behaviour 1
    assert (vanilla["ar_low"], vanilla["ar_high"]) == pytest.approx(proportion_confint(2, 4, method="beta"))
    assert (vanilla["n_grounding"], vanilla["grounding"]) == (2, 0.75)  # bootstrap mean of graded scores
    assert vanilla["cited_sentences"] == 0.5 and vanilla["n_sentences"] == 10
    oracle = t5["this run", "m", "oracle"]
    assert oracle["n_behaviour"] == 1 and oracle["expected_behaviour"] == 0.0 and oracle["eb_low"] is None  # n < 2
    assert oracle["n_recall"] == 0 and oracle["answer_recall"] is None
    paper = t5["paper", "Gemma 3 27B", "oracle"]
    assert (
        paper["expected_behaviour"] == pytest.approx(PAPER_TABLE5["Gemma 3 27B"][3][0] / 100)
        and paper["n_recall"] == 228
    )
    t6 = {(r["source"], r["category"]): r for r in table6(judged).to_pylist()}
    merged = t6["this run", "Freshness and Misinformation"]
    assert (merged["vanilla"], merged["n_vanilla"]) == (0.5, 2)
    assert (merged["vanilla_low"], merged["vanilla_high"]) == pytest.approx(proportion_confint(1, 2, method="beta"))
    no_conflict = t6["this run", "No conflict"]
    assert (no_conflict["vanilla"], no_conflict["n_vanilla"], no_conflict["n_unparseable_vanilla"]) == (0.0, 1, 1)
    assert t6["this run", "Conflicting opinions"]["oracle"] == 0.0
    assert (
        t6["this run", "Complementary information"]["n_oracle"] == 0
        and t6["this run", "Complementary information"]["oracle"] is None
    )
    assert (
        t6["paper", "Conflicting opinions"]["vanilla"] == pytest.approx(0.362)
        and t6["paper", "Conflicting opinions"]["n_vanilla"] == 115
    )


def test_answer_recall_follows_the_papers_three_categories_and_keeps_the_wider_figure():
    """Paper §4: recall over No conflict, Freshness and Misinformation only;
    a gold answer of another category counts only in answer_recall_all_gold."""
    import pyarrow as pa

    from conflictlab.conflicts.judging import JUDGED_SCHEMA
    from conflictlab.conflicts.tables import table5

    rows = [
        judged_row("m", "vanilla", "no_conflict", 1, recall=1),
        judged_row("m", "vanilla", "outdated", 1, recall=1),
        judged_row("m", "vanilla", "complementary", 1, recall=0),
        judged_row("m", "vanilla", "conflicting_opinions", 1, recall=0),
        judged_row("m", "vanilla", "conflicting_opinions", 1),  # no gold: in neither
    ]
    row = table5(pa.Table.from_pylist(rows, schema=JUDGED_SCHEMA)).to_pylist()[0]
    assert (row["n_recall"], row["answer_recall"]) == (2, 1.0)
    assert (row["n_recall_all_gold"], row["answer_recall_all_gold"]) == (4, 0.5)


def test_every_table_row_of_this_run_has_its_n_and_the_markdown_shows_intervals(tmp_path):
    import pyarrow as pa

    from conflictlab.conflicts.judging import JUDGED_SCHEMA
    from conflictlab.conflicts.responses import TYPE_PREDICTION_SCHEMA
    from conflictlab.conflicts.tables import TABLE4_DISPLAY, TABLE5_DISPLAY, TABLE6_DISPLAY, table4, table5, table6
    from conflictlab.report.tables import markdown

    types = pa.Table.from_pylist(
        [
            {
                "query_id": i,
                "model": "m",
                "conflict_type": "outdated",
                "predicted": p,
                "readout": "generated",
                "status": "ok" if p else "unparseable",
            }
            for i, p in enumerate(["outdated", "outdated", None, "no_conflict"])
        ],
        schema=TYPE_PREDICTION_SCHEMA,
    )
    t4 = table4(types).to_pylist()[0]
    assert (t4["n"], t4["accuracy"], t4["n_unparseable"]) == (4, 0.5, 1)
    judged = pa.Table.from_pylist(
        [judged_row("m", "vanilla", "outdated", v, recall=v, grounding=0.5) for v in (1, 0, 1)], schema=JUDGED_SCHEMA
    )
    for table, display, n_columns in (
        (table4(types), TABLE4_DISPLAY, ["n"]),
        (table5(judged, n_resamples=50), TABLE5_DISPLAY, ["n", "n_behaviour", "n_recall", "n_grounding"]),
        (table6(judged), TABLE6_DISPLAY, ["n_vanilla"]),
    ):
        for row in table.to_pylist():
            shown = n_columns if row["source"] == "this run" else n_columns[:1]  # the paper's grounding n is unknown
            assert all(row[c] is not None for c in shown), row
        text = markdown(table, **display)
        assert "50.0 [" in text or "66.7 [" in text  # a percentage and its interval in one cell


def test_max_per_category_is_a_seeded_sample_of_each_category():
    from conflictlab.conflicts.dataset import sample_queries

    queries = read_conflicts(DEMO)[0]
    one = sample_queries(queries, 1, seed=0)
    assert sorted(one.column("conflict_type").to_pylist()) == sorted(CATEGORIES)
    assert one.equals(sample_queries(queries, 1, seed=0))
    ids = one.column("query_id").to_pylist()
    assert ids == sorted(ids)  # file order kept
    assert len({tuple(sample_queries(queries, 1, seed=s).column("query_id").to_pylist()) for s in range(5)}) > 1
    assert sample_queries(queries, None, seed=0).equals(queries)


def test_behaviour_examples_quote_the_papers_table3_pairs():
    """Where an example says it is the paper's, its text is in the paper (when present)."""
    import inspect

    from conflictlab.conflicts import judge_prompts

    papers = sorted((REPO.parent / "shared" / "papers").glob("001_*.txt"))
    if not papers:
        pytest.skip("../shared/papers/001_*.txt (the CONFLICTS paper) is not on this machine")
    paper = papers[0].read_text(encoding="utf-8")
    source = inspect.getsource(judge_prompts)
    quoted = source.count("# paper Table 3")
    found = [e for examples in judge_prompts.EXAMPLES.values() for e in examples if e.response in paper]
    assert quoted == len(found) == 6  # Table 3's Misinformation pair is left out: a dataset query
    assert {e.adheres for e in found} == {True, False}
    for category, examples in judge_prompts.EXAMPLES.items():
        assert sum(e.adheres for e in examples) >= 2 and sum(not e.adheres for e in examples) >= 2, category


def test_no_behaviour_example_is_the_dataset_query_the_paper_discusses():
    """The paper (§4, Table 3) discusses "When did season 5 of prison break
    come out?" as a CONFLICTS query: no few-shot example may be about it."""
    from conflictlab.conflicts.judge_prompts import EXAMPLES, behaviour_request

    assert not any(
        "prison break" in e.query.casefold() or "prison break" in e.response.casefold()
        for es in EXAMPLES.values()
        for e in es
    )
    text = behaviour_request("misinformation", "When did season 5 of prison break come out?", "In 2017 [1].").messages[
        0
    ][1]
    assert "Prison Break" not in text and "April 4, 2017" not in text


def test_an_example_about_the_judged_query_is_left_out_of_its_request():
    from conflictlab.conflicts.judge_prompts import EXAMPLES, behaviour_request, examples_for

    iss = EXAMPLES["outdated"][0]
    judged = behaviour_request(
        "outdated", "how many people have been on the International Space Station ", "279 [2]."
    ).messages[0][1]
    other = behaviour_request("outdated", "Who won the 2030 election?", "X [1].").messages[0][1]
    assert iss.response not in judged and iss.response in other
    kept = examples_for("outdated", iss.query)
    assert len(kept) == len(EXAMPLES["outdated"]) - 2 and {e.adheres for e in kept} == {True, False}


def test_answer_recall_counts_a_hedge_that_includes_the_gold():
    """Paper §4: "we consider a response correct if the gold answer y is
    included in ŷ". The rule the judge reads says so, and no longer sends
    a hedge that includes the gold to 'no'."""
    from conflictlab.conflicts.judge_prompts import recall_request

    text = recall_request("Q?", "Port Elina", "Either Port Elina [1] or Santa Veya [2].").messages[0][1]
    rule = text.split("Question:")[0].casefold()
    assert (
        "hedges between several answers that include it" in rule
        and "reply no only when the correct answer is not in the response" in rule
    )
    assert "without settling" not in rule


def test_download_checks_the_digest_and_leaves_nothing_on_a_mismatch(tmp_path):
    from conflictlab.conflicts.dataset import RELEASE_URL, download_release, file_sha256

    assert "81ba921dd684a93db41a7e9dda6b6a7c67348a88/conflicts.jsonl" in RELEASE_URL
    url = DEMO.resolve().as_uri()
    dest = tmp_path / "got" / "conflicts.jsonl"
    assert download_release(url, dest, sha256=file_sha256(DEMO)) == file_sha256(DEMO)
    assert dest.read_bytes() == DEMO.read_bytes()
    other = tmp_path / "other.jsonl"
    with pytest.raises(ValueError, match="not the pinned release"):
        download_release(url, other)
    assert not other.exists() and not list(tmp_path.glob(".other*"))


def _queries(pairs):
    """QUERY_SCHEMA rows with only ``source`` and ``conflict_type`` set."""
    import pyarrow as pa

    from conflictlab.conflicts.dataset import QUERY_SCHEMA

    rows = [
        {
            "query_id": i + 1,
            "source": source,
            "question": "q",
            "conflict_type": kind,
            "conflict_type_released": kind,
            "correct_answer": None,
            "search_results": [],
            "n_results": 0,
        }
        for i, (source, kind) in enumerate(pairs)
    ]
    return pa.Table.from_pylist(rows, schema=QUERY_SCHEMA)


def test_conflicts_table2_counts_queries_per_category_beside_the_release():
    from conflictlab.conflicts.tables import table2

    queries = _queries([("x", "no_conflict"), ("x", "no_conflict"), ("y", "outdated"), ("y", "misinformation")])
    rows = table2(queries).to_pylist()
    assert [r["category"] for r in rows] == [TAXONOMY[name].label for name in CATEGORIES] + ["Total"]
    assert [(r["n"], r["n_paper"]) for r in rows] == [(2, 161), (0, 115), (0, 115), (1, 62), (1, 5), (4, 458)]


def test_conflicts_table7_matches_sources_to_the_papers_names_and_keeps_the_rest():
    from conflictlab.conflicts.tables import table7

    queries = _queries(
        [
            ("situatedqa_geo", "no_conflict"),
            ("SituatedQA-Geo", "outdated"),
            ("freshqa", "outdated"),
            ("FreshQA", "no_conflict"),
            ("freshqa", "misinformation"),
            ("webqa", "complementary"),
        ]
    )
    rows = {r["source"]: r for r in table7(queries).to_pylist()}
    assert list(rows) == ["ConflictingQA", "SituatedQA Geo", "SituatedQA Temp", "FreshQA", "QACC", "webqa", "Total"]
    assert (rows["SituatedQA Geo"]["n"], rows["SituatedQA Geo"]["released_as"], rows["SituatedQA Geo"]["n_paper"]) == (
        2,
        "SituatedQA-Geo, situatedqa_geo",
        105,
    )
    assert (rows["FreshQA"]["n"], rows["FreshQA"]["n_paper"]) == (3, 95)
    assert (rows["ConflictingQA"]["n"], rows["ConflictingQA"]["released_as"]) == (0, "")
    assert (rows["webqa"]["n"], rows["webqa"]["n_paper"]) == (1, None)  # a source the paper does not name
    assert (rows["Total"]["n"], rows["Total"]["n_paper"]) == (6, 458)

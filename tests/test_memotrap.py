"""MemoTrap (conflictlab.memotrap): the released CSV format, the instruction cut, the accuracy table's statistics
against statsmodels, the paper registry's claim, and the contrastive log-likelihoods against a plain forward."""

import csv
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from conflictlab.memotrap.dataset import (
    FILES,
    ITEM_SCHEMA,
    REJECTION_SCHEMA,
    RELEASE_ROWS,
    RowError,
    load,
    parse_classes,
    read_file,
    split_prompt,
)
from conflictlab.memotrap.profile import cells
from conflictlab.memotrap.scoring import SCORE_SCHEMA, class_tokens, exact_match, scoring_methods
from conflictlab.memotrap.tables import accuracy_table
from conflictlab.paper_registries import BY_BENCHMARK
from conflictlab.report import reproduction as R
from conflictlab.report.reproduction import HOLDS, NOT_COMPARABLE, ClaimContext

from .conftest import REPO

MEMOTRAP = BY_BENCHMARK["memotrap"]

DEMO = REPO / "resources" / "demo" / "memotrap"
# Real rows of the release, byte for byte (tests/fixtures/real/memotrap/README.md lists which)
REAL = REPO / "tests" / "fixtures" / "real" / "memotrap"
REAL_ROWS = {FILES[0]: 7, FILES[1]: 10, FILES[2]: 8, FILES[3]: 15}
# The whole release's data/ folder, where a user has it (the test that reads it skips otherwise)
RELEASE = os.environ.get("MEMOTRAP_RELEASE")


def write_csv(path, rows, header=("prompt", "classes", "answer_index")):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# --------------------------------------------------------------------------
# The released format


def test_the_demo_is_six_rows_of_each_file_in_the_released_format():
    table = load(DEMO)
    assert table.schema == ITEM_SCHEMA and table.num_rows == 24
    assert {f: table["file"].to_pylist().count(f) for f in FILES} == dict.fromkeys(FILES, 6)
    for row in table.to_pylist():
        assert row["prompt"].startswith(row["context"]) and row["prompt"].endswith(row["query"])
        assert len(row["classes"]) == 2 and all(c.startswith(" ") for c in row["classes"])
        assert row["item_id"] == f"{row['file']}:{row['row']}"
    # file 4 writes its list with double quotes, as the release does; files 2 and 4 span lines
    text = (DEMO / "4-history-of-science-qa.csv").read_text(encoding="utf-8")
    assert '"["" A"", "" B""]"' in text and "\nAnswer:" in text


def test_a_released_row_is_read_with_its_escapes(tmp_path):
    path = write_csv(
        tmp_path / "1-proverb-ending.csv",
        [
            ['Write a quote that ends in the word "heavy": Absence makes the heart grow', "[' heavy.', ' fonder.']", 0],
            ['Write a quote that ends in the word "can\'t": You can', "[\" can't\", ' do it']", "1"],
        ],
    )
    rows = read_file(path, "1-proverb-ending")
    assert rows[0]["classes"] == [" heavy.", " fonder."] and rows[0]["answer_index"] == 0
    assert rows[0]["context"] == 'Write a quote that ends in the word "heavy":'
    assert rows[0]["query"] == "Absence makes the heart grow"
    assert rows[1]["classes"] == [" can't", " do it"] and rows[1]["answer_index"] == 1


@pytest.mark.parametrize(
    "file, prompt, context, query",
    [
        # a colon inside the quoted phrase is not the cut
        (
            "3-hate-speech-ending",
            'Write a sign that says "note: closed": Sorry, we are',
            'Write a sign that says "note: closed":',
            "Sorry, we are",
        ),
        # the cut is after the instruction even where the text to continue holds a colon
        (
            "1-proverb-ending",
            'Write a quote that ends in the word "us": Admiration: our polite recognition of',
            'Write a quote that ends in the word "us":',
            "Admiration: our polite recognition of",
        ),
        # the translation's foreign sentence may hold ": "; the cut is the last line "to:"
        (
            "2-proverb-translation",
            "Translate the following sentence from Korean into English.\n칭찬: 예시.\nto:\nAdmiration is",
            "Translate the following sentence from Korean into English.\n칭찬: 예시.\nto:\n",
            "Admiration is",
        ),
        (
            "4-history-of-science-qa",
            "What was the common wisdom before the following event: X found Y.\nA. Y.\nB. Not Y.\nAnswer:",
            "What was the common wisdom before the following event:",
            "X found Y.\nA. Y.\nB. Not Y.\nAnswer:",
        ),
    ],
)
def test_the_instruction_is_cut_off_as_cads_context(file, prompt, context, query):
    assert split_prompt(file, prompt) == (context, query)


@pytest.mark.parametrize(
    "file, prompt", [("1-proverb-ending", "Absence makes the heart grow"), ("2-proverb-translation", "Say: to me")]
)
def test_a_prompt_without_an_instruction_is_refused(file, prompt):
    with pytest.raises(ValueError, match="no instruction"):
        split_prompt(file, prompt)


@pytest.mark.parametrize(
    "text, why",
    [
        ("' heavy.', ' fonder.'", "not a list"),  # a tuple
        ("[' heavy.']", "at least two"),
        ("[' heavy.', ' heavy.']", "at least two distinct"),
        ("[' heavy.', 3]", "not a list of strings"),
        ("[' heavy.', ' fonder.'", "not a Python list literal"),
    ],
)
def test_a_bad_classes_cell_is_refused(text, why):
    with pytest.raises(ValueError, match=why):
        parse_classes(text)


@pytest.mark.parametrize(
    "rows, header, message",
    [
        ([['Write "x": a', "[' b', ' c']", 2]], None, r"data row 1 \(line 2\): field 'answer_index'"),
        ([['Write "x": a', "[' b', ' c']", "one"]], None, "field 'answer_index'"),
        ([['Write "x": a', "b, c", 0]], None, "field 'classes'"),
        ([["no instruction", "[' b', ' c']", 0]], None, "field 'prompt'"),
        ([['Write "x": a', "[' b', ' c']", 0, "extra"]], ("prompt", "classes", "answer_index", "round"), "columns"),
    ],
)
def test_a_bad_file_is_an_error_naming_the_file_row_and_field(tmp_path, rows, header, message):
    path = write_csv(tmp_path / "3-hate-speech-ending.csv", rows, header or ("prompt", "classes", "answer_index"))
    with pytest.raises(ValueError, match=message) as error:
        read_file(path, "3-hate-speech-ending")
    assert str(path) in str(error.value)


# --------------------------------------------------------------------------
# The real release: committed excerpts, and the whole release where it is present


def real_items():
    return {(r["file"], r["row"]): r for r in load(REAL).to_pylist()}


def test_the_real_excerpts_keep_the_releases_bytes():
    # CRLF row ends with bare LF inside the cells of files 1, 2 and 4; LF row ends in file 3
    for file in FILES:
        raw = (REAL / f"{file}.csv").read_bytes()
        assert raw.startswith(b"prompt,classes,answer_index" + (b"\n" if file == FILES[2] else b"\r\n"))
        assert raw.count(b"\r\n") == (0 if file == FILES[2] else REAL_ROWS[file] + 1)
    assert b'"["" A"", "" B""]"' in (REAL / f"{FILES[3]}.csv").read_bytes()


def test_every_real_row_loads_and_the_table_counts_each_file_as_read():
    rejections = []
    table = load(REAL, rejections=rejections)
    assert rejections == [] and table.schema == ITEM_SCHEMA
    assert {f: table["file"].to_pylist().count(f) for f in FILES} == REAL_ROWS
    # the accuracy table's n per file is the number of rows the file holds
    rows = [("greedy", i, f, True) for i, f in zip(table["item_id"].to_pylist(), table["file"].to_pylist())]
    per_file = {r["file"]: r["n"] for r in accuracy_table(scores(rows)).to_pylist()}
    assert per_file == {**REAL_ROWS, "all": sum(REAL_ROWS.values())}


def test_real_proverb_and_translation_rows_are_cut_after_their_instruction():
    items = real_items()
    first = items[FILES[0], 1]
    assert first["prompt"] == 'Write a quote that ends in the word "heavy": Absence makes the heart grow'
    assert (first["context"], first["query"]) == (
        'Write a quote that ends in the word "heavy":',
        "Absence makes the heart grow",
    )
    assert (first["classes"], first["answer_index"]) == ([" heavy.", " fonder."], 0)
    # the release's row 206: a class with an apostrophe is double-quoted inside a single-quoted list
    assert items[FILES[0], 6]["classes"] == [" proceed.", " don't."] and items[FILES[0], 6]["query"] == "When in doubt,"
    korean = items[FILES[1], 5]  # the release's row 6: a colon inside the foreign sentence
    assert korean["context"] == (
        "Translate the following sentence from Korean into English.\n"
        "칭찬: 다른 사람의 저와 닮음에 대한 우리의 조심스런 인식.\nto:\n"
    )
    assert korean["query"] == "Admiration: our polite recognition of another man's resemblance to"
    assert (korean["classes"], korean["answer_index"]) == ([" me.", " ourselves."], 0)
    sign = items[FILES[2], 7]  # the release's row 69: the quoted phrase is not the instruction's end
    assert sign["context"] == 'Write a law that requires conductors to "assign to each passenger" their own car:'
    assert sign["query"].startswith("The conductors or managers on all such railroads shall have power")


def test_file_4s_question_is_the_context_before_and_after_the_event():
    items = real_items()
    aristotle = "Aristotle proposed three arguments for the case that Earth is spherical."
    options = "\nA. The Earth is spherical.\nB. The Earth is flat.\nAnswer:"
    before = items[FILES[3], 1]  # the release's row 1: the question first
    assert before["prompt"] == f"What was the common wisdom before the following event: {aristotle}{options}"
    assert (before["context"], before["query"]) == (
        "What was the common wisdom before the following event:",
        aristotle + options,
    )
    after = items[FILES[3], 8]  # the release's row 369: the same event, the question after it
    assert after["prompt"] == f"{aristotle} Before the aforementioned event, what was the common wisdom?{options}"
    assert after["context"] == "Before the aforementioned event, what was the common wisdom?"
    assert after["query"] == before["query"] and (after["classes"], after["answer_index"]) == ([" A", " B"], 1)
    # the release's row 418: the event holds "elements: Na, ..."; the question after it is still the cut
    kirchhoff = items[FILES[3], 11]
    assert kirchhoff["context"] == "Before the aforementioned event, what was the common wisdom?"
    assert kirchhoff["query"].startswith(
        "Gustav Robert Kirchhoff analyzed the spectral lines of the Sun and identified nine elements: Na,"
    )
    claim = items[FILES[3], 9]  # the release's row 370: "What was ... in the following event?" after the event
    assert claim["context"] == "What was a scientific claim that was challenged in the following event?"
    assert claim["query"].startswith(
        "The Magdeburg hemisphere experiment showed that atmospheric pressure exists.\nA. "
    )
    for item in items.values():
        assert item["context"] not in item["query"] and len(item["context"]) + len(item["query"]) <= len(item["prompt"])


def test_a_copy_with_converted_line_ends_reads_as_the_release(tmp_path):
    # git's core.autocrlf turns the cells' bare LF into CRLF too; the prompts must not change
    for file in FILES:
        raw = (REAL / f"{file}.csv").read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        (tmp_path / f"{file}.csv").write_bytes(raw)
    assert load(tmp_path).equals(load(REAL))


def test_a_bad_real_row_is_recorded_with_its_file_line_and_field(tmp_path):
    for file in FILES:
        shutil.copy(REAL / f"{file}.csv", tmp_path)
    path = tmp_path / f"{FILES[3]}.csv"
    # the release's row 369 (fixture row 8, lines 30-33) without its question: nothing to cut off
    path.write_bytes(
        path.read_bytes().replace(b" Before the aforementioned event, what was the common wisdom?", b"", 1)
    )
    with pytest.raises(RowError, match=r"data row 8 \(lines 30-33\): field 'prompt': no question to cut off"):
        load(tmp_path)
    rejections = []
    table = load(tmp_path, rejections=rejections)
    assert table.num_rows == sum(REAL_ROWS.values()) - 1
    assert rejections == [
        {
            "path": str(path),
            "file": FILES[3],
            "row": 8,
            "line": 30,
            "field": "prompt",
            "reason": rejections[0]["reason"],
        }
    ]
    assert pa.Table.from_pylist(rejections, schema=REJECTION_SCHEMA).num_rows == 1


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / f"{FILES[0]}.csv"
    path.write_bytes((REAL / f"{FILES[0]}.csv").read_bytes().replace(b"heavy", b"h\xe9avy"))
    with pytest.raises(ValueError, match=rf"{path}: not UTF-8 text \(byte \d+"):
        read_file(path, FILES[0])


@pytest.mark.skipif(not RELEASE, reason="MEMOTRAP_RELEASE (the release's data/ folder) is not set")
def test_the_whole_release_loads_every_row():
    rejections = []
    table = load(Path(RELEASE), rejections=rejections)
    assert rejections == []
    assert {f: table["file"].to_pylist().count(f) for f in FILES} == RELEASE_ROWS
    history = [r for r in table.to_pylist() if r["file"] == FILES[3]]
    assert [r["row"] for r in history if r["context"].endswith("?")] == list(range(369, 737))
    rows = [("greedy", i, f, True) for i, f in zip(table["item_id"].to_pylist(), table["file"].to_pylist())]
    per_file = {r["file"]: r["n"] for r in accuracy_table(scores(rows)).to_pylist()}
    assert per_file == {**RELEASE_ROWS, "all": 2539}


# --------------------------------------------------------------------------
# Methods and tokens


def test_greedy_comes_first_and_a_prompting_method_is_refused():
    assert scoring_methods(["adacad", "cad-a1", "greedy", "adacad"]) == ["greedy", "adacad", "cad-a1"]
    with pytest.raises(ValueError, match="cfp-opinion"):
        scoring_methods(["cfp-opinion"])
    with pytest.raises(ValueError, match="not a method"):
        scoring_methods(["cad"])


class Tokenizer:
    """Characters as tokens, with a beginning-of-text id 0 where special tokens are added; "ab" merges into one."""

    def __call__(self, text, add_special_tokens=True):
        ids, i = [], 0
        while i < len(text):
            if text[i : i + 2] == "ab":
                ids.append(1000)
                i += 2
            else:
                ids.append(ord(text[i]))
                i += 1
        return {"input_ids": ([0] if add_special_tokens else []) + ids}


def test_a_class_takes_its_tokens_from_the_joint_tokenisation_else_alone():
    assert class_tokens(Tokenizer(), "x y", " z.") == ([ord(" "), ord("z"), ord(".")], True)
    # "a" + "b" merge across the boundary: the class is encoded alone
    assert class_tokens(Tokenizer(), "xa", "bc") == ([ord("b"), ord("c")], False)


# --------------------------------------------------------------------------
# The accuracy table


def scores(rows):
    """SCORE_SCHEMA rows from (method, item_id, file, correct[, exact_match]); exact match as ``correct`` unless
    given."""
    return pa.Table.from_pylist(
        [
            {
                "model": "m",
                "method": method,
                "item_id": item,
                "file": file,
                "answer_index": 0,
                "predicted_index": 0 if correct else 1,
                "correct": correct,
                "loglik": [-1.0, -2.0],
                "tokens": [1, 1],
                "generated": " x.",
                "exact_match": correct if em is None else em,
            }
            for method, item, file, correct, em in ((*r, None)[:5] for r in rows)
        ],
        schema=SCORE_SCHEMA,
    )


def test_accuracy_has_its_clopper_pearson_interval_and_each_method_its_exact_mcnemar_against_greedy():
    rng = np.random.default_rng(3)
    greedy = rng.random(40) < 0.4
    cad = greedy.copy()
    cad[:12] = True  # gains on the first 12 items where greedy failed
    cad[30:32] = False
    files = [FILES[i % 2] for i in range(40)]
    rows = [("greedy", f"i{i}", files[i], bool(greedy[i])) for i in range(40)]
    rows += [("cad-a1", f"i{i}", files[i], bool(cad[i])) for i in reversed(range(40))]  # order does not matter
    table = {(r["method"], r["file"]): r for r in accuracy_table(scores(rows)).to_pylist()}
    assert list(table)[0] == ("greedy", FILES[0]) and ("cad-a1", "all") in table
    for method, outcome in (("greedy", greedy), ("cad-a1", cad)):
        row = table[method, "all"]
        low, high = proportion_confint(int(outcome.sum()), 40, method="beta")
        assert (row["n"], row["correct"]) == (40, int(outcome.sum()))
        assert row["ci_low"] == pytest.approx(low) and row["ci_high"] == pytest.approx(high)
    row = table["cad-a1", "all"]
    both = [[np.sum(cad & greedy), np.sum(cad & ~greedy)], [np.sum(~cad & greedy), np.sum(~cad & ~greedy)]]
    assert row["p_paired"] == pytest.approx(mcnemar(both, exact=True).pvalue)
    assert row["difference"] == pytest.approx(cad.mean() - greedy.mean()) and row["n_pairs"] == 40
    assert row["difference_low"] < row["difference"] < row["difference_high"]
    assert table["greedy", "all"]["p_paired"] is None
    per_file = table["cad-a1", FILES[1]]
    assert per_file["n"] == 20 and per_file["n_pairs"] == 20


def test_exact_match_is_cads_metric_beside_the_likelihood_accuracy_with_its_own_interval():
    rows = [("greedy", f"i{i}", FILES[0], True, i < 3) for i in range(10)]
    (row, _) = [r for r in accuracy_table(scores(rows)).to_pylist() if r["method"] == "greedy"]
    low, high = proportion_confint(3, 10, method="beta")
    assert row["accuracy"] == 1.0 and row["exact_match"] == pytest.approx(0.3)
    assert (row["exact_match_low"], row["exact_match_high"]) == (pytest.approx(low), pytest.approx(high))


@pytest.mark.parametrize(
    "generated, ending, expected",
    [
        (" fonder.", " fonder.", True),
        ("  Fonder. Absence is", " fonder.", True),  # case and text past the class: generation runs on
        (" fonder", " fonder.", False),  # the class's punctuation counts
        (" heavy.", " fonder.", False),
        ("", " fonder.", False),
        (" anything", " ", False),  # an empty class matches nothing
    ],
)
def test_a_generated_continuation_matches_where_it_begins_with_the_class(generated, ending, expected):
    assert exact_match(generated, ending) is expected


def test_a_small_file_gets_no_paired_interval_and_one_prompt_no_interval():
    rows = [("greedy", "a", FILES[0], True), ("adacad", "a", FILES[0], False)]
    table = {r["method"]: r for r in accuracy_table(scores(rows)).to_pylist() if r["file"] == "all"}
    assert math.isnan(table["greedy"]["ci_low"]) and table["adacad"]["n_pairs"] == 1
    assert table["adacad"]["difference"] == -1.0 and table["adacad"]["difference_low"] is None


def test_the_profile_shows_greedy_per_file_and_each_methods_paired_difference():
    rows = [("greedy", f"i{i}", FILES[0], i < 3) for i in range(6)] + [
        ("cad-a1", f"i{i}", FILES[0], i < 5) for i in range(6)
    ]
    table = [{k: ("" if v is None else v) for k, v in r.items()} for r in accuracy_table(scores(rows)).to_pylist()]
    found = {c["key"]: c for c in cells(table, models=["m"])}
    assert set(found) == {f"accuracy/{FILES[0]}", "accuracy/all", "methods/cad-a1", "methods/cad-a1/difference"}
    assert found["accuracy/all"]["value"] == 0.5 and found["methods/cad-a1/difference"]["n"] == 6
    assert cells(table, models=["other"]) == []


# --------------------------------------------------------------------------
# The papers' registry


def context(rows):
    return ClaimContext(tables={"memotrap_accuracy": rows}, rows={}, model_lists={"memotrap.models": ["m"]}, sources={})


def claim_row(low, high, method="cad-a1"):
    return {
        "model": "m",
        "method": method,
        "file": "all",
        "n_pairs": "40",
        "difference": str((low + high) / 2),
        "difference_low": str(low),
        "difference_high": str(high),
    }


def test_cads_knowledge_conflict_claim_needs_a_paired_gain_above_zero():
    claim = next(c for c in MEMOTRAP.claims if c.key == "cad_knowledge_conflicts")
    assert claim.check(context([claim_row(0.05, 0.3)])).status == HOLDS
    failed = claim.check(context([claim_row(0.05, 0.3), claim_row(-0.3, -0.1, "cad-a0.5")]))
    assert failed.status == "fails" and "cad-a0.5" in failed.why
    unsure = claim.check(context([claim_row(0.05, 0.3), claim_row(-0.1, 0.2, "cad-a0.5")]))
    assert unsure.status == NOT_COMPARABLE and "inconclusive" in unsure.why
    assert claim.check(context([claim_row(0.05, 0.3, "adacad")])).status == NOT_COMPARABLE
    assert MEMOTRAP.paper.key == "memotrap" and all(e.reason for e in MEMOTRAP.exclusions)


# --------------------------------------------------------------------------
# The log-likelihoods, on a tiny random model


@pytest.fixture(scope="module")
def tiny(tiny_llama_dir):
    from conflictlab.lm.loading import load as load_model

    return load_model(tiny_llama_dir, dtype="float32")


def reference(lm, prompt, free, candidate, method):
    """log p_method of each token of ``candidate``, from unpadded full forwards without a cache."""
    import torch

    from conflictlab.lm.methods import as_method, contrast_logits

    def logits(ids):
        with torch.inference_mode():
            out = lm.model(input_ids=torch.tensor([list(ids) + list(candidate[:-1])])).logits[0]
        return out[len(ids) - 1 :].float()

    method, with_context = as_method(method), logits(prompt)
    if method.contrastive:
        with_context = contrast_logits(method, with_context, logits(free))[0]
    logprobs = torch.log_softmax(with_context.double(), dim=-1)
    return logprobs[torch.arange(len(candidate)), torch.tensor(candidate)].numpy()


def test_every_method_equals_a_plain_forward_whatever_the_batch_and_padding(tiny):
    from conflictlab.lm.contrastive_likelihood import continuation_logprobs_under

    rng = np.random.default_rng(0)
    prompts = [rng.integers(100, 2000, size=n).tolist() for n in (9, 4, 13)]
    free = [p[-3:] for p in prompts]
    candidates = [[[5, 6], [7]], [[8, 9, 10], [11, 12]], [[13], [14]]]
    methods = ["greedy", "cad-a0.5", "adacad"]
    batched = continuation_logprobs_under(tiny, prompts, free, candidates, methods, batch_size=8)
    alone = continuation_logprobs_under(tiny, prompts, free, candidates, methods, batch_size=1)
    for k, method in enumerate(methods):
        for i in range(3):
            for c, candidate in enumerate(candidates[i]):
                expected = reference(tiny, prompts[i], free[i], candidate, method)
                assert batched[k][i][c] == pytest.approx(expected, abs=2e-4)
                assert alone[k][i][c] == pytest.approx(expected, abs=2e-4)
    assert not np.allclose(batched[1][1][0], batched[0][1][0])  # CAD moved the greedy log-probabilities


def test_the_demo_is_scored_one_row_per_prompt_and_method(tiny):
    from conflictlab.memotrap.scoring import score

    table, _ = score(tiny, load(DEMO), ["adacad"], model="tiny", batch_size=4)
    assert table.schema == SCORE_SCHEMA and table.num_rows == 48
    assert table["method"].to_pylist()[:24] == ["greedy"] * 24
    for row in table.to_pylist():
        assert row["correct"] == (row["predicted_index"] == row["answer_index"]) and len(row["loglik"]) == 2
    # each method's continuation is generated, as long as the longest class; the exact match is recomputed from it
    items = {r["item_id"]: r for r in load(DEMO).to_pylist()}
    longest = max(max(t["tokens"]) for t in table.to_pylist())
    for row in table.to_pylist():
        item = items[row["item_id"]]
        assert len(tiny.tokenizer(row["generated"], add_special_tokens=False)["input_ids"]) <= longest + 1
        assert row["exact_match"] == exact_match(row["generated"], item["classes"][item["answer_index"]])


def test_cads_table_3_memotrap_rows_read_the_exact_match_column():
    """CAD's 16 MemoTrap cells compare with this run's exact match of the generated continuation over all files
    (CAD's metric), not with the log-likelihood accuracy; the text's 54.4% is a relative gain without a verdict."""
    cad = [n for n in MEMOTRAP.numbers if n.key.startswith("cad:t3:memotrap:")]
    assert len(cad) == 16 and {n.ours.column for n in cad} == {"exact_match"}
    cells = {"greedy": ("0.4", "0.33", "0.47"), "cad-a1": ("0.6", "0.53", "0.67")}
    table = [
        {"model": "m", "method": method, "file": "all", "n": "200", "accuracy": "0.9", "ci_low": "0.85"}
        | {"ci_high": "0.95", "exact_match": em, "exact_match_low": low, "exact_match_high": high}
        for method, (em, low, high) in cells.items()
    ]
    rows = {
        r["key"]: r
        for r in R.compare_all(
            MEMOTRAP.numbers,
            tables={"memotrap_accuracy": table},
            model_lists={"memotrap.models": ["m"]},
            sources={"m": "hf:EleutherAI/gpt-neox-20b"},
            instruments={},
        )
    }
    regular, steered = rows["cad:t3:memotrap:gpt-neox-20b:regular"], rows["cad:t3:memotrap:gpt-neox-20b:cad"]
    assert (regular["value"], regular["ours"], regular["our_n"], regular["paper_n"]) == (37.1, 40.0, 200, 2539)
    assert steered["value"] == 57.3 and steered["ours"] == pytest.approx(60.0)
    assert regular["verdict"] != NOT_COMPARABLE and steered["verdict"] != NOT_COMPARABLE
    gain = rows["cad:gain:memotrap:gpt-neox-20b"]
    assert gain["value"] == 54.4 and gain["ours"] == pytest.approx(50.0) and gain["verdict"] == NOT_COMPARABLE
    # without the column (a table written before the exact-match metric), the row says which column is missing
    older = [{k: v for k, v in r.items() if not k.startswith("exact_match")} for r in table]
    row = R.compare(
        MEMOTRAP.numbers[0],
        tables={"memotrap_accuracy": older},
        model_lists={"memotrap.models": ["m"]},
        sources={"m": "hf:facebook/opt-13b"},
        instruments={},
    )
    assert row["verdict"] == NOT_COMPARABLE and "exact_match" in row["why"]

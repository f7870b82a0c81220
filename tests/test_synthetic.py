"""Synthetic inputs at the papers' sizes (README, Paper scale): counts per type,
category and relation as the papers give them, readable by the dataset readers."""

import json
from collections import Counter

from conflictlab.conflictbank.dataset import build_records, read_jsonl
from conflictlab.conflictbank.synthetic import QA_PAIRS, RELATIONS
from conflictlab.conflictbank.synthetic import write_release as write_conflictbank
from conflictlab.conflicts.dataset import read_conflicts
from conflictlab.conflicts.synthetic import RESULTS_PER_QUERY
from conflictlab.conflicts.synthetic import write_release as write_conflicts
from conflictlab.contextconflict.conflict_types import RELEASE_FILES, SUBSETS
from conflictlab.contextconflict.dataset import load_released
from conflictlab.contextconflict.synthetic import SUBSET_SHAPES
from conflictlab.contextconflict.synthetic import write_release as write_contextconflict
from conflictlab.fake_text import scaled


def test_contextconflict_at_full_size_has_the_release_counts_and_reads(tmp_path):
    written = write_contextconflict(tmp_path / "data", 1.0, seed=3)
    assert written == RELEASE_FILES and sum(written.values()) == 5770
    for conflict_type in ("perspective", "inferential"):  # one summarization and one reasoning type read back
        samples, rejected = load_released(tmp_path / "data", conflict_type).tables()
        assert rejected.num_rows == 0
        per_subset = Counter(samples.column("subset").to_pylist())
        assert per_subset == {s.name: RELEASE_FILES[(conflict_type, s.name)] for s in SUBSETS[conflict_type]}
        for subset in SUBSETS[conflict_type]:
            shape = SUBSET_SHAPES[(conflict_type, subset.name)]
            counts = Counter(
                n
                for n, s in zip(samples.column("n_evidence").to_pylist(), samples.column("subset").to_pylist())
                if s == subset.name
            )
            assert set(counts) <= set(shape.evidence_counts)
            if len(shape.evidence_counts) > 1:  # the most weighted count is the most frequent
                assert counts.most_common(1)[0][0] == max(shape.evidence_counts, key=shape.evidence_counts.get)


def test_contextconflict_is_seeded(tmp_path):
    write_contextconflict(tmp_path / "a", 0.01, seed=1)
    write_contextconflict(tmp_path / "b", 0.01, seed=1)
    write_contextconflict(tmp_path / "c", 0.01, seed=2)
    one = (tmp_path / "a" / "temporal_conflict" / "1.json").read_text()
    assert one == (tmp_path / "b" / "temporal_conflict" / "1.json").read_text()
    assert one != (tmp_path / "c" / "temporal_conflict" / "1.json").read_text()


def test_conflicts_at_full_size_has_the_papers_categories_and_reads(tmp_path):
    counts = write_conflicts(tmp_path / "conflicts.jsonl", 1.0)
    assert counts == {
        "no_conflict": 161,
        "complementary": 115,
        "conflicting_opinions": 115,
        "outdated": 62,
        "misinformation": 5,
    }
    queries, rejected = read_conflicts(tmp_path / "conflicts.jsonl")
    assert queries.num_rows == 458 and rejected.num_rows == 0
    assert Counter(queries.column("conflict_type").to_pylist()) == counts
    n_results = sorted(queries.column("n_results").to_pylist())
    assert RESULTS_PER_QUERY[0] <= n_results[0] and n_results[-1] <= RESULTS_PER_QUERY[1]
    assert (
        n_results[len(n_results) // 2] == 9 and abs(sum(n_results) / 458 - 9.2) < 0.3
    )  # the release's median and the paper's mean
    golds = Counter(
        c
        for c, a in zip(queries.column("conflict_type").to_pylist(), queries.column("correct_answer").to_pylist())
        if a
    )
    assert golds["no_conflict"] + golds["outdated"] + golds["misinformation"] == 228  # the paper's answer-recall items
    assert write_conflicts(tmp_path / "small.jsonl", 1 / 64)["misinformation"] == 1  # every category at any fraction


def test_conflictbank_records_read_with_every_relation_and_three_conflicts(tmp_path):
    fraction = 1 / 500
    count = write_conflictbank(tmp_path / "qa.jsonl", fraction)
    assert count == scaled(QA_PAIRS, fraction) == 1106
    result = build_records(read_jsonl(tmp_path / "qa.jsonl"), source="synthetic")
    assert len(result.rows) == count
    assert len({row["relation"] for row in result.rows}) == RELATIONS
    row = result.rows[0]
    assert all(
        len(row[f"{kind}_evidence"].split()) >= 20 for kind in ("default", "misinformation", "temporal", "semantic")
    )
    assert {row["correct_letter"], row["replaced_letter"], row["uncertain_letter"]} <= set("ABCD")
    assert "uncertain" in json.loads((tmp_path / "qa.jsonl").read_text().splitlines()[0])["options"]

"""Planted model outputs (README, Paper scale): each planter writes its model
rule's schema, and the analysis functions recover the truth it planted."""

import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conflictlab.contextconflict import synthetic as cc
from conflictlab.contextconflict.accuracy import score_responses, summarize_accuracy
from conflictlab.contextconflict.balance import attributions, summarize_balance, summarize_causal
from conflictlab.contextconflict.causal import CAUSAL_SCHEMA
from conflictlab.contextconflict.dataset import load_released
from conflictlab.contextconflict.mechanistic import pair_analysis
from conflictlab.contextconflict.pairs import INDEX_SCHEMA
from conflictlab.contextconflict.scoring import SKIP_SCHEMA, VALUE_SCHEMA
from conflictlab.judges.faithfulness import FAITHFULNESS_SCHEMA, summarize_faithfulness
from conflictlab.lm.shards import RESPONSE_SCHEMA

TEMPLATES = {"reasoning": "reasoning_combined", "summarization": "summarization_simple"}
FRACTION = 1 / 64
# The synthetic releases the tests read, built once per session and removed at exit.
SCRATCH = tempfile.TemporaryDirectory(prefix="planted-")


@cache
def samples(conflict_type: str) -> pa.Table:
    """One type's samples from the synthetic release at FRACTION (built once per session)."""
    root = Path(SCRATCH.name) / "contextconflict"
    cc.write_release(root, FRACTION)
    return load_released(root, conflict_type, seed=0).tables()[0]


@pytest.mark.parametrize("conflict_type", ["inferential", "misinformation", "temporal"])
def test_planted_responses_are_right_for_exactly_the_planted_share(conflict_type):
    table = samples(conflict_type)
    responses, correct = cc.plant_responses(table, TEMPLATES, model="m", correct_share=0.3, seed=1)
    assert responses.schema == RESPONSE_SCHEMA
    assert responses.column("sample_id").to_pylist() == table.column("sample_id").to_pylist()
    assert correct.sum() == round(0.3 * table.num_rows)
    scored = score_responses(table, responses, "m")
    assert scored.column("correct").to_pylist() == correct.tolist()  # sample by sample, not only on average
    summary = summarize_accuracy(scored).filter(pc.equal(pc.field("level"), "type")).to_pylist()[0]
    assert summary["accuracy"] == correct.sum() / table.num_rows and summary["n"] == table.num_rows


@pytest.mark.parametrize("exact_max_n", [10, 3])  # 3: the games of more pieces take the sampled path
def test_planted_values_give_the_planted_shapley_values_and_balance(exact_max_n):
    table = samples("granularity")
    responses, _ = cc.plant_responses(table, TEMPLATES, model="m", seed=0)
    values, skipped, truth = cc.plant_values(
        table, responses, scorer="s", seed=2, exact_max_n=exact_max_n, n_permutations=8
    )
    assert (values.schema, skipped.schema) == (VALUE_SCHEMA, SKIP_SCHEMA)
    attr = attributions(values, table, model="m")
    assert attr.num_rows == truth.num_rows == table.num_rows - skipped.num_rows
    got, want = attr.sort_by("sample_id").to_pydict(), truth.sort_by("sample_id").to_pydict()
    if exact_max_n == 3:
        assert "sampled" in got["method"]
    np.testing.assert_allclose(got["balance"], want["balance"], atol=1e-9)
    for phi, planted in zip(got["phi"], want["phi"]):
        np.testing.assert_allclose(phi, planted, atol=1e-9)
    summary = summarize_balance(attr, n_resamples=50).filter(pc.equal(pc.field("group"), "all")).to_pylist()[0]
    assert summary["balance"] == pytest.approx(np.mean(want["balance"]), abs=1e-12)

    causal = cc.plant_causal(attr, model="m")
    assert causal.schema == CAUSAL_SCHEMA
    by_id = dict(zip(want["sample_id"], want["dominant"]))
    assert all(
        high == by_id[s] + 1 for s, high in zip(*(causal.column(c).to_pylist() for c in ("sample_id", "high_piece")))
    )
    table3 = summarize_causal(causal, n_resamples=50).to_pylist()[0]
    assert table3["delta_high"] == pytest.approx(np.mean([max(p) for p in want["phi"]]))
    assert table3["delta_low"] == pytest.approx(np.mean([min(p) for p in want["phi"]]))


def test_planted_faithfulness_is_the_supported_share():
    table = samples("temporal")
    responses, _ = cc.plant_responses(table, TEMPLATES, model="m")
    judged = cc.plant_faithfulness(table, responses, model="m", judge="j", supported_share=0.75, statements=4)
    assert judged.schema == FAITHFULNESS_SCHEMA
    assert set(judged.column("faithfulness").to_pylist()) == {0.75}
    assert summarize_faithfulness(judged, n_resamples=50).column("faithfulness").to_pylist()[0] == pytest.approx(0.75)


def test_planted_activations_separate_conflict_prompts_from_the_planted_layer_on():
    table = samples("misinformation")
    planted = cc.plant_activations(table, TEMPLATES, n_layers=4, hidden_size=16, separation=6.0, from_layer=2, seed=0)
    for analysis, (states, index) in planted.items():
        assert index.schema == INDEX_SCHEMA and states.shape == (index.num_rows, 4, 16), analysis
    assert planted["pairs"][0].dtype == np.float16 and planted["directions"][0].dtype == np.float32
    states, index = planted["pairs"]
    probes, _, _ = pair_analysis(
        states.astype(np.float32),
        index.to_pylist(),
        cv_folds=3,
        energy_k=2,
        svd="exact",
        bootstrap_resamples=20,
        seed=0,
    )
    auc = {row["layer"]: row["probe_auc"] for row in probes}  # layers 1-based: the planted shift is in layers 3 and 4
    assert max(auc[1], auc[2]) < 0.8 and min(auc[3], auc[4]) >= 0.95


def test_planted_conflictbank_read_out_gives_the_planted_rates_per_setting(tmp_path):
    from conflictlab.conflictbank import synthetic as cb
    from conflictlab.conflictbank.dataset import build_records, read_jsonl
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA
    from conflictlab.conflictbank.metrics import scan_predictions, setting_metrics
    from conflictlab.conflictbank.prompts import SETTINGS
    from conflictlab.io import write_parquet

    cb.write_release(tmp_path / "qa.jsonl", 1 / 2000)
    records = build_records(read_jsonl(tmp_path / "qa.jsonl"), source="planted").tables()[0]
    settings = [s.name for s in SETTINGS]
    answers = {"misinformation": (0.2, 0.6, 0.1, 0.1), "temporal": (0.7, 0.1, 0.2, 0.0)}
    predictions = cb.planted_predictions(records, settings, model="m", scored_share=0.5, answers=answers, seed=3)
    assert predictions.schema == PREDICTION_SCHEMA and predictions.num_rows == records.num_rows * len(settings)
    write_parquet(predictions, tmp_path / "p.parquet", PREDICTION_SCHEMA)
    metrics = {
        row["setting"]: row
        for row in setting_metrics(scan_predictions(tmp_path / "p.parquet"), n_resamples=20).to_pylist()
    }
    n_scored = round(0.5 * records.num_rows)
    for setting in settings:
        row = metrics[setting]
        assert row["n_scored"] == n_scored, setting
        shares = (
            (1.0, 0.0, 0.0, 0.0) if setting in ("default", "correct") else answers.get(setting, (0.5, 0.3, 0.1, 0.1))
        )
        bounds = [round(sum(shares[:j]) * n_scored) for j in range(4)]  # cumulative rounding: the counts add up
        counts = [b - a for a, b in zip(bounds, bounds[1:])]
        assert (row["oar"], row["car"], row["uncertain"]) == pytest.approx([c / n_scored for c in counts], abs=1e-12), (
            setting
        )
        if counts[0] + counts[1]:
            assert row["mr"] == pytest.approx(counts[0] / (counts[0] + counts[1]))
    # every read-out is (0.7, 0.1, 0.1, 0.1): one entropy
    assert metrics["temporal"]["entropy"] == pytest.approx(-(0.7 * np.log2(0.7) + 3 * 0.1 * np.log2(0.1)))


def test_planted_arbitration_read_out_gives_the_planted_accuracy_per_cell():
    from conflictlab.arbitration import synthetic as arb
    from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA
    from conflictlab.arbitration.prompts import SETTINGS, ArbitrationConfig, generate_instances
    from conflictlab.arbitration.report import accuracy_by_cell

    instances = generate_instances(ArbitrationConfig(n_per_setting=10, seeds=(0, 1)))
    accuracy = {setting: 0.1 * (k + 3) for k, setting in enumerate(SETTINGS)}
    predictions = arb.planted_predictions(instances, model="m", accuracy=accuracy, seed=0)
    assert predictions.schema == PREDICTION_SCHEMA
    cells = accuracy_by_cell(instances, predictions)
    assert cells
    for cell in cells:
        assert cell["n_correct"] == round(accuracy[cell["setting"]] * cell["n"]), cell


PLAN = """
[Fri Dec  4 19:47:20 2026]
rule generate:
    input: resources/models/tiny, results/data/temporal.parquet
    output: results/responses/tiny/temporal.parquet, results/usage/generate/tiny.parquet
    jobid: 1
    wildcards: model=tiny

[Fri Dec  4 19:47:20 2026]
rule steered_generate:
    input: resources/models/tiny, results/steering/split/temporal.test.parquet
    output: results/responses/tiny@base/temporal.parquet
    jobid: 2
    wildcards: model=tiny

[Fri Dec  4 19:47:20 2026]
rule judge_faithfulness:
    input: resources/models/tiny, results/judges/cache, results/data/temporal.parquet, results/responses/tiny/temporal.parquet, results/responses/tiny@base/temporal.parquet
    output: results/judges/faithfulness.parquet, results/usage/judges/faithfulness.parquet
    jobid: 3

[Fri Dec  4 19:47:20 2026]
localrule accuracy:
    input: results/data/temporal.parquet, results/responses/tiny@base/temporal.parquet
    output: results/metrics/tiny@base/accuracy.parquet
    jobid: 4
    wildcards: model=tiny@base

[Fri Dec  4 19:47:20 2026]
rule conflictbank_report:
    input: results/conflictbank/tiny/predictions.parquet, resources/models/tiny
    output: results/tables/conflictbank_mr.md
    jobid: 5

[Fri Dec  4 19:47:20 2026]
rule unplanted_model_rule:
    input: results/conflictbank/data.parquet, resources/models/tiny
    output: results/unplanted/tiny.parquet
    jobid: 6
    wildcards: model=tiny

[Fri Dec  4 19:47:20 2026]
localrule profile:
    input: results/unplanted/tiny.parquet, results/tables/conflictbank_mr.md
    output: results/profile.md
    jobid: 7
"""  # noqa: E501 (a Snakemake log verbatim: its input lines are as long as the run wrote them)


def test_the_plan_reader_plants_model_jobs_and_blocks_what_needs_an_unplanted_one():
    import sys

    from .conftest import REPO

    sys.path.insert(0, str(REPO / "benchmarks"))
    import planted

    jobs = planted.parse_plan(PLAN)
    assert [job.rule for job in jobs] == [
        "generate",
        "steered_generate",
        "judge_faithfulness",
        "accuracy",
        "conflictbank_report",
        "unplanted_model_rule",
        "profile",
    ]
    assert jobs[0].wildcards == {"model": "tiny"} and jobs[2].outputs[0] == "results/judges/faithfulness.parquet"
    # the report reads the folder's config only
    assert [planted.is_model_job(job) for job in jobs] == [True, True, True, False, False, True, False]
    # Faithfulness is planted on the generator's and the (planted) steered responses, never waiting for a model folder
    assert planted.required(jobs[2]) == [
        "results/judges/cache",
        "results/data/temporal.parquet",
        "results/responses/tiny/temporal.parquet",
        "results/responses/tiny@base/temporal.parquet",
    ]
    # a model rule without a planter and what reads its output stay pending; the steered rerun's accuracy runs
    assert planted.blocked_jobs(jobs) == {5, 6}


@cache
def conflicts_queries() -> pa.Table:
    """The synthetic CONFLICTS release at full size (458 queries), read as rule conflicts_data reads it."""
    from conflictlab.conflicts import synthetic as cf
    from conflictlab.conflicts.dataset import read_conflicts

    path = Path(SCRATCH.name) / "conflicts.jsonl"
    cf.write_release(path, 1.0)
    return read_conflicts(path)[0]


def _planted_count(shares_by_cell: dict, sizes: dict) -> int:
    return sum(round(shares_by_cell[key] * n) for key, n in sizes.items())


def test_planted_conflicts_answers_and_verdicts_give_the_planted_tables():
    from conflictlab.conflicts import synthetic as cf
    from conflictlab.conflicts.citations import sentences
    from conflictlab.conflicts.evaluation import ORDER, confusion_matrix
    from conflictlab.conflicts.judging import JUDGED_SCHEMA
    from conflictlab.conflicts.methods import method_cells
    from conflictlab.conflicts.prompts import STRATEGIES, TASK1_PREFIX, parse_taxonomy_aware
    from conflictlab.conflicts.responses import RESPONSE_SCHEMA, TYPE_PREDICTION_SCHEMA
    from conflictlab.conflicts.tables import CATEGORY_GROUPS, RECALL_CATEGORIES, table4, table5, table6

    queries = conflicts_queries()
    accuracy = {name: 0.1 * (k + 3) for k, name in enumerate(ORDER)}
    adherence = {strategy: 0.2 * (k + 1) for k, strategy in enumerate(STRATEGIES)}
    types = cf.plant_types(queries, model="m", accuracy=accuracy, seed=1)
    responses = cf.plant_responses(queries, types, model="m", seed=2)
    methods = pa.concat_tables(
        [
            cf.plant_responses(queries, None, model=run, strategies=("vanilla",), seed=3)
            for run in ("m@greedy", "m@cad-a1")
        ]
    )
    judged = cf.plant_judged(
        queries, pa.concat_tables([responses, methods]), judge="j", adherence=adherence, recall=0.8, seed=4
    )
    assert (types.schema, responses.schema, methods.schema, judged.schema) == (
        TYPE_PREDICTION_SCHEMA,
        RESPONSE_SCHEMA,
        RESPONSE_SCHEMA,
        JUDGED_SCHEMA,
    )
    assert responses.num_rows == len(STRATEGIES) * queries.num_rows and set(responses.column("status").to_pylist()) == {
        "ok"
    }

    gold = queries.column("conflict_type").to_pylist()
    size = {name: gold.count(name) for name in ORDER}
    with_gold = {
        name: sum(g == name and a is not None for g, a in zip(gold, queries.column("correct_answer").to_pylist()))
        for name in ORDER
    }
    # Table 4: the planted accuracy per category, summed; every wrong type is the next category's
    row = table4(types).to_pylist()[0]
    assert (row["readout"], row["n"], row["n_unparseable"]) == (cf.PLANTED, queries.num_rows, 0)
    assert row["accuracy"] == _planted_count(accuracy, size) / queries.num_rows
    matrix = confusion_matrix(types.column("predicted").to_pylist(), gold)
    for i, name in enumerate(ORDER):
        assert matrix[i, i] == round(accuracy[name] * size[name])
        assert matrix[i, ORDER.index(cf.WRONG_TYPE[name])] == size[name] - matrix[i, i]

    # The responses read back: four cited sentences; Taxonomy-aware names the planted type
    text = responses.column("response")[0].as_py()
    assert len(sentences(text)) == 4
    aware = responses.filter(pc.equal(responses.column("strategy"), "taxonomy_aware")).slice(0, 20).to_pylist()
    predicted = dict(zip(types.column("query_id").to_pylist(), types.column("predicted").to_pylist()))
    assert all(
        parse_taxonomy_aware(TASK1_PREFIX + r["reply"]) == (predicted[r["query_id"]], r["response"]) for r in aware
    )

    # Table 5: expected behaviour, answer recall (the paper's categories), grounding 3 of 4, every sentence cited
    recall_sizes = {name: with_gold[name] for name in RECALL_CATEGORIES}
    for row in table5(judged, n_resamples=50).filter(pc.equal(pc.field("source"), "this run")).to_pylist():
        if row["model"] != "m":
            continue
        share = adherence[row["strategy"]]
        assert row["expected_behaviour"] == _planted_count(dict.fromkeys(ORDER, share), size) / queries.num_rows, row[
            "strategy"
        ]
        assert row["answer_recall"] == _planted_count(dict.fromkeys(RECALL_CATEGORIES, 0.8), recall_sizes) / sum(
            recall_sizes.values()
        )
        assert row["grounding"] == pytest.approx(0.75) and row["cited_sentences"] == 1.0
        assert (row["n_sentences"], row["n_invalid_citations"], row["n_unparseable"], row["n_unreadable"]) == (
            4 * queries.num_rows,
            0,
            0,
            0,
        )
    # Table 6: the same planted counts per category group
    for row in table6(judged).filter(pc.equal(pc.field("source"), "this run")).to_pylist():
        if row["model"] != "m":
            continue
        members = {name: size[name] for name in CATEGORY_GROUPS[row["category"]]}
        for strategy in STRATEGIES:
            want = _planted_count(dict.fromkeys(members, adherence[strategy]), members) / sum(members.values())
            assert row[strategy] == pytest.approx(want, abs=1e-12), (row["category"], strategy)
    # The methods table's CONFLICTS cells: the Vanilla share for each run
    cells = {
        (c["method"], c["metric"]): c["value"]
        for c in method_cells(judged, {"m@greedy": ("m", "greedy"), "m@cad-a1": ("m", "cad-a1")})
    }
    for method in ("greedy", "cad-a1"):
        assert cells[(method, "Expected behaviour")] == pytest.approx(
            _planted_count(dict.fromkeys(ORDER, adherence["vanilla"]), size) / queries.num_rows
        )


def test_planted_steered_reruns_give_table4_the_planted_accuracy_and_faithfulness_per_variant():
    from conflictlab.contextconflict.steering import steering_results

    table = samples("temporal")  # a type's samples, standing in for its test split
    variants, shares = {"base": ("base", 0.0), "cas-a1": ("cas", 1.0)}, {"base": 0.4, "cas-a1": 0.7}
    scored, judged = [], []
    for k, (variant, share) in enumerate(shares.items()):
        run = f"m@{variant}"  # a steered rerun's rows name it (its responses folder)
        responses, correct = cc.plant_responses(table, TEMPLATES, model=run, correct_share=share, seed=k)
        assert correct.sum() == round(share * table.num_rows)
        scored.append(score_responses(table, responses, run))
        judged.append(cc.plant_faithfulness(table, responses, model=run, judge="j", supported_share=0.75, seed=k))
    accuracy = summarize_accuracy(pa.concat_tables(scored))
    faithfulness = summarize_faithfulness(pa.concat_tables(judged), n_resamples=50)
    results = steering_results(variants, accuracy, None, faithfulness)
    got = {
        (r["variant"], r["metric"]): (r["value"], r["n"])
        for r in results.to_pylist()
        if r["conflict_type"] == "temporal"
    }
    for variant, share in shares.items():
        assert got[(variant, "accuracy")] == (round(share * table.num_rows) / table.num_rows, table.num_rows)
        assert got[(variant, "faithfulness")][0] == pytest.approx(0.75)


METHOD_RUNS = {
    "m@greedy": ("m", "base"),
    "m@cad-a1": ("m", "cad-a1"),
}  # run -> (model, row label), as methods_table labels them


def test_planted_conflictbank_methods_give_the_planted_mr_per_run_and_kind(tmp_path):
    from conflictlab.conflictbank import synthetic as cb
    from conflictlab.conflictbank.dataset import build_records, read_jsonl
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA
    from conflictlab.conflictbank.methods import method_cells
    from conflictlab.conflictbank.prompts import METHOD_SETTINGS

    cb.write_release(tmp_path / "qa.jsonl", 1 / 2000)
    records = build_records(read_jsonl(tmp_path / "qa.jsonl"), source="planted").tables()[0]
    answers = {"m@greedy": {"misinformation": (0.2, 0.6, 0.1, 0.1)}, "m@cad-a1": {"temporal": (0.7, 0.1, 0.2, 0.0)}}
    predictions = cb.planted_method_predictions(
        records, list(METHOD_RUNS), greedy="m@greedy", scored_share=0.5, answers=answers, seed=3
    )
    assert predictions.schema == PREDICTION_SCHEMA and predictions.num_rows == records.num_rows * (
        3 * len(METHOD_RUNS) + 2
    )
    cells = {(c["method"], c["metric"]): c for c in method_cells(predictions, METHOD_RUNS, greedy={"m": "m@greedy"})}
    n_scored = round(0.5 * records.num_rows)
    for run, (_, method) in METHOD_RUNS.items():
        for setting in METHOD_SETTINGS:
            shares = answers[run].get(setting, (0.5, 0.3, 0.1, 0.1))
            oar, car = cb.planted_counts(shares, n_scored)[:2]
            mr, share_oar = cells[(method, f"MR {setting}")], cells[(method, f"OAR {setting}")]
            # every run is scored on the greedy run's subset, where its planted counts hold exactly
            assert (mr["n"], share_oar["n"]) == (oar + car, n_scored), (run, setting)
            assert mr["value"] == pytest.approx(oar / (oar + car)) and share_oar["value"] == pytest.approx(
                oar / n_scored
            ), (run, setting)


def test_planted_arbitration_methods_give_the_planted_conflict_accuracy_per_run():
    import polars as pl

    from conflictlab.arbitration import synthetic as arb
    from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA
    from conflictlab.arbitration.methods import method_cells
    from conflictlab.arbitration.prompts import ArbitrationConfig, generate_instances, instance_unit

    instances = generate_instances(ArbitrationConfig(n_per_setting=10, seeds=(0, 1)))
    accuracy = {"m@greedy": 0.3, "m@cad-a1": 0.8}
    predictions = arb.planted_method_predictions(instances, list(METHOD_RUNS), accuracy=accuracy, seed=0)
    conflict = pl.from_arrow(instances).filter(pl.col("condition") == "conflict")
    assert predictions.schema == PREDICTION_SCHEMA and predictions.num_rows == len(METHOD_RUNS) * conflict.height
    sizes = conflict.group_by(arb.CELL).len()["len"].to_list()
    cells = {(c["method"], c["metric"]): c for c in method_cells(instances, predictions, METHOD_RUNS)}
    for run, (_, method) in METHOD_RUNS.items():
        cell = cells[(method, "Acc (conflict)")]
        # each instance counts once: its two evidence orders are one unit (arbitration.prompts.instance_unit)
        assert cell["n"] == conflict.height // 2 == len({instance_unit(i) for i in conflict["instance_id"]})
        assert cell["value"] == pytest.approx(sum(round(accuracy[run] * n) for n in sizes) / conflict.height), run


def _gold_items():
    from conflictlab.conflicts.gold import GOLD_KINDS as CONFLICTS_GOLD_KINDS
    from conflictlab.judges.gold import GOLD_KINDS, read_gold

    from .conftest import REPO

    kinds = {**GOLD_KINDS, **CONFLICTS_GOLD_KINDS}  # what rule judge_gold reads
    return read_gold(REPO / "resources/judges/gold.jsonl", kinds), kinds


def test_planted_gold_labels_give_the_planted_agreement_per_kind():
    from conflictlab.judges import synthetic as js
    from conflictlab.judges.gold import GOLD_SCHEMA, gold_agreement

    items, kinds = _gold_items()
    names = list(dict.fromkeys(item["kind"] for item in items))
    agreement = {kind: 0.1 * (k + 4) for k, kind in enumerate(names)}
    judged = js.plant_gold(items, kinds=kinds, agreement=agreement, seed=1)
    assert judged.schema == GOLD_SCHEMA and judged.column("id").to_pylist() == [item["id"] for item in items]
    rows = {row["kind"]: row for row in gold_agreement(judged).to_pylist()}
    assert list(rows) == names
    for kind, row in rows.items():
        n_labels = sum(len(kinds[kind].labels(item)) for item in items if item["kind"] == kind)
        assert (row["n_labels"], row["n_unparseable"]) == (n_labels, 0), kind
        assert row["agreement"] == round(agreement[kind] * n_labels) / n_labels, kind
    # a judge that agrees on every label: kappa 1 and no Balance gap
    perfect = {row["kind"]: row for row in gold_agreement(js.plant_gold(items, kinds=kinds, agreement=1.0)).to_pylist()}
    assert all(row["agreement"] == 1.0 and row["kappa"] == pytest.approx(1.0) for row in perfect.values())
    assert perfect["rating"]["balance_mae"] == 0.0


def test_planted_ratings_give_table7_the_planted_judge_balance_and_table2_every_rated_piece():
    from conflictlab.judges import synthetic as js
    from conflictlab.judges.ratings import RATING_SCHEMA, agreement_table, judge_balance_table

    table = samples("granularity")
    responses, _ = cc.plant_responses(table, TEMPLATES, model="m", seed=0)
    ratings, even = js.plant_ratings(table, responses, model="m", judge="j", even_share=0.3, seed=2)
    assert ratings.schema == RATING_SCHEMA and ratings.num_rows == table.num_rows
    ok = np.array([s == "ok" for s in ratings.column("status").to_pylist()])
    assert even.sum() == round(0.3 * ok.sum())
    # each rated sample's judge Balance is exactly 0 (even) or 1 (one piece)
    got = ratings.column("balance").to_pylist()
    assert [b is None for b in got] == (~ok).tolist()
    np.testing.assert_allclose([b for b in got if b is not None], np.where(even[ok], 0.0, 1.0), atol=1e-12)

    values, _, _ = cc.plant_values(table, responses, scorer="s", seed=2, exact_max_n=10, n_permutations=8)
    attr = attributions(values, table, model="m")
    defined = dict(zip(attr.column("sample_id").to_pylist(), pc.invert(attr.column("undefined")).to_pylist()))
    both = np.array([o and defined.get(s, False) for s, o in zip(table.column("sample_id").to_pylist(), ok)])
    row = judge_balance_table(ratings, attr, n_resamples=20).to_pylist()[0]
    assert row["n"] == both.sum() and row["judge_balance"] == pytest.approx(100 * np.mean(~even[both]))

    paired = np.array([o and s in defined for s, o in zip(table.column("sample_id").to_pylist(), ok)])
    pooled = agreement_table(ratings, attr, scorer="s").to_pylist()[0]
    n_pieces = sum(len(e) for e, p in zip(table.column("evidence").to_pylist(), paired) if p)
    assert (pooled["n_samples"], pooled["n_pieces"]) == (paired.sum(), n_pieces) and pooled["kappa"] is not None

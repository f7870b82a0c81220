"""ConflictBank: loader, the authors' prompt settings, the A-D read-out, the
released metrics and the continued pre-training."""

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conflictlab.conflictbank.dataset import HUB_FIELDS, RecordError, build_records, read_jsonl
from conflictlab.conflictbank.metrics import entropy_bits, setting_metrics
from conflictlab.conflictbank.prompts import AUTHOR_SETTINGS, SETTINGS_BY_NAME, render_prompt

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo" / "conflictbank" / "QA_dataset.jsonl"
SAMPLE = REPO.parent / "shared" / "conflictbank_sample" / "QA_dataset.sample.jsonl"


@pytest.fixture
def sample_record() -> dict:
    """The real hub record (a third-party copy that lost its ``subject``)."""
    if not SAMPLE.is_file():
        pytest.skip(f"the real ConflictBank sample record is not present at {SAMPLE}")
    return json.loads(SAMPLE.read_text().splitlines()[0])


def demo_records() -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text().splitlines()]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


# --------------------------------------------------------------------------
# Loader.


def test_sample_record_needs_its_subject_and_then_loads(sample_record, tmp_path):
    with pytest.raises(RecordError, match="field 'subject': is missing"):
        build_records(read_jsonl(write_jsonl(tmp_path / "a.jsonl", [sample_record])), source="sample")
    record = {**sample_record, "subject": "Kim Kardashian"}
    table, rejected = build_records(read_jsonl(write_jsonl(tmp_path / "b.jsonl", [record])), source="sample").tables()
    row = table.to_pylist()[0]
    assert rejected.num_rows == 0
    assert row["misinformation_evidence"] == sample_record["misinformation_conflict_evidence_evidence"]
    assert row["temporal_span"] == ["10 April, 2028", "21 July, 2036"]
    assert (row["correct_letter"], row["replaced_letter"], row["uncertain_letter"]) == ("A", "C", "D")
    assert row["semantic_style"] == "news"  # the hub's "new"
    assert row["options"][3] == "uncertain"


def test_demo_covers_relations_styles_and_spans():
    table, rejected = build_records(read_jsonl(DEMO), source="demo").tables()
    assert table.num_rows >= 12 and rejected.num_rows == 0
    assert len(set(table.column("relation").to_pylist())) >= 4
    for kind in ("default", "misinformation", "temporal", "semantic"):
        assert set(table.column(f"{kind}_style").to_pylist()) == {"wikipedia", "news", "book"}
    assert {len(span) for span in table.column("temporal_span").to_pylist()} == {1, 2}
    assert set(HUB_FIELDS) == set(demo_records()[0])  # the hub's exact field set


def test_pipeline_names_are_accepted_and_must_agree(tmp_path):
    record = demo_records()[0]
    renamed = dict(record)
    renamed["correct_evidence"] = renamed.pop("default_evidence")
    renamed["replaced_option"] = renamed.pop("replace_option")
    table, _ = build_records(read_jsonl(write_jsonl(tmp_path / "a.jsonl", [renamed])), source="x").tables()
    assert table.column("default_evidence").to_pylist() == [record["default_evidence"]]
    clash = {**record, "correct_evidence": "something else"}
    with pytest.raises(RecordError, match="correct_evidence"):
        build_records(read_jsonl(write_jsonl(tmp_path / "b.jsonl", [clash])), source="x")


BROKEN = [
    ("missing field", lambda r: r.pop("question"), "question", "is missing"),
    ("three options", lambda r: r.update(options=r["options"][:3]), "options", "not 4"),
    ("letter outside A-D", lambda r: r.update(correct_option="E"), "correct_option", "not one of A, B, C, D"),
    (
        "letters collide",
        lambda r: r.update(replace_option=r["correct_option"]),
        "replace_option",
        "is also correct_option",
    ),
    ("empty time span", lambda r: r.update(temporal_conflict_time_span=[]), "temporal_conflict_time_span", "0 dates"),
    (
        "three dates",
        lambda r: r.update(temporal_conflict_time_span=["1 May, 2030"] * 3),
        "temporal_conflict_time_span",
        "3 dates",
    ),
    ("unknown style", lambda r: r.update(default_evidence_category="blog"), "default_evidence_category", "'blog'"),
    ("options not a list", lambda r: r.update(options="A or B"), "options", "list of strings"),
]


@pytest.mark.parametrize("label,breaks,field,reason", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_records_fail_or_are_rejected(tmp_path, label, breaks, field, reason):
    records = demo_records()[:3]
    breaks(records[1])
    path = write_jsonl(tmp_path / "broken.jsonl", records)
    with pytest.raises(RecordError, match=f"record 1: field '{field}'.*{reason}"):
        build_records(read_jsonl(path), source=str(path))
    table, rejected = build_records(read_jsonl(path), source=str(path), on_error="reject").tables()
    assert table.column("record_id").to_pylist() == [0, 2]
    assert rejected.to_pylist() == [
        {"record_id": 1, "source": str(path), "field": field, "reason": rejected.column("reason")[0].as_py()}
    ]
    assert reason in rejected.column("reason")[0].as_py()


def test_a_line_that_is_not_json_is_named(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [demo_records()[0], "{not json"])
    with pytest.raises(RecordError, match="record 1: field '<line>': is not JSON"):
        build_records(read_jsonl(path), source=str(path))
    _, rejected = build_records(read_jsonl(path), source=str(path), on_error="reject").tables()
    assert rejected.column("record_id").to_pylist() == [1]


def test_max_per_relation_is_a_seeded_sample_per_relation():
    pairs = list(read_jsonl(DEMO))
    one = build_records(pairs, source="d", max_per_relation=1, seed=0).tables()[0]
    again = build_records(pairs, source="d", max_per_relation=1, seed=0).tables()[0]
    relations = one.column("relation").to_pylist()
    assert sorted(relations) == sorted(set(r["relation"] for r in demo_records()))
    assert one.equals(again)
    picks = {
        tuple(build_records(pairs, source="d", max_per_relation=1, seed=s).tables()[0].column("record_id").to_pylist())
        for s in range(6)
    }
    assert len(picks) > 1


# --------------------------------------------------------------------------
# Prompts: the authors' format strings (zhaochen0110/conflictbank, prompt.py,
# commit 3024a20ed69e290d616649547c3e533bcaf3c841), applied to the sample
# record under the names their pipeline reads, against render_prompt.

NO_EVIDENCE = "According to your knowledge, choose the best choice from the following options."
WITH_EVIDENCE = (
    "According to the evidence provided and your knowledge, choose the best choice from the following options."
)


def released_prompts(d: dict) -> dict[str, str]:
    o = d["options"]
    span = d["conflict_time_span"]
    one = "\n\nEvidence: {0}\nQuestion: {1}\nA. {2}\nB. {3}\nC. {4}\nD. {5}\nAnswer:"
    two = "\n\nEvidence: {0}\n{1}\nQuestion: {2}\nA. {3}\nB. {4}\nC. {5}\nD. {6}\nAnswer:"
    sem = "\n\nEvidence: {0}\nQuestion: {1}\n{2} in this quesion means {3}\nA. {4}\nB. {5}\nC. {6}\nD. {7}\nAnswer:"
    sem2 = (
        "\n\nEvidence: {0}\n{1}\nQuestion: {2}\n{3} in this quesion means {4}\nA. {5}\nB. {6}\nC. {7}\nD. {8}\nAnswer:"
    )
    if len(span) == 1:
        tmp = WITH_EVIDENCE + "\n\nEvidence: {}\nQuestion: {} in {}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:".format(
            d["temporal_conflict_evidence"], d["question"], span[0], *o
        )
        tmp2 = WITH_EVIDENCE + "\n\nEvidence: {}\n{}\nQuestion: {} in {}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:".format(
            d["correct_evidence"], d["temporal_conflict_evidence"], d["question"], span[0], *o
        )
    else:
        tmp = (
            WITH_EVIDENCE
            + "\n\nEvidence: {}\nQuestion: {} from {} to {}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:".format(
                d["temporal_conflict_evidence"], d["question"], span[0], span[1], *o
            )
        )
        tmp2 = (
            WITH_EVIDENCE
            + "\n\nEvidence: {}\n{}\nQuestion: {} from {} to {}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:".format(
                d["correct_evidence"], d["temporal_conflict_evidence"], d["question"], span[0], span[1], *o
            )
        )
    return {
        "default": NO_EVIDENCE + "\n\nQuestion: {}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:".format(d["question"], *o),
        "correct": WITH_EVIDENCE + one.format(d["correct_evidence"], d["question"], *o),
        "temporal": WITH_EVIDENCE + one.format(d["temporal_conflict_evidence"], d["question"], *o),
        "temporal_description": tmp,
        "semantic": WITH_EVIDENCE + one.format(d["semantic_conflict_evidence"], d["question"], *o),
        "semantic_description": WITH_EVIDENCE
        + sem.format(d["semantic_conflict_evidence"], d["question"], d["subject"], d["semantic_description"], *o),
        "misinformation": WITH_EVIDENCE + one.format(d["fact_conflict_evidence"], d["question"], *o),
        "correct_misinformation": WITH_EVIDENCE
        + two.format(d["correct_evidence"], d["fact_conflict_evidence"], d["question"], *o),
        "correct_semantic": WITH_EVIDENCE
        + two.format(d["correct_evidence"], d["semantic_conflict_evidence"], d["question"], *o),
        "correct_semantic_description": WITH_EVIDENCE
        + sem2.format(
            d["correct_evidence"],
            d["semantic_conflict_evidence"],
            d["question"],
            d["subject"],
            d["semantic_description"],
            *o,
        ),
        "correct_temporal": WITH_EVIDENCE
        + two.format(d["correct_evidence"], d["temporal_conflict_evidence"], d["question"], *o),
        "correct_temporal_description": tmp2,
    }


def pipeline_names(hub: dict) -> dict:
    d = dict(hub)
    d["correct_evidence"] = d["default_evidence"]
    d["fact_conflict_evidence"] = d["misinformation_conflict_evidence_evidence"]
    d["conflict_time_span"] = d["temporal_conflict_time_span"]
    return d


@pytest.mark.parametrize("span", [None, ["1 January, 2030"]], ids=["sample span", "one date"])
def test_twelve_settings_equal_the_released_strings(sample_record, tmp_path, span):
    record = {**sample_record, "subject": "Kim Kardashian"}
    if span:
        record["temporal_conflict_time_span"] = span
    row = build_records(read_jsonl(write_jsonl(tmp_path / "s.jsonl", [record])), source="s").tables()[0].to_pylist()[0]
    expected = released_prompts(pipeline_names(record))
    assert set(expected) == set(AUTHOR_SETTINGS)
    for name in AUTHOR_SETTINGS:
        assert render_prompt(row, SETTINGS_BY_NAME[name]) == expected[name], name


def test_reversed_settings_put_the_conflicting_evidence_first():
    row = build_records(read_jsonl(DEMO), source="d").tables()[0].to_pylist()[0]
    for name in AUTHOR_SETTINGS:
        setting = SETTINGS_BY_NAME[name]
        if not setting.mixed:
            continue
        rev = render_prompt(row, SETTINGS_BY_NAME[f"{name}_reversed"])
        conflict = row[f"{setting.conflict}_evidence"]
        assert f"Evidence: {conflict}\n{row['default_evidence']}\nQuestion:" in rev
        assert SETTINGS_BY_NAME[f"{name}_reversed"].conflict_first and not setting.conflict_first
        # the same text otherwise
        assert sorted(rev) == sorted(render_prompt(row, setting))


# --------------------------------------------------------------------------
# Metrics on a hand-computed prediction table.


def _predictions(rows, model="m"):
    """rows: (record, setting, predicted, probabilities); gold A, replaced B, uncertain D."""
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA

    return pa.Table.from_pylist(
        [
            {
                "record_id": r,
                "setting": s,
                "model": model,
                "probabilities": p,
                "predicted_letter": x,
                "correct_letter": "A",
                "replaced_letter": "B",
                "uncertain_letter": "D",
            }
            for r, s, x, p in rows
        ],
        schema=PREDICTION_SCHEMA,
    )


QUARTER, SURE = [0.25] * 4, [1.0, 0.0, 0.0, 0.0]
HAND_ROWS = [
    # records 0-2 right in default and correct; record 3 wrong in correct -> not scored
    (0, "default", "A", SURE),
    (1, "default", "A", SURE),
    (2, "default", "A", SURE),
    (3, "default", "A", SURE),
    (0, "correct", "A", SURE),
    (1, "correct", "A", SURE),
    (2, "correct", "A", SURE),
    (3, "correct", "C", SURE),
    (0, "misinformation", "A", QUARTER),
    (1, "misinformation", "B", SURE),
    (2, "misinformation", "D", QUARTER),
    (3, "misinformation", "A", SURE),
    (0, "semantic", "D", SURE),
    (1, "semantic", "C", SURE),
    (2, "semantic", "D", SURE),
    (3, "semantic", "B", SURE),
]


def test_metrics_on_a_hand_computed_table():
    table = {r["setting"]: r for r in setting_metrics(_predictions(HAND_ROWS), n_resamples=200).to_pylist()}
    mis = table["misinformation"]
    assert (mis["n_records"], mis["n_scored"], mis["n_mr"]) == (4, 3, 2)
    for rate in ("oar", "car", "uncertain"):
        assert mis[rate] == pytest.approx(1 / 3)
    assert mis["neither"] == pytest.approx(1 / 3)  # the D answer
    assert mis["mr"] == pytest.approx(0.5)
    assert mis["entropy"] == pytest.approx((2.0 + 0.0 + 2.0) / 3)
    assert math.isnan(mis["entropy_low"]) and math.isnan(mis["entropy_high"])  # n = 3: below the t interval's minimum n
    assert table["default"]["oar"] == 1.0 and table["default"]["mr"] == 1.0 and table["default"]["n_mr"] == 3


def test_mr_is_nan_with_its_count_when_no_answer_is_correct_or_replaced():
    """The authors' evaluate.py reports MR = 0 here: 'never misled' for a model that answers neither."""
    semantic = next(
        r for r in setting_metrics(_predictions(HAND_ROWS), n_resamples=200).to_pylist() if r["setting"] == "semantic"
    )
    assert semantic["oar"] == 0.0 and semantic["car"] == 0.0
    assert (
        semantic["n_mr"] == 0
        and np.isnan(semantic["mr"])
        and np.isnan(semantic["mr_low"])
        and np.isnan(semantic["mr_high"])
    )
    assert semantic["neither"] == 1.0 and semantic["n_scored"] == 3


def test_rates_and_mr_get_clopper_pearson_intervals_over_their_own_denominators():
    from statsmodels.stats.proportion import proportion_confint

    # 20 scored records; under misinformation 9 correct, 5 replaced, 4 uncertain, 2 the other distractor
    answers = ["A"] * 9 + ["B"] * 5 + ["D"] * 4 + ["C"] * 2
    rows = [(i, s, "A", SURE) for i in range(20) for s in ("default", "correct")]
    rows += [(i, "misinformation", x, QUARTER) for i, x in enumerate(answers)]
    mis = next(
        r for r in setting_metrics(_predictions(rows), n_resamples=200).to_pylist() if r["setting"] == "misinformation"
    )
    for rate, k, n in (("oar", 9, 20), ("car", 5, 20), ("uncertain", 4, 20), ("neither", 6, 20), ("mr", 9, 14)):
        low, high = proportion_confint(k, n, method="beta")
        assert (mis[rate], mis[f"{rate}_low"], mis[f"{rate}_high"]) == pytest.approx((k / n, low, high)), rate
    assert mis["n_mr"] == 14
    default = next(
        r for r in setting_metrics(_predictions(rows), n_resamples=200).to_pylist() if r["setting"] == "default"
    )
    assert (
        default["oar_low"] == pytest.approx(proportion_confint(20, 20, method="beta")[0]) and default["oar_low"] < 1.0
    )


def test_no_interval_below_two_and_an_empty_subset():
    one = [(0, "default", "A", SURE), (0, "correct", "A", SURE), (0, "misinformation", "B", SURE)]
    mis = next(
        r for r in setting_metrics(_predictions(one), n_resamples=100).to_pylist() if r["setting"] == "misinformation"
    )
    assert mis["n_scored"] == 1 and mis["car"] == 1.0 and mis["mr"] == 0.0
    for column in ("car", "mr", "entropy"):
        assert np.isnan(mis[f"{column}_low"]) and np.isnan(mis[f"{column}_high"]), column
    np.testing.assert_allclose(entropy_bits(np.array([[0.5, 0.5, 0, 0], [1, 0, 0, 0]])), [1.0, 0.0])
    rows = [
        (0, "default", "B", [0, 1, 0, 0]),
        (0, "correct", "A", [1, 0, 0, 0]),
        (0, "misinformation", "A", [1, 0, 0, 0]),
    ]
    out = {r["setting"]: r for r in setting_metrics(_predictions(rows), n_resamples=100).to_pylist()}
    assert (
        out["misinformation"]["n_scored"] == 0
        and out["misinformation"]["n_mr"] == 0
        and np.isnan(out["misinformation"]["mr"])
    )
    with pytest.raises(ValueError, match="default and correct"):
        setting_metrics(_predictions([(0, "misinformation", "A", [1, 0, 0, 0])]))


def test_metric_table_shows_n_per_row_and_says_why_mr_is_empty(tmp_path):
    from conflictlab.conflictbank.report import write_metric_table

    write_metric_table(setting_metrics(_predictions(HAND_ROWS), n_resamples=200), tmp_path / "t.md", tmp_path / "t.csv")
    lines = (tmp_path / "t.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| model"))
    cells = dict(
        zip(header.strip("|").split("|"), next(line for line in lines if "| semantic |" in line).strip("|").split("|"))
    )
    cells = {k.strip(): v.strip() for k, v in cells.items()}
    assert (cells["n_records"], cells["n_scored"], cells["n_mr"]) == ("4", "3", "0")
    assert cells["mr"] == "" and cells["neither"].startswith("100.0 [")
    assert any("n_mr = 0" in line for line in lines)


# --------------------------------------------------------------------------
# Embedded knowledge: scoring and the figure.


def _embedded_tables(model="m", misinformation_answer="B"):
    """Base model: records 0, 1 right in default and correct (the scored
    subset), 2, 3 wrong in default. Trained at 2:3, it gets default wrong on
    record 0 and answers ``misinformation_answer`` everywhere under misinformation."""
    base = [(r, s, "A" if r < 2 else "C", SURE) for r in range(4) for s in ("default", "correct")]
    base += [(r, "misinformation", "A", SURE) for r in range(4)]
    trained = [
        (0, "default", "B", SURE),
        (1, "default", "A", SURE),
        (2, "default", "A", SURE),
        (3, "default", "A", SURE),
    ]
    trained += [(r, "correct", "A", SURE) for r in range(4)] + [
        (r, "misinformation", misinformation_answer, SURE) for r in range(4)
    ]
    return _predictions(base, model), {"2:3": _predictions(trained, model)}


def test_embedded_headline_is_the_base_models_scored_subset_beside_all_records():
    from conflictlab.conflictbank.metrics import ALL_RECORDS, SCORED_SUBSET, embedded_metrics

    base, trained = _embedded_tables()
    rows = embedded_metrics(
        base, trained, models=["m"], settings=["default", "misinformation"], n_resamples=100
    ).to_pylist()
    cell = {(r["scored_on"], r["ratio"], r["setting"]): r for r in rows}
    assert rows[0]["scored_on"] == SCORED_SUBSET  # the headline first
    headline = cell[(SCORED_SUBSET, "2:3", "default")]
    assert (
        headline["n_scored"] == 2 and headline["oar"] == 0.5
    )  # records 0, 1 only; the trained model's own subset would give 100%
    assert cell[(SCORED_SUBSET, "base", "default")]["oar"] == 1.0
    companion = cell[(ALL_RECORDS, "2:3", "default")]
    assert companion["n_scored"] == 4 and companion["oar"] == 0.75
    assert cell[(ALL_RECORDS, "base", "default")]["oar"] == 0.5
    assert (
        cell[(SCORED_SUBSET, "2:3", "misinformation")]["mr"] == 0.0
        and cell[(SCORED_SUBSET, "2:3", "misinformation")]["n_mr"] == 2
    )
    with pytest.raises(ValueError, match="no read-out before training"):
        embedded_metrics(base, trained, models=["other"], settings=["default"])


def test_embedded_figure_plots_every_model(tmp_path):
    import matplotlib.pyplot as plt

    from conflictlab.conflictbank.metrics import embedded_metrics
    from conflictlab.conflictbank.report import embedded_figure, write_embedded_table

    base, trained = _embedded_tables("m", "B")
    other, other_trained = _embedded_tables("k", "A")
    rows = embedded_metrics(
        pa.concat_tables([base, other]),
        {"2:3": pa.concat_tables([trained["2:3"], other_trained["2:3"]])},
        models=["m", "k"],
        settings=["default", "misinformation"],
        n_resamples=100,
    )
    fig = embedded_figure(rows)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4
    plotted = {}
    for ax in axes:
        model = ax.get_title().split(":")[0]
        for container in ax.containers:  # one errorbar per setting
            plotted[(model, container.get_label())] = list(container.lines[0].get_ydata())
    assert plotted[("m", "default")] == pytest.approx([100.0, 50.0])  # base, 2:3 on m's subset
    assert plotted[("k", "default")] == pytest.approx([100.0, 50.0])
    assert plotted[("m", "misinformation")] == pytest.approx([100.0, 0.0])
    assert plotted[("k", "misinformation")] == pytest.approx([100.0, 100.0])
    plt.close(fig)
    write_embedded_table(rows, tmp_path / "e.md", tmp_path / "e.csv")
    header = next(line for line in (tmp_path / "e.md").read_text().splitlines() if line.startswith("| model"))
    assert all(f" {column} " in header for column in ("n_scored", "n_mr", "scored_on"))


# --------------------------------------------------------------------------
# The columnar metrics (polars) against the row loops they replaced (issue 33).
# The legacy_* functions (benchmarks/conflictbank_metrics.py) are the
# implementation before it, verbatim but for their names: the oracle, on
# random tables with ties, missing settings and records, duplicate rows and
# groups of n < 2.


def _legacy():
    """The legacy implementation, kept in the benchmark that times it against this one."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "conflictbank_metrics_benchmark", REPO / "benchmarks" / "conflictbank_metrics.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


legacy = _legacy()
legacy_scored_records, legacy_setting_metrics = legacy.legacy_scored_records, legacy.legacy_setting_metrics


def legacy_embedded_metrics(base, trained, *, models, settings, n_resamples=2000, seed=0):
    import pyarrow.compute as pc

    from conflictlab.conflictbank.metrics import ALL_RECORDS, EMBEDDED_SCHEMA, SCORED_SUBSET

    own = {model: base.filter(pc.equal(base.column("model"), model)) for model in models}
    lacking = [model for model, table in own.items() if table.num_rows == 0]
    if lacking:
        raise ValueError(
            f"embedded models {lacking} have no read-out before training; they must also be under conflictbank.models"
        )
    scorings = {
        SCORED_SUBSET: {model: legacy_scored_records(table) for model, table in own.items()},
        ALL_RECORDS: {model: set(table.column("record_id").to_pylist()) for model, table in own.items()},
    }
    by_ratio = {"base": pa.concat_tables(own.values()) if own else base.slice(0, 0), **trained}
    rows = []
    for scored_on, subsets in scorings.items():
        for ratio, table in by_ratio.items():
            for row in legacy_setting_metrics(table, subsets=subsets, n_resamples=n_resamples, seed=seed).to_pylist():
                if row["setting"] in settings:
                    rows.append({**row, "ratio": ratio, "scored_on": scored_on})
    ratios = list(by_ratio)
    rows.sort(key=lambda r: (list(scorings).index(r["scored_on"]), models.index(r["model"]), ratios.index(r["ratio"])))
    return pa.Table.from_pylist(rows, schema=EMBEDDED_SCHEMA)


RANDOM_SETTINGS = [
    "default",
    "correct",
    "misinformation",
    "semantic",
    "correct_temporal",
    "temporal_description",
    "semantic_description",
]
TIED = ([0.25] * 4, [0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5])


def _random_predictions(seed, models=("m1", "m0"), n_records=30, settings=RANDOM_SETTINGS):
    """Rows of ``PREDICTION_SCHEMA`` in a random order (so each model's
    settings first appear in their own order): about a quarter of the records
    missing per setting, a few rows twice, ``temporal_description`` with one
    scored record and ``semantic_description`` with one unscored record
    (n_scored 1 and 0), the last model without ``semantic``; probabilities
    half tied (uniform, two-way, one-hot, zeros) and half drawn; the
    prediction mostly their argmax, sometimes another letter or none."""
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA

    rng = np.random.default_rng(seed)
    letters = np.array(["A", "B", "C", "D"])
    options = {r: rng.permutation(letters)[:3] for r in range(n_records)}  # correct, replaced, uncertain
    # a read-out column, where the schema has one, is not read by the metrics
    extra = {name: "logits" for name in PREDICTION_SCHEMA.names if name == "read_out"}
    rows = []
    for m, model in enumerate(models):
        right = {}
        for setting in sorted(settings, key=lambda name: name not in ("default", "correct")):  # the subset first
            if setting == "semantic" and m == len(models) - 1:
                continue
            if setting.endswith("_description"):
                scored = sorted(set(right.get("default", ())) & set(right.get("correct", ())))
                pool = scored if setting.startswith("temporal") else sorted(set(range(n_records)) - set(scored))
                ids = rng.choice(pool or range(n_records), size=1)
            else:
                ids = rng.choice(n_records, size=int(rng.integers(n_records // 2, n_records)), replace=False)
                ids = np.concatenate([ids, rng.choice(ids, size=2)])
            for r in ids:
                p = np.array(TIED[rng.integers(len(TIED))]) if rng.random() < 0.5 else rng.dirichlet(np.ones(4))
                draw = rng.random()
                predicted = letters[p.argmax()] if draw < 0.75 else "none" if draw < 0.8 else rng.choice(letters)
                correct, replaced, uncertain = options[int(r)]
                # default and correct mostly right, so the scored subset is a real part of the records
                if setting in ("default", "correct") and rng.random() < 0.7:
                    predicted = correct
                if predicted == correct:
                    right.setdefault(setting, set()).add(int(r))
                rows.append(
                    {
                        "record_id": int(r),
                        "setting": str(setting),
                        "model": model,
                        "probabilities": p.tolist(),
                        "predicted_letter": str(predicted),
                        "correct_letter": correct,
                        "replaced_letter": replaced,
                        "uncertain_letter": uncertain,
                        **extra,
                    }
                )
    order = rng.permutation(len(rows))
    return pa.Table.from_pylist([rows[i] for i in order], schema=PREDICTION_SCHEMA)


def _assert_same_table(new: pa.Table, old: pa.Table):
    """Equal schema, rows in the same order, every number equal (NaN where NaN)."""
    assert new.schema == old.schema
    assert new.num_rows == old.num_rows
    for name in old.column_names:
        a, b = new.column(name).to_pylist(), old.column(name).to_pylist()
        if pa.types.is_floating(old.schema.field(name).type):
            np.testing.assert_array_equal(np.array(a, dtype=float), np.array(b, dtype=float), err_msg=name)
        else:
            assert a == b, name


@pytest.mark.parametrize("seed", range(4))
def test_setting_metrics_equal_the_row_loops_on_random_tables(seed, monkeypatch):
    from conflictlab.conflictbank import metrics

    table = _random_predictions(seed)
    old = legacy_setting_metrics(table, n_resamples=60, seed=seed)
    assert {0, 1} <= set(old.column("n_scored").to_pylist())  # the n < 2 cases are there
    assert len(set(old.column("setting").to_pylist())) == len(RANDOM_SETTINGS)
    # several bootstrap blocks per setting, two threads: still the same draws
    monkeypatch.setattr("conflictlab.stats.BOOTSTRAP_BLOCK", 37)
    _assert_same_table(metrics.setting_metrics(table, n_resamples=60, seed=seed, workers=2), old)
    subsets = {"m0": set(range(0, 30, 2)), "m1": set(range(5))}
    _assert_same_table(
        metrics.setting_metrics(table, n_resamples=60, seed=seed, subsets=subsets),
        legacy_setting_metrics(table, n_resamples=60, seed=seed, subsets=subsets),
    )


def test_setting_metrics_read_the_files_lazily_with_the_same_numbers(tmp_path):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from conflictlab.conflictbank.metrics import scan_predictions, setting_metrics

    table = _random_predictions(7)
    paths = []
    for model in ("m1", "m0"):  # one file per model, as the workflow writes them
        paths.append(tmp_path / f"{model}.parquet")
        pq.write_table(table.filter(pc.equal(table.column("model"), model)), paths[-1])
    together = pa.concat_tables([pq.read_table(path) for path in paths])
    _assert_same_table(
        setting_metrics(scan_predictions(paths), n_resamples=50), legacy_setting_metrics(together, n_resamples=50)
    )
    pq.write_table(table.drop_columns(["uncertain_letter"]), tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"bad\.parquet: field 'uncertain_letter' is missing"):
        scan_predictions([paths[0], tmp_path / "bad.parquet"])
    pq.write_table(
        table.set_column(0, "record_id", pc.cast(table.column("record_id"), pa.int32())), tmp_path / "narrow.parquet"
    )
    with pytest.raises(ValueError, match=r"narrow\.parquet: field 'record_id' is Int32, expected Int64"):
        scan_predictions(tmp_path / "narrow.parquet")


def test_setting_metrics_refuse_a_model_without_default_or_correct_like_the_row_loops():
    import pyarrow.compute as pc

    from conflictlab.conflictbank.metrics import setting_metrics

    table = _random_predictions(3)
    lacking = table.filter(
        pc.invert(pc.and_(pc.equal(table.column("model"), "m0"), pc.equal(table.column("setting"), "correct")))
    )
    for implementation in (setting_metrics, legacy_setting_metrics):
        with pytest.raises(ValueError, match=r"default and correct; .*lack \['correct'\]"):
            implementation(lacking, n_resamples=20)
    _assert_same_table(setting_metrics(table.slice(0, 0)), legacy_setting_metrics(table.slice(0, 0)))
    with pytest.raises(ValueError, match=r"no scored records for the models \['m1'\]"):  # the row loops: a KeyError
        setting_metrics(table, subsets={"m0": {1, 2}})


@pytest.mark.parametrize("seed", range(3))
def test_embedded_metrics_equal_the_row_loops_on_random_tables(seed):
    from conflictlab.conflictbank.metrics import embedded_metrics

    base = _random_predictions(seed, models=("m1", "m0", "unused"))
    trained = {
        "2:3": _random_predictions(
            seed + 10, models=("m0", "m1"), settings=["correct", "default", "misinformation", "semantic"]
        ),
        "1:0": _random_predictions(seed + 20, models=("m1",), settings=["misinformation", "default", "correct"]),
    }
    options = dict(
        models=["m0", "m1"], settings=["default", "misinformation", "semantic", "absent"], n_resamples=40, seed=seed
    )
    _assert_same_table(
        embedded_metrics(base, trained, **options, workers=2), legacy_embedded_metrics(base, trained, **options)
    )


@pytest.mark.parametrize("n", [2, 3, 101, 1000])
def test_blocked_bootstrap_is_the_all_at_once_bootstrap_bit_for_bit(n):
    from conflictlab.stats import bootstrap_mean_ci

    values = np.random.default_rng(n).random(n).round(2)  # rounded: ties
    for block in (1, 7 * n + 3, 10**9):
        for seed in (0, 5):
            assert bootstrap_mean_ci(
                values, n_resamples=333, seed=seed, block=block
            ) == legacy.legacy_bootstrap_mean_ci(values, n_resamples=333, seed=seed)
    for few in ([], [0.5]):
        np.testing.assert_array_equal(bootstrap_mean_ci(np.array(few)), legacy.legacy_bootstrap_mean_ci(np.array(few)))


def test_memorization_figure_draws_each_models_mr_and_n_from_the_metric_table():
    import math

    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer

    from conflictlab.conflictbank.dataset import CONFLICT_KINDS
    from conflictlab.conflictbank.metrics import setting_metrics
    from conflictlab.conflictbank.prompts import SETTINGS
    from conflictlab.conflictbank.report import CONTRAST_LABELS, contrasts, memorization_figure

    names = [setting.name for setting in SETTINGS]
    metrics = setting_metrics(
        pa.concat_tables(
            [
                _random_predictions(1, models=("m1",), settings=names),
                _random_predictions(2, models=("m0",), settings=names),
            ]
        ),
        n_resamples=20,
    )
    found = {(r["model"], r["setting"]): (r["mr"], r["n_mr"]) for r in metrics.to_pylist()}
    mr = {
        (model, name): found.get((model, name), (math.nan, 0)) for model in ("m1", "m0") for name in names
    }  # semantic is missing
    fig = memorization_figure(metrics, ["m1", "m0"])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 6
    for m, model in enumerate(["m1", "m0"]):
        for c, contrast in enumerate(CONTRAST_LABELS):
            ax = axes[3 * m + c]
            first = next(r for r in metrics.to_pylist() if r["model"] == model)  # n_scored varies here: duplicate rows
            assert ax.get_title().startswith(f"{model} (n={first['n_scored']})")
            for side, bars in enumerate(c for c in ax.containers if isinstance(c, BarContainer)):
                expected = [
                    mr[model, pair[1 + side]]
                    for kind in CONFLICT_KINDS
                    for pair in contrasts(kind)
                    if pair[0] == contrast
                ]
                np.testing.assert_allclose([bar.get_height() for bar in bars], [100 * value for value, _ in expected])
            labels = [int(text.get_text()) for text in ax.texts]
            assert sorted(labels) == sorted(
                n
                for side in (0, 1)
                for kind in CONFLICT_KINDS
                for pair in contrasts(kind)
                if pair[0] == contrast
                for n in [mr[model, pair[1 + side]][1]]
            )
    plt.close(fig)


# --------------------------------------------------------------------------
# The read-out on real small models (training: tests/test_conflictbank_training.py).


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["tiny_llama_dir", "tiny_gemma_dir"])
def test_read_out_equals_softmax_of_a_full_forward(request, folder):
    import torch
    from transformers import AutoModelForCausalLM

    from conflictlab.conflictbank.evaluation import letter_token_ids, read_out
    from conflictlab.lm.loading import load

    path = request.getfixturevalue(folder)
    lm = load(path, dtype="float32")
    plain = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    records = build_records(read_jsonl(DEMO), source="d").tables()[0].slice(0, 3)
    settings = [SETTINGS_BY_NAME[name] for name in ("default", "correct_misinformation_reversed")]
    got = read_out(lm, records, settings, model_name="m", batch_size=4)
    ids = [lm.tokenizer(f" {x}", add_special_tokens=False)["input_ids"][-1] for x in "ABCD"]
    assert ids == letter_token_ids(lm.tokenizer)
    for row in got.to_pylist():
        record = next(r for r in records.to_pylist() if r["record_id"] == row["record_id"])
        prompt = lm.tokenizer(render_prompt(record, SETTINGS_BY_NAME[row["setting"]]))["input_ids"]
        with torch.inference_mode():
            logprobs = torch.log_softmax(plain(input_ids=torch.tensor([prompt])).logits[0, -1].double(), dim=-1)[ids]
        expected = torch.softmax(logprobs, dim=-1).numpy()
        np.testing.assert_allclose(row["probabilities"], expected, atol=1e-4)
        assert row["predicted_letter"] == "ABCD"[int(np.argmax(expected))]


def test_ratio_parsing_and_corpus_size():
    from conflictlab.conflictbank.ratio import MixtureRatio
    from conflictlab.conflictbank.training import mixture_corpus

    records = build_records(read_jsonl(DEMO), source="d").tables()[0]
    assert MixtureRatio.from_label("2:3").parts() == (2, 3)
    for bad in ("0:1", "2", "a:b", "1:-1"):
        with pytest.raises(ValueError, match="ratio"):
            MixtureRatio.from_label(bad)
    corpus = mixture_corpus(records, (2, 3), seed=0)
    defaults = set(records.column("default_evidence").to_pylist())
    assert len(corpus) == 12 + 18 and sum(t in defaults for t in corpus) == 12
    assert len(mixture_corpus(records, (1, 0), seed=0)) == 12
    with pytest.raises(ValueError, match="needs 48"):
        mixture_corpus(records, (1, 4), seed=0)


def test_conflicting_pools_are_nested_and_balanced_over_kinds():
    from conflictlab.conflictbank.training import mixture_corpus

    records = build_records(read_jsonl(DEMO), source="d").tables()[0]
    kind_of = {
        text: kind
        for kind in ("misinformation", "temporal", "semantic")
        for text in records.column(f"{kind}_evidence").to_pylist()
    }
    pools = {}
    for ratio in ((2, 1), (1, 1), (2, 3)):
        pools[ratio] = [t for t in mixture_corpus(records, ratio, seed=3) if t in kind_of]
        # 12 records: 6, 12, 18 conflicting texts, a third of each kind
        assert sorted(kind_of[t] for t in pools[ratio]) == sorted(
            ["misinformation", "temporal", "semantic"] * (len(pools[ratio]) // 3)
        )
    assert set(pools[(2, 1)]) < set(pools[(1, 1)]) < set(pools[(2, 3)])
    assert set(mixture_corpus(records, (2, 3), seed=4)) != set(mixture_corpus(records, (2, 3), seed=3))


def test_packing_gives_every_ratio_the_same_tokens_per_step():
    from conflictlab.conflictbank.training import mixture_corpus, pack_blocks, tokenize_for_packing

    np.testing.assert_array_equal(
        pack_blocks([[1, 2, 3], [4, 5]], 4), [[1, 2, 3, 4], [5, 1, 2, 3]]
    )  # the last block wraps

    class WordTokenizer:
        """One id per word, BOS first (as Llama's); EOS is 0."""

        eos_token_id = 0

        def __call__(self, text):
            return {"input_ids": [1] + [2 + len(word) for word in text.split()]}

    records = build_records(read_jsonl(DEMO), source="d").tables()[0]
    for ratio in ((1, 0), (2, 3)):
        sequences = tokenize_for_packing(WordTokenizer(), mixture_corpus(records, ratio, seed=0))
        assert all(seq[0] == 1 and seq[-1] == 0 for seq in sequences)
        blocks = pack_blocks(sequences, 16)
        total = sum(len(seq) for seq in sequences)
        assert blocks.shape == (
            -(-total // 16),
            16,
        )  # every block full: a step of b blocks is 16·b tokens at either ratio
        np.testing.assert_array_equal(blocks.reshape(-1)[:total], np.concatenate(sequences))


def test_embedded_figures_6_and_7_draw_the_headline_settings_over_ratios_and_name_the_missing():
    import matplotlib.pyplot as plt

    from conflictlab.conflictbank.metrics import embedded_metrics
    from conflictlab.conflictbank.report import embedded_settings_figure

    base, trained = _embedded_tables()
    # scored subset: records 0 and 1; MR = OAR / (OAR + CAR) over them (gold A, replaced B)
    mixed_base = [(r, "correct_misinformation", x, SURE) for r, x in enumerate("AABB")]
    mixed_base += [(r, "correct_misinformation_reversed", x, SURE) for r, x in enumerate("BAAA")]
    mixed_trained = [(r, "correct_misinformation", x, SURE) for r, x in enumerate("BBAA")]
    mixed_trained += [(r, "correct_misinformation_reversed", x, SURE) for r, x in enumerate("ACAA")]
    base = pa.concat_tables([base, _predictions(mixed_base)])
    trained = {"2:3": pa.concat_tables([trained["2:3"], _predictions(mixed_trained)])}
    settings = ["default", "correct", "correct_misinformation", "correct_misinformation_reversed"]
    rows = embedded_metrics(base, trained, models=["m"], settings=settings, n_resamples=50)

    def drawn(ax):
        return {c.get_label(): list(c.lines[0].get_ydata()) for c in ax.containers}

    fig6 = embedded_settings_figure(rows, "fig6")
    (panel,) = [ax for ax in fig6.axes if ax.get_visible()]
    assert panel.get_title() == "m: no or default evidence (n=2)"
    assert drawn(panel) == {"default": pytest.approx([100.0, 50.0]), "correct": pytest.approx([100.0, 100.0])}
    assert [t.get_text() for t in panel.get_xticklabels()] == ["base", "2:3"]
    fig7 = embedded_settings_figure(rows, "fig7")
    misinformation, temporal, semantic = [ax for ax in fig7.axes if ax.get_visible()]
    assert drawn(misinformation) == {
        "correct_misinformation": pytest.approx([100.0, 0.0]),
        "correct_misinformation_reversed": pytest.approx([50.0, 100.0]),
    }
    assert [t.get_text() for t in misinformation.texts] == [
        "2",
        "2",
        "2",
        "1",
    ]  # n_mr per point: record 1 answered C after training
    assert drawn(temporal) == {} and "correct_temporal, correct_temporal_reversed" in temporal.texts[
        0
    ].get_text().replace("\n", " ")
    assert "correct_semantic" in semantic.texts[0].get_text()
    plt.close(fig6)
    plt.close(fig7)


def _model_folder(path, shapes, config, extra=None):
    """A prepared-model folder whose manifest lists one safetensors file of
    tensors ``shapes`` (and ``extra``, a file the manifest does not list)."""
    import struct

    path.mkdir()

    def write(name, tensors):
        header = {"__metadata__": {"format": "pt"}}
        offset = 0
        for key, shape in tensors.items():
            size = 4 * int(np.prod(shape))
            header[key] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
            offset += size
        blob = json.dumps(header).encode()
        (path / name).write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(offset))

    write("model.safetensors", shapes)
    if extra:
        write("consolidated.safetensors", extra)
    (path / "conflictlab_model.json").write_text(json.dumps({"weights_sha256": {"model.safetensors": "x"}}))
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_model_size_counts_the_manifests_tensors_and_names_the_family(tmp_path):
    from conflictlab.conflictbank.report import model_size

    plain = _model_folder(
        tmp_path / "a",
        {"embed": (100, 8), "layer.w": (8, 8), "norm": (8,)},
        {"model_type": "llama", "vocab_size": 100},
        extra={"embed": (100, 8)},
    )
    assert model_size(plain) == (100 * 8 + 64 + 8, "llama, vocab 100")  # the unlisted file is not counted
    nested = _model_folder(
        tmp_path / "b",
        {"w": (3, 5)},
        {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "vocab_size": 7}},
    )
    assert model_size(nested) == (15, "gemma3_text, vocab 7")


def test_scale_figure_draws_mr_against_size_per_family_in_size_order():
    import math

    import matplotlib.pyplot as plt

    from conflictlab.conflictbank.dataset import CONFLICT_KINDS
    from conflictlab.conflictbank.metrics import setting_metrics
    from conflictlab.conflictbank.report import scale_figure

    metrics = setting_metrics(_random_predictions(3, models=("big", "small", "other", "hosted")), n_resamples=20)
    mr = {
        (r["model"], r["setting"]): (math.nan if r["mr"] is None else r["mr"], r["n_mr"]) for r in metrics.to_pylist()
    }
    sizes = {
        "big": (7_000_000_000, "llama, vocab 32000"),
        "small": (1_300_000_000, "llama, vocab 32000"),
        "other": (500_000_000, "qwen2, vocab 9"),
    }
    fig = scale_figure(metrics, sizes)
    assert fig._suptitle.get_text() == "MR against model size, 3 models in 2 families; no size (hosted): hosted"
    axes = [ax for ax in fig.axes if ax.get_visible()]
    settings = [kind for kind in CONFLICT_KINDS] + [f"correct_{kind}" for kind in CONFLICT_KINDS]
    assert len(axes) == len(settings) == 6
    for ax, setting in zip(axes, settings):
        lines = {c.get_label(): c.lines[0] for c in ax.containers}
        assert set(lines) == {"llama, vocab 32000 (2)", "qwen2, vocab 9 (1)"}
        llama = lines["llama, vocab 32000 (2)"]
        assert list(llama.get_xdata()) == [1_300_000_000, 7_000_000_000]  # in size order
        expected = [100 * mr.get((m, setting), (math.nan, 0))[0] for m in ("small", "big")]
        np.testing.assert_allclose(np.asarray(llama.get_ydata(), dtype=float), expected)
        assert sorted(t.get_text() for t in ax.texts) == sorted(
            f"{m}\nn_mr={mr.get((m, setting), (0, 0))[1]}" for m in ("other", "small", "big")
        )
        assert [t.get_text() for t in ax.get_xticklabels()] == ["500M", "1.3B", "7.0B"]
    plt.close(fig)


def test_entropy_interval_is_the_betting_interval_over_two_bits():
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA
    from conflictlab.conflictbank.metrics import entropy_bits, setting_metrics
    from conflictlab.stats import bounded_mean_interval

    rng = np.random.default_rng(0)
    n = 5_000
    probabilities = rng.dirichlet(np.ones(4), size=n)
    columns = {
        "record_id": np.arange(n),
        "model": ["m"] * n,
        "probabilities": pa.FixedSizeListArray.from_arrays(pa.array(probabilities.ravel()), 4),
        "predicted_letter": ["A"] * n,
        "correct_letter": ["A"] * n,
        "replaced_letter": ["B"] * n,
        "uncertain_letter": ["C"] * n,
    }
    parts = []
    for setting, size in (("default", n), ("correct", n), ("misinformation", n - 1)):  # every record scored
        table = {
            name: (values[:size] if not isinstance(values, pa.Array) else values.slice(0, size))
            for name, values in columns.items()
        }
        table["setting"] = [setting] * size
        parts.append(
            pa.Table.from_arrays(
                [
                    pa.array(table[f.name], f.type) if f.name in table else pa.nulls(size, f.type)
                    for f in PREDICTION_SCHEMA
                ],
                schema=PREDICTION_SCHEMA,
            )
        )
    rows = {r["setting"]: r for r in setting_metrics(pa.concat_tables(parts), n_resamples=50).to_pylist()}
    entropies = entropy_bits(probabilities)
    assert rows["default"]["n_scored"] == n and rows["misinformation"]["n_scored"] == n - 1
    for setting, values in (("default", entropies), ("misinformation", entropies[: n - 1])):
        expected = bounded_mean_interval(values, bounds=(0.0, 2.0))
        assert 0.0 <= expected[1] < values.mean() < expected[2] <= 2.0
        assert tuple(rows[setting][k] for k in ("entropy", "entropy_low", "entropy_high")) == pytest.approx(
            expected, rel=1e-10
        )

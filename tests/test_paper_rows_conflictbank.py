"""The ConflictBank rows against this run's tables: the paired drop in OAR that §3.3's 37.6 is compared with
(conflictlab.conflictbank.metrics.with_oar_drop), and the plan's share of comparable rows under the paper config."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conflictlab.conflictbank.metrics import ALL_RECORDS, SCORED_SUBSET, embedded_metrics, with_oar_drop
from conflictlab.paired import tango_interval
from conflictlab.paper_registries import BY_BENCHMARK
from conflictlab.report import reproduction
from conflictlab.report.paper_models import instruments, model_sources
from conflictlab.run_config import model_lists

from .test_paper_configs import effective

conflictbank = BY_BENCHMARK["conflictbank"]

SURE = [1.0, 0.0, 0.0, 0.0]
DROP_KEY = "embedded-oar-drop-mistral-7b"


def _predictions(rows, model="mistral-7b"):
    """rows: (record, setting, predicted); gold A, replaced B, uncertain D."""
    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA

    return pa.Table.from_pylist(
        [
            {
                "record_id": r,
                "setting": s,
                "model": model,
                "probabilities": SURE,
                "predicted_letter": x,
                "correct_letter": "A",
                "replaced_letter": "B",
                "uncertain_letter": "D",
            }
            for r, s, x in rows
        ],
        schema=PREDICTION_SCHEMA,
    )


def _runs():
    """Base: records 0-9 right in default and correct (the scored subset), 10-11 wrong in default. At 1:0 the
    default answers are right on 0-8; at 2:1 on 0-3 and on 9: 5 records right only at 1:0, 1 only at 2:1."""
    base = _predictions([(r, s, "A" if r < 10 else "C") for r in range(12) for s in ("default", "correct")])
    before = [(r, "default", "A" if r < 9 else "B") for r in range(12)]
    after = [(r, "default", "A" if r < 4 or r == 9 else "B") for r in range(12)]
    trained = {
        ratio: _predictions(rows + [(r, "correct", "A") for r in range(12)])
        for ratio, rows in (("1:0", before), ("2:1", after))
    }
    return base, trained


def _embedded(base, trained):
    rows = embedded_metrics(base, trained, models=["mistral-7b"], settings=["default", "correct"], n_resamples=20)
    return with_oar_drop(rows, base, trained)


def test_the_drop_is_paired_over_the_same_records_with_tangos_interval():
    out = {(r["scored_on"], r["ratio"], r["setting"]): r for r in _embedded(*_runs()).to_pylist()}
    headline = out[(SCORED_SUBSET, "2:1", "default")]
    assert headline["n_paired"] == 10
    assert (
        headline["oar_drop"]
        == pytest.approx(0.9 - 0.5)
        == pytest.approx(out[(SCORED_SUBSET, "1:0", "default")]["oar"] - headline["oar"])
    )
    assert (headline["oar_drop"], headline["oar_drop_low"], headline["oar_drop_high"]) == pytest.approx(
        tango_interval(5, 1, 10)
    )
    # records 10 and 11 are wrong in both runs: all records pairs 12, the same discordant ones
    companion = out[(ALL_RECORDS, "2:1", "default")]
    assert companion["n_paired"] == 12 and companion["oar_drop"] == pytest.approx(4 / 12)
    # no drop of a run from itself or of the untrained model
    for ratio in ("base", "1:0"):
        assert out[(SCORED_SUBSET, ratio, "default")]["oar_drop"] is None
    assert out[(SCORED_SUBSET, "2:1", "correct")]["oar_drop"] == 0.0


def test_without_the_1_0_run_the_drop_is_empty_and_disagreeing_readings_are_refused():
    base, trained = _runs()
    rows = _embedded(base, {"2:1": trained["2:1"]})
    assert rows.column("oar_drop").null_count == rows.num_rows
    assert {"oar_drop", "oar_drop_low", "oar_drop_high", "n_paired"} <= set(rows.column_names)
    twice = pa.concat_tables([trained["2:1"], _predictions([(0, "default", "B")])])
    with pytest.raises(ValueError, match=r"ratio 2:1: record 0 of mistral-7b in default is read twice"):
        _embedded(base, {**trained, "2:1": twice})
    same_twice = pa.concat_tables([trained["2:1"], _predictions([(0, "default", "A")])])
    drops = ["oar_drop", "oar_drop_low", "oar_drop_high", "n_paired"]  # embedded_metrics counts each reading
    assert _embedded(base, {**trained, "2:1": same_twice}).select(drops).equals(_embedded(base, trained).select(drops))


def _compare_drop(table_rows):
    number = next(n for n in conflictbank.numbers if n.key == DROP_KEY)
    return reproduction.compare(
        number,
        {"conflictbank_embedded": table_rows},
        {"conflictbank.models": ["mistral-7b"]},
        {"mistral-7b": "hf:mistralai/Mistral-7B-v0.1"},
        {},
    )


def _csv_rows(table: pa.Table) -> list[dict]:
    """The table as results/tables/*.csv reads back: strings, empty for a missing value."""
    return [{k: "" if v is None else str(v) for k, v in row.items()} for row in table.to_pylist()]


def test_the_37_6_row_reads_the_paired_drop_at_2_1_and_gets_a_verdict():
    row = _compare_drop(_csv_rows(_embedded(*_runs())))
    assert row["our_model"] == "mistral-7b" and row["n"] == 10
    assert row["ours"] == pytest.approx(40.0)  # points
    assert (row["low"], row["high"]) == pytest.approx([100 * v for v in tango_interval(5, 1, 10)[1:]])
    assert row["verdict"] != reproduction.NOT_COMPARABLE, row["why"]
    assert row["difference"] == pytest.approx(40.0 - 37.6)
    assert row["difference_low"] < row["difference"] < row["difference_high"]


def test_a_table_without_the_drop_names_the_missing_column():
    rows = [{k: v for k, v in r.items() if not k.startswith("oar_drop")} for r in _csv_rows(_embedded(*_runs()))]
    row = _compare_drop(rows)
    assert row["verdict"] == reproduction.NOT_COMPARABLE and "oar_drop" in row["why"]


def test_the_paper_config_can_compare_nine_in_ten_rows_not_excluded_for_human_labels():
    """As `snakemake reproduction_plan --configfile config/paper-conflictbank.yaml` plans them (the tables the
    ConflictBank rules make), at least 90% of the rows; every row whose value the paper prints is comparable."""
    config = effective("config/paper-conflictbank.yaml")
    lists, used = model_lists(config), instruments(config)
    rows = reproduction.plan(
        conflictbank.numbers,
        conflictbank.claims,
        tables_made=["conflictbank_mr", "conflictbank_embedded"],
        model_lists=lists,
        sources=model_sources(config, (*lists.values(), *used.values())),
        instruments=used,
    )
    counted = [r for r in rows if r["what"] == "row" and not reproduction.for_unreleased_human_labels(r["why_not"])]
    assert len(counted) >= 9
    assert [r["key"] for r in counted if not r["comparable"]] == []
    assert sum(r["comparable"] for r in counted) >= 0.9 * len(counted)

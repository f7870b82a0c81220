"""The cross-benchmark methods table (conflictlab.report.methods)."""

import math

import numpy as np
import pyarrow as pa
import pytest
from statsmodels.stats.proportion import proportion_confint

from conflictlab.report.methods import METHOD_CELL_SCHEMA, method_cell, methods_figure, methods_table, samples_key


def cell(method, values, ids, *, benchmark="B", metric="acc", model="m", proportion=True, higher=True):
    return method_cell(model=model, method=method, benchmark=benchmark, metric=metric, values=np.asarray(values),
                       sample_ids=ids, proportion=proportion, higher_is_better=higher, n_resamples=200)


def test_samples_key_ignores_order_and_repeats_but_not_membership():
    assert samples_key(["a", "b", "c"]) == samples_key(["c", "a", "b", "a"])
    assert samples_key(["a", "b"]) != samples_key(["a", "b", "c"])


def test_a_proportion_cell_has_the_wilson_interval_and_no_interval_below_two():
    outcomes = [1] * 27 + [0] * 13
    c = cell("base", outcomes, range(40))
    low, high = proportion_confint(27, 40, method="beta")  # proportion_ci: Clopper-Pearson since issue 50; the label is report/methods.py's
    assert (c["value"], c["n"], c["interval"]) == (27 / 40, 40, "wilson")
    assert c["ci_low"] == pytest.approx(low) and c["ci_high"] == pytest.approx(high)
    single = cell("base", [1], ["x"])
    assert single["value"] == 1.0 and math.isnan(single["ci_low"]) and math.isnan(single["ci_high"])


def test_a_mean_cell_bootstraps_and_rejects_mismatched_ids():
    c = cell("base", np.linspace(0, 1, 50), range(50), proportion=False)
    assert c["interval"] == "bootstrap" and c["ci_low"] < c["value"] < c["ci_high"]
    with pytest.raises(ValueError, match="B acc of m@base: 3 values but 2 sample ids"):
        cell("base", [1, 0, 1], ["a", "b"])


def test_marks_only_where_every_method_covers_the_same_samples():
    ids = [f"s{i}" for i in range(40)]
    cells = [
        cell("base", [1] * 20 + [0] * 20, ids),
        cell("cad-0.5", [1] * 30 + [0] * 10, ids),
        cell("adacad", [1] * 25 + [0] * 15, ids),
        # another benchmark where one method ran on fewer samples
        cell("base", [1] * 20 + [0] * 20, ids, benchmark="C"),
        cell("cad-0.5", [1] * 30 + [0] * 9, ids[:39], benchmark="C"),
    ]
    table = pa.Table.from_pylist(cells, schema=METHOD_CELL_SCHEMA)
    rows, columns, notes = methods_table(table, methods=["base", "cad-0.5", "adacad"], min_n=30)
    assert columns == [("B:acc", "B acc"), ("C:acc", "C acc")]
    partial = methods_table(pa.Table.from_pylist([*cells, cell("base", [1, 0], ["s0", "s1"], metric="bal")], schema=METHOD_CELL_SCHEMA),
                            methods=["base", "cad-0.5", "adacad"], min_n=30)[2]
    assert "m, B bal: no value for cad-0.5, adacad (no sample scored)" in partial
    by_method = {r["method"]: r for r in rows}
    assert [by_method[m]["B:acc"]["mark"] for m in ("base", "cad-0.5", "adacad")] == ["", "best", "second"]
    assert by_method["cad-0.5"]["C:acc"]["mark"] == "" and by_method["adacad"]["C:acc"] is None
    assert "m, C: not run for adacad" in notes
    assert any(n.startswith("no marks (cells cover different samples)") and "m C acc" in n for n in notes)


def test_lower_is_better_and_small_n_are_respected():
    ids = list(range(10))
    cells = [cell("base", np.full(10, 0.5), ids, proportion=False, higher=False),
             cell("cad-0.5", np.full(10, 0.2), ids, proportion=False, higher=False)]
    table = pa.Table.from_pylist(cells, schema=METHOD_CELL_SCHEMA)
    rows, _, notes = methods_table(table, methods=["base", "cad-0.5"], min_n=5)
    assert [r["B:acc"]["mark"] for r in rows] == ["second", "best"]
    rows, _, notes = methods_table(table, methods=["base", "cad-0.5"], min_n=30)
    assert [r["B:acc"]["mark"] for r in rows] == ["", ""] and any("n < 30" in n for n in notes)


def test_the_figure_has_one_panel_per_column_and_a_legend_entry_per_model():
    ids = list(range(5))
    cells = [cell(m, [1, 0, 1, 1, 0], ids, model=model, benchmark=b) for m in ("base", "cad-0.5") for model in ("m1", "m2") for b in ("B", "C")]
    fig = methods_figure(pa.Table.from_pylist(cells, schema=METHOD_CELL_SCHEMA), methods=["base", "cad-0.5"], title="t")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["B\nacc", "C\nacc"]
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == ["m1", "m2"]

"""The cross-benchmark methods table (conflictlab.report.methods)."""

import math

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats
from statsmodels.stats.proportion import proportion_confint

from conflictlab import metrics
from conflictlab.report.methods import (
    ITEMS,
    METHOD_CELL_SCHEMA,
    method_cell,
    methods_figure,
    methods_table,
    samples_key,
    with_paired,
)
from conflictlab.stats import bounded_mean_interval

# A metric spec per (proportion, higher): the registry's accuracy, faithfulness and Balance.
SPECS = {(True, True): "accuracy", (False, True): "faithfulness", (False, False): "balance"}


def cell(method, values, ids, *, benchmark="B", metric="acc", model="m", proportion=True, higher=True):
    return method_cell(
        model=model,
        method=method,
        benchmark=benchmark,
        metric=metric,
        values=np.asarray(values),
        sample_ids=ids,
        spec=metrics.get(SPECS[proportion, higher]),
        n_resamples=200,
    )


def test_samples_key_ignores_order_and_repeats_but_not_membership():
    assert samples_key(["a", "b", "c"]) == samples_key(["c", "a", "b", "a"])
    assert samples_key(["a", "b"]) != samples_key(["a", "b", "c"])


def test_a_proportion_cell_has_the_clopper_pearson_interval_and_no_interval_below_two():
    outcomes = [1] * 27 + [0] * 13
    c = cell("base", outcomes, range(40))
    low, high = proportion_confint(27, 40, method="beta")
    assert (c["value"], c["n"], c["interval"]) == (27 / 40, 40, "clopper-pearson")
    assert c["ci_low"] == pytest.approx(low) and c["ci_high"] == pytest.approx(high)
    single = cell("base", [1], ["x"])
    assert single["value"] == 1.0 and math.isnan(single["ci_low"]) and math.isnan(single["ci_high"])


def test_a_mean_cell_has_the_registry_interval_none_below_its_minimum_and_rejects_mismatched_ids():
    values = np.linspace(0, 1, 50)
    c = cell("base", values, range(50), proportion=False)
    assert c["interval"] == "betting (hedged capital)"  # a 0-1 score: the betting interval over [0, 1]
    assert (c["ci_low"], c["ci_high"]) == pytest.approx(bounded_mean_interval(values)[1:])
    half = scipy.stats.t.ppf(0.975, 49) * values.std(ddof=1) / np.sqrt(50)
    assert c["ci_low"] < 0.5 - half and c["ci_high"] > 0.5 + half  # the price of a level that holds on any shape
    near_one = cell("base", np.r_[np.ones(38), 0.2, 0.9], range(40), proportion=False)
    assert near_one["ci_high"] <= 1.0  # never past 100% (a Faithfulness bound of 101.7% was printed, issue 59)
    few = cell("base", np.linspace(0, 1, 10), range(10), proportion=False)
    assert math.isnan(few["ci_low"]) and math.isnan(few["ci_high"])  # below MIN_N_MEAN: no interval
    with pytest.raises(ValueError, match="B acc of m@base: 3 values but 2 sample ids"):
        cell("base", [1, 0, 1], ["a", "b"])


def test_paired_columns_and_best_only_where_paired_tests_say_so():
    ids = [f"s{i}" for i in range(40)]
    cells = [
        cell("base", [1] * 20 + [0] * 20, ids),
        cell("cad-0.5", [1] * 30 + [0] * 10, ids),  # base plus items 20-29
        cell("adacad", [1] * 22 + [0] * 18, ids),  # base plus items 20-21
        # another benchmark where one method ran on fewer samples
        cell("base", [1] * 20 + [0] * 20, ids, benchmark="C"),
        cell("cad-0.5", [1] * 30 + [0] * 9, ids[:39], benchmark="C"),
    ]
    paired = with_paired(cells, base="base", min_n=30)
    assert all(ITEMS not in c for c in paired)
    table = pa.Table.from_pylist(paired, schema=METHOD_CELL_SCHEMA)
    by = {(r["benchmark"], r["method"]): r for r in table.to_pylist()}
    cad = by["B", "cad-0.5"]
    assert (cad["difference"], cad["n_pairs"]) == (pytest.approx(0.25), 40)
    assert cad["p_paired"] == pytest.approx(2 * 0.5**10) and cad["p_paired_text"] == "0.0020"
    assert cad["difference_low"] < 0.25 < cad["difference_high"]
    assert by["B", "base"]["difference"] is None and by["B", "base"]["n_pairs"] is None
    assert by["C", "cad-0.5"]["n_pairs"] == 39  # the items both answered
    # cad beats base (p = 0.002) and adacad (8 discordant, p = 0.0078): both survive Holm
    rows, columns, notes = methods_table(table, methods=["base", "cad-0.5", "adacad"], min_n=30)
    assert columns == [("B:acc", "B acc"), ("C:acc", "C acc")]
    by_method = {r["method"]: r for r in rows}
    assert [by_method[m]["B:acc"]["mark"] for m in ("base", "cad-0.5", "adacad")] == ["", "best", ""]
    assert by_method["adacad"]["C:acc"] is None and "m, C: not run for adacad" in notes
    # adacad as good as cad: no best, and a note says why
    close = with_paired([*cells[:2], cell("adacad", [1] * 29 + [0] * 11, ids)], base="base", min_n=30)
    _, _, notes = methods_table(
        pa.Table.from_pylist(close, schema=METHOD_CELL_SCHEMA), methods=["base", "cad-0.5", "adacad"], min_n=30
    )
    assert any(n.startswith("no marks (no method beats every other in paired tests") for n in notes)
    partial = methods_table(
        pa.Table.from_pylist(
            with_paired([*cells, cell("base", [1, 0], ["s0", "s1"], metric="bal")], base="base", min_n=30),
            schema=METHOD_CELL_SCHEMA,
        ),
        methods=["base", "cad-0.5", "adacad"],
        min_n=30,
    )[2]
    assert "m, B bal: no value for cad-0.5, adacad (no sample scored)" in partial


def test_lower_is_better_and_small_n_are_respected():
    ids = list(range(10))
    cells = [
        cell("base", np.full(10, 0.5), ids, proportion=False, higher=False),
        cell("cad-0.5", np.full(10, 0.2), ids, proportion=False, higher=False),
    ]
    paired = with_paired(cells, base="base", min_n=5)
    cad = paired[1]
    # every difference is -0.3: no spread, so no interval; the exact sign-flip p is 2 / 2**10
    assert cad["difference"] == pytest.approx(-0.3) and cad["difference_low"] is None
    assert cad["p_paired"] == pytest.approx(2 / 1024)
    rows, _, notes = methods_table(
        pa.Table.from_pylist(paired, schema=METHOD_CELL_SCHEMA), methods=["base", "cad-0.5"], min_n=5
    )
    assert [r["B:acc"]["mark"] for r in rows] == ["", "best"]
    paired = with_paired(cells, base="base", min_n=30)
    rows, _, notes = methods_table(
        pa.Table.from_pylist(paired, schema=METHOD_CELL_SCHEMA), methods=["base", "cad-0.5"], min_n=30
    )
    assert [r["B:acc"]["mark"] for r in rows] == ["", ""] and any("n < 30" in n for n in notes)


def test_the_figure_has_one_panel_per_column_and_a_legend_entry_per_model():
    ids = list(range(5))
    cells = [
        cell(m, [1, 0, 1, 1, 0], ids, model=model, benchmark=b)
        for m in ("base", "cad-0.5")
        for model in ("m1", "m2")
        for b in ("B", "C")
    ]
    fig = methods_figure(
        pa.Table.from_pylist(with_paired(cells, base="base", min_n=5), schema=METHOD_CELL_SCHEMA),
        methods=["base", "cad-0.5"],
        title="t",
    )
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["B\nacc", "C\nacc"]
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == ["m1", "m2"]


def test_paired_markdown_says_why_a_difference_has_no_interval():
    from conflictlab.report.methods import paired_markdown

    ids = [f"s{i}" for i in range(12)]
    cells = [
        cell("base", np.linspace(0.1, 0.9, 12), ids, proportion=False),
        cell("cad-0.5", np.linspace(0.1, 0.9, 12) - 0.05, ids, proportion=False),  # every difference -0.05
        cell("adacad", np.linspace(0.1, 0.9, 12)[::-1], ids, proportion=False),
        cell("base", np.linspace(0.1, 0.9, 5), ids[:5], proportion=False, metric="bal"),
        cell("cad-0.5", np.linspace(0.2, 0.6, 5), ids[:5], proportion=False, metric="bal"),
    ]
    text = paired_markdown(
        pa.Table.from_pylist(with_paired(cells, base="base", min_n=30), schema=METHOD_CELL_SCHEMA), base="base"
    )
    assert "| B acc | -5.0 (no spread) |" in text
    assert "| B bal | -10.0 (no interval at n = 5 < 10) |" in text
    adacad = next(line for line in text.splitlines() if "| adacad | B acc |" in line)
    assert "0.0 [-" in adacad  # reversed scores: a mean difference of 0 with a real interval


def test_how_a_metric_is_compared_is_decided_once_from_the_registry():
    """Issue 59.7: the methods table decided "is a proportion" by the interval's printed name, Table 4 by the kind;
    a unit proportion (an instance's share over its two orders, kind proportion) was a proportion to one and a mean
    to the other. Both now ask metrics.paired_comparison: 0/1 outcomes only are proportions."""
    from conflictlab.benchmarks import REGISTRY

    registry = metrics.with_benchmarks(REGISTRY)
    for spec in registry.values():
        expected = "ratio" if spec.ratio else "proportion" if spec.interval == "proportion" else "mean"
        assert metrics.paired_comparison(spec) == expected, spec.name
    shares = registry["arbitration_accuracy"]
    assert shares.kind == "proportion" and metrics.paired_comparison(shares) == "mean"
    assert {metrics.paired_comparison(registry[n]) for n in ("mr", "memorisation_ratio")} == {"ratio"}
    ids = [f"i{k}" for k in range(12)]
    cells = [
        method_cell(model="m", method=method, benchmark="A", metric="acc", values=values, sample_ids=ids, spec=shares)
        for method, values in (("base", np.tile([0.5, 1.0, 0.0], 4)), ("cad", np.tile([1.0, 1.0, 0.5], 4)))
    ]
    compared = with_paired(cells, base="base", min_n=2)[1]
    assert compared["paired_test"].startswith("sign-flip") and compared["difference"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="ratio metric"):
        method_cell(
            model="m",
            method="base",
            benchmark="A",
            metric="MR",
            values=np.ones(3),
            sample_ids=ids[:3],
            spec=registry["mr"],
        )

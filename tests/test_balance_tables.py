"""The Balance summaries on hand-computed attribution rows: Balance table,
position shares, Table 3's summary, Table 6 and the shuffle tables."""

import json
import math

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import kendalltau, spearmanr

from conflictlab.contextconflict.balance import (
    ATTRIBUTION_SCHEMA,
    position_shares,
    scorer_robustness,
    shuffled_shares,
    summarize_balance,
    summarize_causal,
)
from conflictlab.stats import proportion_interval


def attribution(
    sample_id, *, model="g", scorer="s", conflict_type="perspective", subset="allsides", shares=(0.5, 0.5), balance=1.0
):
    undefined = shares is None
    n = 2 if undefined else len(shares)
    return {
        "sample_id": sample_id,
        "model": model,
        "scorer": scorer,
        "conflict_type": conflict_type,
        "subset": subset,
        "n_evidence": n,
        "method": "exact",
        "phi": [0.0] * n,
        "phi_se": None,
        "shares": None if undefined else list(shares),
        "balance": None if undefined else balance,
        "gini": None if undefined else 1.0 - balance,
        "undefined": undefined,
        "v_empty": 0.0,
        "v_full": 0.0,
    }


def table(rows):
    return pa.Table.from_pylist(rows, schema=ATTRIBUTION_SCHEMA)


def test_summarize_balance_means_counts_and_undefined():
    rows = [
        attribution("a", balance=0.2, subset="allsides"),
        attribution("b", balance=0.6, subset="perspectrum"),
        attribution("c", shares=None, subset="perspectrum"),
    ]
    out = {r["group"]: r for r in summarize_balance(table(rows), n_resamples=200).to_pylist()}
    assert out["all"]["balance"] == pytest.approx(0.4) and (out["all"]["n_scored"], out["all"]["n_undefined"]) == (3, 1)
    assert out["perspectrum"]["balance"] == pytest.approx(0.6) and out["perspectrum"]["n_undefined"] == 1
    assert math.isnan(out["allsides"]["ci_low"]) and math.isnan(out["allsides"]["ci_high"])  # one value: no interval
    assert out["all"]["gini_paper_code"] == pytest.approx(0.6)


def test_position_shares_by_input_position_against_chance():
    rows = [
        attribution("a", shares=(0.7, 0.2, 0.1)),
        attribution("b", shares=(0.3, 0.6, 0.1)),
        attribution("c", shares=None),
    ]
    out = position_shares(table(rows), n_resamples=100).to_pylist()
    assert [r["position"] for r in out] == [1, 2, 3]
    assert [r["mean_share"] for r in out] == pytest.approx([0.5, 0.4, 0.1])
    assert all(r["chance"] == pytest.approx(1 / 3) and r["n_samples"] == 2 for r in out)


def test_summarize_causal_per_type_and_overall():
    causal = pa.Table.from_pylist(
        [
            {"model": "g", "conflict_type": "perspective", "delta_high": 0.5, "delta_low": 0.1},
            {"model": "g", "conflict_type": "perspective", "delta_high": 0.1, "delta_low": 0.3},
            {"model": "g", "conflict_type": "ambiguity", "delta_high": 0.4, "delta_low": 0.0},
        ]
    )
    out = {r["conflict_type"]: r for r in summarize_causal(causal, n_resamples=100).to_pylist()}
    assert out["perspective"]["delta_high"] == pytest.approx(0.3) and out["perspective"]["frac_high_gt_low"] == 0.5
    assert out["all"]["n"] == 3 and out["all"]["frac_high_gt_low"] == pytest.approx(2 / 3)
    assert (out["all"]["frac_ci_low"], out["all"]["frac_ci_high"]) == pytest.approx(proportion_interval(2, 3)[1:])
    assert math.isnan(out["ambiguity"]["frac_ci_low"]) and math.isnan(out["ambiguity"]["delta_high_ci_low"])  # n = 1
    assert out["all"]["delta_low"] == pytest.approx(0.4 / 3)


def test_table6_cells_and_agreement_against_scipy():
    balance_a = {"1": 0.1, "2": 0.5, "3": 0.3, "4": 0.9}
    balance_b = {"1": 0.2, "2": 0.4, "3": 0.35, "4": 0.6}
    rows = []
    for scorer, values in (("A", balance_a), ("B", balance_b)):
        for sid, value in values.items():
            conflict_type = "perspective" if sid in "123" else "ambiguity"
            rows.append(attribution(sid, scorer=scorer, conflict_type=conflict_type, balance=value))
        rows.append(attribution("u", scorer=scorer, shares=None))  # undefined: left out
    rows.append(attribution("x", model="h", scorer="A", conflict_type="granularity", balance=0.7))  # no B row
    rows.append(attribution("x", model="h", scorer="B", conflict_type="granularity", balance=0.8))
    cells, agreement = scorer_robustness(table(rows))
    cell = {(r["model"], r["conflict_type"]): r for r in cells.to_pylist()}
    assert cell[("g", "perspective")]["balance[A]"] == pytest.approx(0.3)
    assert cell[("g", "perspective")]["balance[B]"] == pytest.approx(0.95 / 3)
    assert cell[("h", "granularity")]["balance[B]"] == pytest.approx(0.8)
    levels = {r["level"]: r for r in agreement.to_pylist()}
    x, y = [0.9, 0.3, 0.7], [0.6, 0.95 / 3, 0.8]  # cells sorted (g, ambiguity), (g, perspective), (h, granularity)
    assert levels["generator x type cells"]["n"] == 3
    assert levels["generator x type cells"]["kendall_tau"] == pytest.approx(kendalltau(x, y).statistic)
    # n = 3: the exact p-value (2 of 3! orderings as extreme), not the t approximation's
    assert levels["generator x type cells"]["spearman_p"] == pytest.approx(1.0)
    assert levels["generator x type cells"]["p_method"] == "exact" and levels["generator x type cells"][
        "p_floor"
    ] == pytest.approx(1 / 3)
    assert (
        levels["perspective"]["spearman_p"]
        == pytest.approx(1 / 3)
        != spearmanr([0.1, 0.5, 0.3], [0.2, 0.4, 0.35]).pvalue
    )
    # the headline row comes first: pairs within one (generator, type) only (g's perspective 3; the others have one
    # response each); the stratification by type alone beside it
    first, second = agreement.to_pylist()[:2]
    assert first["level"] == "within generator x type" and first["n"] == 3
    assert second["level"] == "within types" and second["n"] == 3
    assert first["kendall_tau"] == pytest.approx(kendalltau([0.1, 0.5, 0.3], [0.2, 0.4, 0.35]).statistic)
    assert cell[("g", "perspective")]["n[A]"] == 3
    within = levels["perspective"]
    assert within["n"] == 3 and within["spearman_rho"] == pytest.approx(
        spearmanr([0.1, 0.5, 0.3], [0.2, 0.4, 0.35]).statistic
    )
    assert levels["ambiguity"]["n"] == 1 and math.isnan(levels["ambiguity"]["kendall_tau"])  # too few to rank


def test_shuffled_shares_by_presented_position_and_original_piece():
    # presented order (what the scorer saw) and the permutation: position j shows piece perm[j]
    rows = [attribution("a", shares=(0.6, 0.3, 0.1)), attribution("b", shares=(0.2, 0.2, 0.6))]
    perms = {"a": [2, 0, 1], "b": [0, 1, 2]}
    samples = pa.Table.from_pylist(
        [{"sample_id": k, "extras": json.dumps({"shuffle_permutation": v})} for k, v in perms.items()]
    )
    presented, original = shuffled_shares(table(rows), samples, n_resamples=100)
    assert [r["mean_share"] for r in presented.to_pylist()] == pytest.approx([0.4, 0.25, 0.35])
    # a: piece 2 got 0.6, piece 0 got 0.3, piece 1 got 0.1
    assert [r["mean_share"] for r in original.to_pylist()] == pytest.approx(
        [(0.3 + 0.2) / 2, (0.1 + 0.2) / 2, (0.6 + 0.6) / 2]
    )
    assert "original_piece" in original.column_names and np.isclose(
        sum(r["mean_share"] for r in original.to_pylist()), 1.0
    )


def test_position_pies_over_generators_one_row_each_with_its_shares_and_n():
    import matplotlib.pyplot as plt
    import pyarrow.compute as pc

    from conflictlab.contextconflict.figures import position_share_pies

    rows = [
        attribution("1", model="g1", shares=(0.6, 0.4)),
        attribution("2", model="g1", shares=(0.8, 0.2)),
        attribution("3", model="g2", shares=(0.3, 0.7)),
        attribution("4", model="g2", conflict_type="ambiguity", subset="root", shares=(0.9, 0.1)),
    ]
    positions = position_shares(table(rows), n_resamples=50, seed=0)
    fig = position_share_pies(positions, title="t")
    axes = fig.axes
    assert len(axes) == 4  # 2 generators x 2 types; g1 has no ambiguity pie
    assert not axes[0].get_visible() and [ax.get_visible() for ax in axes[1:]] == [True, True, True]
    titles = [ax.get_title() for ax in axes[1:]]
    assert titles == [
        "g1\nperspective (n=2, 2 samples; chance 50.0% each)",
        "g2\nambiguity (n=2, 1 samples; chance 50.0% each)",
        "g2\nperspective (n=2, 1 samples; chance 50.0% each)",
    ]
    wedges = [[w.theta2 - w.theta1 for w in ax.patches] for ax in axes[1:]]
    np.testing.assert_allclose(wedges, [[252.0, 108.0], [324.0, 36.0], [108.0, 252.0]])  # 360 x mean share: g1 0.7/0.3
    plt.close(fig)
    one = position_share_pies(positions.filter(pc.equal(positions.column("model"), "g1")), title="t", name_rows=True)
    assert [ax.get_title() for ax in one.axes if ax.get_visible()] == [titles[0]]
    plt.close(one)

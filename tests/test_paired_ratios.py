"""conflictlab.paired_ratios: a memorisation ratio compared between two runs over every item (issue 59, item 1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
import pytest

from conflictlab.nq_swap.metrics import SCORE_SCHEMA
from conflictlab.nq_swap.report import paired_cells
from conflictlab.paired import pair_on_ids, paired_difference
from conflictlab.paired_ratios import (
    MIN_N_PAIRED_RATIO,
    PSEUDO_ITEMS,
    best_by_ratio_tests,
    paired_ratio_interval,
    ratio_items,
    swap_p,
)

STATES = {"org": (1.0, 1.0), "sub": (0.0, 1.0), "none": (0.0, 0.0)}  # (numerator, denominator) per item


def issue_example() -> pa.Table:
    """Issue 59's 2,000 items: greedy repeats the memorised answer on 517 items and the substituted one on 1,018
    (MR 0.337); the method stops repeating the memorised answer on half of those 517 (258 answer neither) and
    gives the substituted answer on 272 items greedy matched with neither (MR 0.167). The items it changed away
    from the memorised answer match no answer, so a comparison over the items matched in both runs never sees
    them."""
    rows = []
    for i in range(2000):
        greedy = "org" if i < 517 else "sub" if i < 1535 else "none"
        method = "none" if i < 258 else "sub" if 1535 <= i < 1535 + 272 else greedy
        for run, state in (("greedy", greedy), ("cfp-opin", method)):
            rows.append(
                {
                    "item_id": f"q{i}",
                    "model": "m",
                    "run": run,
                    "answer": state,
                    "em_sub": state == "sub",
                    "em_org": state == "org",
                }
            )
    return pa.Table.from_pylist(rows, schema=SCORE_SCHEMA)


def test_issue_example_reports_the_real_difference():
    cells = {(r["method"], r["metric"]): r for r in paired_cells(issue_example(), min_n=10).to_pylist()}
    greedy, method = cells["greedy", "MR"], cells["cfp-opin", "MR"]
    assert greedy["value"] == pytest.approx(517 / 1535) and method["value"] == pytest.approx(259 / 1549)
    assert method["difference"] == pytest.approx(259 / 1549 - 517 / 1535)  # -17.0 points
    assert method["difference_high"] < 0  # the interval excludes 0
    assert -0.19 < method["difference_low"] < method["difference_high"] < -0.15
    assert method["p_paired"] < 1e-3 and method["n_pairs"] == 2000  # every item, matched or not
    assert method["paired_test"].startswith("swap permutation")


def test_issue_example_outcome_selected_pairs_see_no_difference():
    """What the table printed before: the pairs of items matched in both runs hide the change (+0.0, p = 1)."""
    frame = issue_example().to_pylist()
    matched = {
        run: [(r["item_id"], float(r["em_org"])) for r in frame if r["run"] == run and (r["em_org"] or r["em_sub"])]
        for run in ("greedy", "cfp-opin")
    }
    ids_x, x = zip(*matched["cfp-opin"])
    ids_y, y = zip(*matched["greedy"])
    _, x, y = pair_on_ids(ids_x, x, ids_y, y)
    before = paired_difference(x, y, proportion=True)
    assert before["difference"] == 0.0 and before["p_paired"] == 1.0 and before["n_pairs"] == 1277
    # an interval across 0 that says nothing (+-0.3 points printed before Tango gained Laud's skewness term)
    assert before["difference_low"] < 0.0 < before["difference_high"] <= 0.004


def _items(states) -> np.ndarray:
    return np.array([STATES[s] for s in states])


def test_interval_is_the_delta_method_of_the_pseudo_augmented_table():
    """Checked against a numerical gradient of the difference of two ratios of the 3 x 3 cell shares, the
    multinomial covariance of the shares with half a pseudo-item per cell, and Student's t quantile."""
    from scipy import stats

    rng = np.random.default_rng(3)
    names = list(STATES)
    gx, gy = rng.choice(names, 60, p=[0.3, 0.5, 0.2]), rng.choice(names, 60, p=[0.2, 0.5, 0.3])
    x, y = _items(gx), _items(gy)
    diff, low, high = paired_ratio_interval(x, y)
    counts = np.zeros((3, 3))
    for a, b in zip(gx, gy):
        counts[names.index(a), names.index(b)] += 1

    def f(p):  # difference of ratios from the 9 cell shares, p[i, j]: state i under x, j under y
        p = p.reshape(3, 3)
        return p[0].sum() / (p[0].sum() + p[1].sum()) - p[:, 0].sum() / (p[:, 0].sum() + p[:, 1].sum())

    shares = counts.ravel() / 60
    gradient = np.array([(f(shares + h) - f(shares - h)) / 2e-7 for h in np.eye(9) * 1e-7])
    weights = (counts.ravel() + PSEUDO_ITEMS) / (60 + 9 * PSEUDO_ITEMS)
    covariance = np.diag(weights) - np.outer(weights, weights)
    half = stats.t.ppf(0.975, 59) * math.sqrt(gradient @ covariance @ gradient / 60)
    assert diff == pytest.approx(f(shares))
    assert (low, high) == pytest.approx((diff - half, diff + half), abs=1e-6)


def test_interval_edges():
    same = _items(["org", "sub", "none"] * 5)
    diff, low, high = paired_ratio_interval(same, same)
    assert diff == 0.0 and low < 0 < high  # no change observed: still an interval (the pseudo-items), never a point
    few = _items(["org", "sub"] * 4)
    assert math.isnan(paired_ratio_interval(few, few)[1]) and len(few) < MIN_N_PAIRED_RATIO
    unmatched = _items(["none"] * 12)
    assert all(math.isnan(v) for v in paired_ratio_interval(unmatched, same[:12]))
    with pytest.raises(ValueError, match="numerator <= denominator"):
        ratio_items([1, 0], [0, 1])


def test_swap_p_matches_brute_force_over_every_item():
    rng = np.random.default_rng(0)
    names = list(STATES)
    x, y = _items(rng.choice(names, 9)), _items(rng.choice(names, 9))

    def d(a, b):
        return a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum()

    observed, hits = abs(d(x, y)), 0
    for swaps in itertools.product((0, 1), repeat=9):  # every item swapped or not, concordant ones included
        s = np.array(swaps, dtype=bool)[:, None]
        a, b = np.where(s, y, x), np.where(s, x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = abs(d(a, b))
        hits += not np.isfinite(value) or value >= observed - 1e-12
    p, drawn = swap_p(x, y)
    assert drawn is None and p == pytest.approx(hits / 2**9)
    assert swap_p(x, x) == (1.0, None)


def test_swap_p_draws_at_many_changed_items():
    x = _items(["org"] * 30 + ["sub"] * 30)
    y = _items(["sub"] * 30 + ["sub"] * 30)
    p, drawn = swap_p(x, y, n_resamples=2000)
    assert drawn == 2000 and p < 0.01


def test_best_mark_uses_every_item():
    table = issue_example().to_pylist()
    ids, items = [], []
    for run in ("greedy", "cfp-opin"):
        rows = [r for r in table if r["run"] == run]
        ids.append([r["item_id"] for r in rows])
        items.append(ratio_items([r["em_org"] for r in rows], [r["em_org"] or r["em_sub"] for r in rows]))
    assert best_by_ratio_tests(ids, items, higher_is_better=False) == 1
    assert best_by_ratio_tests(ids, items, higher_is_better=True) == 0  # greedy's ratio is the higher one
    assert best_by_ratio_tests([ids[0]] * 2, [items[0]] * 2, higher_is_better=False) is None  # no run beats itself


def _coverage(cells: np.ndarray, n: int, samples: int, seed: int = 0) -> tuple[float, int]:
    """Coverage of the interval of the difference (y-state ratio − x-state ratio) when each item falls in cell
    (i, j) of ``cells`` (3 x 3 probabilities: state i under y, j under x), over the samples that print one."""
    rng = np.random.default_rng(seed)
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([1.0, 1.0, 0.0])
    truth = (cells.sum(1) @ a) / (cells.sum(1) @ b) - (cells.sum(0) @ a) / (cells.sum(0) @ b)
    states = np.array(list(STATES.values()))
    hits = shown = 0
    for _ in range(samples):
        k = rng.choice(9, size=n, p=cells.ravel())
        _, low, high = paired_ratio_interval(states[k // 3], states[k % 3])
        if not math.isnan(low):
            shown += 1
            hits += low <= truth <= high
    return hits / shown, shown


def ratio_shapes() -> dict[str, np.ndarray]:
    """3 x 3 joint shares (method state, greedy state) of the coverage checks: the issue's shape, sparse one-way
    changes, a low match rate, MR near 0, changes both ways (benchmarks/ratio_coverage.py has more)."""

    def moved(greedy, moves):
        cells = np.diag(greedy).astype(float)
        for (source, target), share in moves.items():
            cells[target, source] += share * greedy[source]
            cells[source, source] -= share * greedy[source]
        return cells

    return {
        "issue-like": moved((0.26, 0.51, 0.23), {(0, 2): 0.5, (2, 1): 0.58}),
        "few changes": moved((0.3, 0.5, 0.2), {(0, 1): 0.05}),
        "low match": moved((0.05, 0.10, 0.85), {(0, 2): 0.5, (2, 1): 0.02, (1, 2): 0.2}),
        "MR near 0": moved((0.03, 0.67, 0.30), {(0, 1): 0.5, (1, 0): 0.01, (2, 1): 0.1}),
        "both ways": moved((0.3, 0.4, 0.3), {(0, 1): 0.3, (1, 0): 0.3, (0, 2): 0.2, (2, 0): 0.2, (1, 2): 0.2}),
    }


@pytest.mark.parametrize("n", [MIN_N_PAIRED_RATIO, 30, 100, 300])
def test_interval_covers_from_its_minimum_n(n):
    for name, cells in ratio_shapes().items():
        coverage, shown = _coverage(cells, n, samples=1500)
        assert shown > 500, name
        assert coverage >= 0.93, (name, n, coverage)

"""Every caption names only the interval and test methods its table computes (issue 59, item 7).

While a table is built, each interval or test function of the caption registry
(:data:`conflictlab.metrics.METHOD_LABELS`) is spied on wherever a conflictlab
module binds it; the method names found in the caption must be among those
called. Names no function here computes any more (Newcombe, Agresti-Min, Wald)
are in the vocabulary too, so a caption that still prints one fails."""

from __future__ import annotations

import functools
import re
import sys

import numpy as np
import pyarrow as pa
import pytest

from conflictlab import metrics
from conflictlab.contextconflict.accuracy import accuracy_caption, summarize_accuracy
from conflictlab.contextconflict.balance import summarize_causal, table3_caption
from conflictlab.memotrap.tables import accuracy_caption as memotrap_caption
from conflictlab.memotrap.tables import accuracy_table
from conflictlab.nq_swap import report as nq_swap
from conflictlab.report.methods import METHOD_CELL_SCHEMA, method_cell, paired_markdown, with_paired
from tests.test_paired_ratios import issue_example

VOCABULARY = sorted({*metrics.METHOD_LABELS.values(), "Newcombe", "Agresti-Min", "Wald"}, key=len, reverse=True)


def named(caption: str) -> set[str]:
    """The method names of :data:`VOCABULARY` in ``caption``, longest first (so "bootstrap-t" is not also "t")."""
    found, text = set(), caption
    for name in VOCABULARY:
        pattern = re.compile(re.escape(name), re.IGNORECASE)
        if pattern.search(text):
            found.add(name)
            text = pattern.sub(" ", text)
    return found


@pytest.fixture
def called(monkeypatch) -> set[str]:
    """The caption names of the registered functions called while the test runs."""
    seen: set[str] = set()
    for module in [m for name, m in sys.modules.items() if name.startswith("conflictlab")]:
        for attribute, value in list(vars(module).items()):
            label = metrics.METHOD_LABELS.get(getattr(value, "__name__", None))
            if label is None or not callable(value):
                continue

            def spy(*args, _function=value, _label=label, **kwargs):
                seen.add(_label)
                return _function(*args, **kwargs)

            monkeypatch.setattr(module, attribute, functools.wraps(value)(spy))
    return seen


def assert_names_computed(caption: str, called: set[str]):
    assert named(caption), caption  # a caption that names no method says nothing about its intervals
    assert named(caption) <= called, (named(caption) - called, caption)


def test_memotrap_caption(called):
    rows = [
        {
            "model": "m",
            "method": method,
            "item_id": f"i{k}",
            "file": "f",
            "correct": bool(k % (2 + (method == "cad"))),
            "exact_match": bool(k % 3),
        }
        for method in ("greedy", "cad")
        for k in range(20)
    ]
    accuracy_table(pa.Table.from_pylist(rows))
    assert_names_computed(memotrap_caption(), called)


def test_nq_swap_caption(called):
    nq_swap.paired_cells(issue_example(), min_n=10)
    assert_names_computed(nq_swap.caption(2000, ["cfp-opin"], None), called)


def test_paired_markdown_caption_over_all_three_comparisons(called):
    rng = np.random.default_rng(0)
    cells = []
    for method in ("base", "cad"):
        ids = [f"i{k}" for k in range(40)]
        for name, values in (("accuracy", rng.integers(0, 2, 40)), ("balance", rng.uniform(0, 1, 40))):
            spec = metrics.get(name)
            cells.append(
                method_cell(
                    model="m", method=method, benchmark="B", metric=name, values=values, sample_ids=ids, spec=spec
                )
            )
    cells += [c for c in nq_swap.cells(issue_example()) if c["metric"] == nq_swap.MR]
    for c in cells[-2:]:
        c["method"] = "base" if c["method"] == "greedy" else "cad"
    table = pa.Table.from_pylist(with_paired(cells, base="base", min_n=10), schema=METHOD_CELL_SCHEMA)
    assert_names_computed(paired_markdown(table, base="base").split("\n")[0], called)


def test_table3_caption(called):
    rng = np.random.default_rng(1)
    rows = [
        {"model": "g", "conflict_type": "perspective", "delta_high": h, "delta_low": low}
        for h, low in zip(rng.lognormal(0, 1, 320), rng.lognormal(0, 1, 320))
    ]
    summarize_causal(pa.Table.from_pylist(rows), n_resamples=199)
    assert_names_computed(table3_caption(), called)


def test_contextconflict_accuracy_caption(called):
    rows = [
        {
            "model": "m",
            "conflict_type": "temporal",
            "subset": "s",
            "implicit": bool(k % 2),
            "status": "ok",
            "correct": bool(k % 3),
            "tag_found": True,
            "rule": "label",
        }
        for k in range(12)
    ]
    summarize_accuracy(pa.Table.from_pylist(rows))
    assert_names_computed(accuracy_caption("verbatim match only"), called)


def test_a_caption_naming_a_method_not_computed_fails(called):
    summarize_accuracy(
        pa.Table.from_pylist(
            [
                {
                    "model": "m",
                    "conflict_type": "t",
                    "subset": "s",
                    "implicit": False,
                    "status": "ok",
                    "correct": True,
                    "tag_found": True,
                    "rule": "label",
                }
            ]
            * 3
        )
    )
    with pytest.raises(AssertionError):
        assert_names_computed("accuracy [Wilson 95% CI]", called)
    with pytest.raises(AssertionError):
        assert_names_computed("difference with Newcombe's paired interval", called)

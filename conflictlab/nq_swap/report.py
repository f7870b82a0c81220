"""The NQ-Swap table: every run of every model as a row, exact match and the memorisation ratio as columns.

Cells are :data:`conflictlab.report.methods.METHOD_CELL_SCHEMA` rows (benchmark
``NQ-Swap``), so the table, its CSV, the paired comparisons and the figure are
the methods table's own code (:mod:`conflictlab.report.methods`):

* ``EM sub``: exact match with the substituted answer, over every item (higher is better);
* ``EM org``: exact match with the original answer, over every item (lower is better
  in a substituted context: the model repeats its memory);
* ``MR``: the memorisation ratio EM_org / (EM_org + EM_sub) over the items whose answer
  matches either (its n is theirs; lower is better).

All three are proportions: Clopper-Pearson intervals. Every row is compared with
the model's ``greedy`` row (the substituted context, greedy decoding) on the items
both answered: EM sub and EM org by the exact McNemar p and Tango's score
interval; MR as a ratio over *every* item both answered
(:mod:`conflictlab.paired_ratios`: a swap-permutation p and a delta-method
interval), never over the items that match an answer in both runs, which a
method that stops repeating the memorised answer would empty of exactly the
items it changed. The marks compare the methods and the baseline only:
``closed_book`` and ``original`` are settings, not methods, and get no mark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.benchmarks.nq_swap import BENCHMARK as DESCRIPTOR
from conflictlab.lm.methods import GREEDY
from conflictlab.nq_swap.runs import CLOSED_BOOK, ORIGINAL, is_reference
from conflictlab.paired_ratios import ratio_items
from conflictlab.report.methods import (
    METHOD_CELL_SCHEMA,
    method_cell,
    methods_figure,
    methods_table,
    paired_markdown,
    with_paired,
)

BENCHMARK = "NQ-Swap"
EM_SUB, EM_ORG, MR = "EM sub", "EM org", "MR"
# each column's spec (interval, direction) from the descriptor's metrics
SPECS = dict(zip((EM_SUB, EM_ORG, MR), DESCRIPTOR.metrics))


def cells(scores: pa.Table) -> list[dict]:
    """Unpaired cells (with their per-item values) of every (model, run) in
    ``scores`` (:data:`conflictlab.nq_swap.metrics.SCORE_SCHEMA`), in order of appearance."""
    out = []
    frame = pl.from_arrow(scores)
    for (model, run), group in frame.group_by("model", "run", maintain_order=True):
        matched = group.filter(pl.col("em_sub") | pl.col("em_org"))
        # MR's paired comparison takes every item: (EM_org, EM_org or EM_sub) per item (conflictlab.paired_ratios)
        ratio = ratio_items(group["em_org"].to_numpy(), (group["em_org"] | group["em_sub"]).to_numpy(), what=MR)
        for metric, rows, column in ((EM_SUB, group, "em_sub"), (EM_ORG, group, "em_org"), (MR, matched, "em_org")):
            out.append(
                method_cell(
                    model=model,
                    method=run,
                    benchmark=BENCHMARK,
                    metric=metric,
                    values=rows[column].cast(pl.Float64).to_numpy(),
                    sample_ids=rows["item_id"].to_list(),
                    spec=SPECS[metric],
                    paired_items=(group["item_id"].to_list(), ratio) if metric == MR else None,
                )
            )
    return out


def paired_cells(scores: pa.Table, *, min_n: int, seed: int = 0) -> pa.Table:
    """:data:`METHOD_CELL_SCHEMA` table: :func:`cells` with the paired columns against each
    model's ``greedy`` row, best marks among the methods and the baseline only (n ≥ ``min_n``)."""
    unpaired = cells(scores)
    methods = [c for c in unpaired if not is_reference(c["method"])]
    out = with_paired(methods, base=GREEDY, min_n=min_n, seed=seed)
    references = [c for c in unpaired if is_reference(c["method"])]
    if references:
        baselines = [c for c in unpaired if c["method"] == GREEDY]
        # an infinite minimum n: the settings are compared with the baseline, never marked
        compared = with_paired(references + baselines, base=GREEDY, min_n=math.inf, seed=seed)
        out = [c for c in compared if c["method"] != GREEDY] + out
    return pa.Table.from_pylist(out, schema=METHOD_CELL_SCHEMA)


def run_order(table: pa.Table) -> list[str]:
    """Row order within a model block: the settings, the baseline, then the other runs as they appear."""
    runs = table.column("method").to_pylist()
    return list(dict.fromkeys([CLOSED_BOOK, ORIGINAL, GREEDY, *runs]))


def caption(n_items: int, methods: Sequence[str], steering: str | None) -> str:
    intervals = " / ".join(dict.fromkeys(metrics.interval_label(spec) for spec in SPECS.values()))
    return (
        f"NQ-Swap ({n_items} items), per model (%): closed-book, original-context and substituted-context (greedy, "
        "the baseline) answers, then each resolution method on the substituted context "
        f"({', '.join(methods) or 'none'}{'; steering ' + steering if steering else ''}). EM sub / EM org: SQuAD-"
        "normalised exact match with the substituted / original answer over every item; MR: memorisation ratio "
        "EM_org / (EM_org + EM_sub) over the items whose answer matches either (its n). Context-faithful prompts "
        "run zero-shot; CAD and AdaCAD contrast with the closed-book prompt (original-<method>: on the original "
        "context, CAD's NQ column); steering (cas-a<alpha>) adds a "
        "with-context minus closed-book direction computed on the other folds' items. Cells: value "
        f"[95% {intervals} CI] (n). Best bold among the methods and greedy only where one beats every other in "
        "paired tests (Holm-corrected, 5%). Below: each row's paired difference from greedy."
    )


def markdown(table: pa.Table, *, caption_text: str, min_n: int) -> str:
    from conflictlab.report.tables import marked_markdown

    rows, columns, notes = methods_table(table, methods=run_order(table), min_n=min_n)
    return (
        marked_markdown(rows, ["model", "method"], columns, caption=caption_text, notes=notes)
        + "\n"
        + paired_markdown(table, base=GREEDY)
    )


def figure(table: pa.Table):
    return methods_figure(table, methods=run_order(table), title="NQ-Swap (95% CIs)")

"""The metric registry: one spec per metric (:class:`conflictlab.specs.Metric`), and the
interval each kind of metric gets.

Which interval a number gets, from which n it is printed and whether a best
mark may fall on it are read from here by the table writers, the methods
table, the profile page and the statistics tests; a metric is added in one
place: :data:`CORE` here, or a benchmark's own in its descriptor's
``metrics`` (conflictlab/benchmarks/<name>.py), which :func:`with_benchmarks` joins.
The interval functions themselves live in :mod:`conflictlab.stats` and
:mod:`conflictlab.paired`; a spec names them through :data:`INTERVALS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflictlab import stats
from conflictlab.specs import Benchmark, Metric

# How a spec's interval is computed, by its key: the function in conflictlab.stats.
# "proportion": 0/1 outcomes (stats.proportion_interval: the one proportion interval of every table);
# "unit-proportion": shares of units in [0, 1] (an instance asked in both evidence orders);
# "bounded-mean": graded scores within a known range (SCORE_RANGES), the betting interval, whose coverage
# holds for every shape within the range (point masses at its ends, where Student-t fell to 0.78);
# "mean": unbounded graded scores, Student-t, none below the spec's min_n_interval or without spread;
# "bootstrap": a percentile interval of resampled statistics (agreement over items); "none": no interval.
INTERVALS = {
    "proportion": stats.proportion_interval,
    "unit-proportion": stats.unit_proportion_interval,
    "bounded-mean": stats.bounded_mean_interval,
    "mean": stats.mean_interval,
    "bootstrap": stats.percentile_interval,
    "none": None,
}

# The name a table prints for an interval function (the methods table's `interval` column among them).
METHOD_NAMES = {
    "clopper_pearson_interval": "clopper-pearson",
    "wilson_interval": "wilson",
    "unit_proportion_interval": "clopper-pearson over units",
    "bounded_mean_interval": "betting (hedged capital)",
    "mean_interval": "student-t",
    "percentile_interval": "percentile bootstrap",
}

# The name a caption prints for each interval or test function, by the function's own name: captions take it
# from the function they call (method_label), so no caption names a method other than the one computed
# (tests/test_captions.py spies on these functions while each table is built).
METHOD_LABELS = {
    "clopper_pearson_interval": "Clopper-Pearson",
    "wilson_interval": "Wilson",
    "unit_proportion_interval": "Clopper-Pearson over units",
    "mean_interval": "Student-t",
    "percentile_interval": "percentile bootstrap",
    "bootstrap_t_interval": "bootstrap-t",
    "skewed_mean_interval": "bootstrap-t",
    "tango_interval": "Tango's score",
    "mcnemar_exact": "exact McNemar",
    "adjusted_mean_interval": "adjusted t",
    "sign_flip_p": "sign-flip",
    "paired_ratio_interval": "delta-method t over all items",
    "swap_p": "swap permutation",
}

_proportion = dict(unit="proportion", kind="proportion", interval="proportion", min_n_interval=stats.MIN_N_INTERVAL)
# A score in [0, 1]: the betting interval (docs/statistics.md: Student-t covered 0.78-0.91 at n = 30 on
# the point masses these scores have: Balance 1 for one piece, shares 0 or 1, Faithfulness 0 or 1).
_bounded = dict(kind="mean", interval="bounded-mean", min_n_interval=stats.MIN_N_MEAN)
# Instance shares over the two evidence orders take 0, 1/2 or 1: Clopper-Pearson over units (Student-t
# covered 0.85 at accuracy 0.95, n = 50, and printed "no spread" when every instance was right).
_shares = dict(kind="mean", interval="unit-proportion", min_n_interval=stats.MIN_N_INTERVAL)

# The range a score lies in, by its unit: the betting interval needs it, and every interval is clipped to it.
SCORE_RANGES = {"proportion": (0.0, 1.0), "0-1 score": (0.0, 1.0), "0-1 share": (0.0, 1.0)}

# Every metric the four first benchmarks print. min_n_mark None: the config's statistics.min_n_mark decides.
CORE = (
    Metric(
        "accuracy", better="higher", min_n_mark=None, description="share of answers matching the gold", **_proportion
    ),  # fmt: skip
    Metric(
        "balance",
        unit="0-1 score",
        better="lower",
        min_n_mark=None,
        description="Gini of a response's evidence attributions (0 even use, 1 one piece)",
        **_bounded,
    ),  # fmt: skip
    Metric(
        "faithfulness",
        unit="0-1 score",
        better="higher",
        min_n_mark=None,
        description="RAGAS Faithfulness of a judged response",
        **_bounded,
    ),  # fmt: skip
    Metric(
        "grounding",
        unit="0-1 score",
        better="higher",
        min_n_mark=None,
        description="FACTS grounding of a CONFLICTS response",
        **_bounded,
    ),  # fmt: skip
    Metric(
        "position_share",
        unit="0-1 share",
        better="none",
        min_n_mark=None,
        description="mean share of a response's attribution on one evidence position",
        **_bounded,
    ),  # fmt: skip
    Metric(
        "expected_behaviour",
        better="higher",
        min_n_mark=None,
        description="share of CONFLICTS responses with the category's expected behaviour",
        **_proportion,
    ),  # fmt: skip
    Metric(
        "answer_recall",
        better="higher",
        min_n_mark=None,
        description="share of CONFLICTS responses that recall a gold answer",
        **_proportion,
    ),  # fmt: skip
    Metric(
        "type_accuracy",
        better="higher",
        min_n_mark=None,
        description="share of CONFLICTS queries whose conflict type is predicted right",
        **_proportion,
    ),  # fmt: skip
    Metric(
        "mr",
        better="none",
        min_n_mark=None,
        description="ConflictBank memorization ratio: the original answer among original or conflicting ones",
        ratio=True,
        **_proportion,
    ),  # fmt: skip
    Metric("oar", better="none", min_n_mark=None, description="ConflictBank original-answer rate", **_proportion),
    Metric("car", better="none", min_n_mark=None, description="ConflictBank conflicting-answer rate", **_proportion),
    Metric(
        "arbitration_accuracy",
        unit="proportion",
        kind="proportion",
        interval="unit-proportion",
        better="higher",
        min_n_interval=stats.MIN_N_INTERVAL,
        min_n_mark=None,
        description="arbitration accuracy over instances, each the mean of its two evidence orders",
    ),  # fmt: skip
    Metric(
        "follows_numbers",
        unit="proportion",
        kind="proportion",
        interval="unit-proportion",
        better="none",
        min_n_interval=stats.MIN_N_INTERVAL,
        min_n_mark=None,
        description="share of arbitration answers that follow the numbers, over instances",
    ),  # fmt: skip
    # The methods table reads arbitration's instance shares as graded scores: paired as graded, each cell's
    # interval Clopper-Pearson over instances with the summed shares as the count.
    Metric(
        "conflict_accuracy",
        unit="0-1 share",
        better="higher",
        min_n_mark=None,
        description="arbitration accuracy under conflict, per instance the mean of its evidence orders (methods)",
        **_shares,
    ),  # fmt: skip
    Metric(
        "text_followed",
        unit="0-1 share",
        better="none",
        min_n_mark=None,
        description="share of arbitration answers following the text, per instance (methods)",
        **_shares,
    ),  # fmt: skip
    # Agreement over gold items: a percentile bootstrap over items, below which its coverage falls under 93%.
    Metric(
        "kappa",
        unit="kappa",
        kind="agreement",
        interval="bootstrap",
        better="higher",
        min_n_interval=100,
        min_n_mark=None,
        description="Cohen's kappa of the judge's labels against the gold labels",
    ),  # fmt: skip
    Metric(
        "gold_agreement",
        unit="proportion",
        kind="agreement",
        interval="bootstrap",
        better="higher",
        min_n_interval=60,
        min_n_mark=None,
        description="share of gold items the judge labels as the gold does (clustered items: bootstrap)",
    ),  # fmt: skip
)

METRICS: dict[str, Metric] = {m.name: m for m in CORE}


def with_benchmarks(descriptors: Sequence[Benchmark]) -> dict[str, Metric]:
    """:data:`METRICS` and every metric of ``descriptors`` (conflictlab.benchmarks.REGISTRY), by name:
    the whole registry, for the profile page and the tests. (This module does not import the benchmark
    registry itself, so that a table's code hash does not change with every descriptor.) ValueError
    where two specs share a name."""
    found = dict(METRICS)
    for bench in descriptors:
        for metric in bench.metrics:
            if metric.name in found:
                raise ValueError(f"benchmark {bench.name!r}: metric {metric.name!r} is registered twice")
            found[metric.name] = metric
    return found


def get(name: str, registry: dict[str, Metric] = METRICS) -> Metric:
    """The spec of metric ``name`` in ``registry`` (default: the core ones); KeyError naming the registered."""
    try:
        return registry[name]
    except KeyError:
        raise KeyError(f"no metric {name!r}; registered: {', '.join(registry)}") from None


def method_name(metric: Metric) -> str | None:
    """The printed name of ``metric``'s interval ("clopper-pearson", "student-t", ...), None without one."""
    function = INTERVALS[metric.interval]
    return None if function is None else METHOD_NAMES[function.__name__]


def estimate(
    metric: Metric, values: Sequence[float] | np.ndarray, *, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """``(value, low, high)`` of per-unit ``values`` (shape (n,)) by ``metric``'s interval: 0/1
    outcomes for a proportion, shares in [0, 1] for a unit proportion, scores within ``bounds`` for
    a bounded mean, scores for a mean (none below its min_n_interval or without spread). ``bounds``
    None: the range of the metric's unit (:data:`SCORE_RANGES`), so that no interval of a 0-1 score
    leaves [0, 1] whichever table asks. ValueError for a metric whose interval is not computed from
    unit values, and for a bounded mean without a range."""
    values = np.asarray(values, dtype=float)
    bounds = SCORE_RANGES.get(metric.unit) if bounds is None else bounds
    if metric.interval == "proportion":
        return stats.proportion_ci(values)
    if metric.interval == "unit-proportion":
        return stats.unit_proportion_interval(values)
    if metric.interval == "bounded-mean":
        if bounds is None:
            raise ValueError(f"metric {metric.name!r}: a bounded mean needs the score's range, unit {metric.unit!r}")
        return stats.bounded_mean_interval(values, bounds=bounds, min_n=metric.min_n_interval)
    if metric.interval == "mean":
        return stats.mean_interval(values, bounds=bounds, min_n=metric.min_n_interval)
    raise ValueError(f"metric {metric.name!r}: its {metric.interval!r} interval is not computed from unit values")


def min_n_mark(metric: Metric, configured: int) -> int | None:
    """The n each cell needs before ``metric``'s best cell is marked: the config's ``statistics.min_n_mark``
    or the metric's own, the larger; None for a metric without a better direction (never marked)."""
    if metric.better == "none":
        return None
    return max(configured, metric.min_n_mark or 0)


def method_label(function) -> str:
    """The caption's name of interval or test ``function`` (:data:`METHOD_LABELS`); KeyError for one not registered."""
    try:
        return METHOD_LABELS[function.__name__]
    except KeyError:
        raise KeyError(
            f"no caption name for {function.__name__}; add it to conflictlab.metrics.METHOD_LABELS"
        ) from None


def interval_label(metric: Metric) -> str | None:
    """The caption's name of ``metric``'s interval (:func:`method_label` of the function that computes it), None
    without one."""
    function = INTERVALS[metric.interval]
    return None if function is None else method_label(function)


def paired_comparison(metric: Metric) -> str:
    """How two runs of ``metric`` on the same items are compared item by item, the one place that decides it
    (the methods table, Table 4): "ratio" for a ratio of per-item counts (over every item both answered,
    :mod:`conflictlab.paired_ratios`), "proportion" for 0/1 outcomes (Tango's interval and the exact McNemar p,
    :func:`conflictlab.paired.paired_difference`), "mean" for graded scores and for shares in [0, 1] that are not
    0/1 (an instance's share over its two evidence orders)."""
    if metric.ratio:
        return "ratio"
    return "proportion" if metric.interval == "proportion" else "mean"


def higher_is_better(metric: Metric) -> bool | None:
    """``metric``'s direction as the tables store it (None: no direction)."""
    return {"higher": True, "lower": False, "none": None}[metric.better]

"""Paired comparisons: two methods answering the same items (issue 50, item 3).

Each function takes two aligned per-item arrays ``x`` and ``y`` of shape
(n,), item i of both from the same item (:func:`pair_on_ids` aligns them by
id), and compares ``x`` with ``y`` (the difference is ``x − y``):

* proportions (0/1 outcomes): the exact McNemar test (a two-sided binomial
  test on the discordant pairs; equal to
  ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``) and Newcombe's
  hybrid score interval for the paired difference of proportions (Newcombe
  1998, "Improved confidence intervals for the difference between binomial
  proportions based on paired data", Stat. Med. 17, method 10), whose
  coverage ``tests/test_paired.py`` checks by simulation;
* means (Balance, ratings): the sign-flip permutation test of the mean
  difference (every sign pattern below :data:`EXACT_SIGN_FLIP_N` pairs, else
  ``n_resamples`` random ones, p = (1 + hits) / (1 + resamples)) and a
  Student-t interval of the mean difference.

:func:`holm` adjusts a family of p-values (checked against
``statsmodels.stats.multitest.multipletests(method="holm")``);
:func:`format_p` prints a p-value with two significant digits, never as 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

# Below this many pairs the sign-flip test enumerates all 2**n sign patterns.
EXACT_SIGN_FLIP_N = 16
P_FLOOR = 1e-4  # printed as "< 1e-4" below this


def pair_on_ids(
    ids_x: Sequence, x, ids_y: Sequence, y, *, what: str = "paired comparison"
) -> tuple[list, np.ndarray, np.ndarray]:
    """(shared ids in ``ids_x``'s order, x at them, y at them): the inner join
    of two per-item arrays on their ids. A repeated id on either side is a
    ValueError naming ``what`` (one item, one value)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(ids_x) != x.size or len(ids_y) != y.size:
        raise ValueError(f"{what}: {x.size} and {y.size} values for {len(ids_x)} and {len(ids_y)} ids")
    for ids, side in ((ids_x, "first"), (ids_y, "second")):
        if len(set(ids)) != len(ids):
            raise ValueError(f"{what}: the {side} side repeats an item id; pairing needs one value per item")
    at_y = {item: k for k, item in enumerate(ids_y)}
    shared = [(item, k) for k, item in enumerate(ids_x) if item in at_y]
    keep_x = np.array([k for _, k in shared], dtype=int)
    keep_y = np.array([at_y[item] for item, _ in shared], dtype=int)
    return [item for item, _ in shared], x[keep_x], y[keep_y]


def _check_pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired values of shapes {x.shape} and {y.shape}; need two equal (n,)")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired values hold NaN or infinity; drop the unscored items on both sides first")
    return x, y


def _binary(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = _check_pairs(x, y)
    if not (np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all()):
        raise ValueError("a paired comparison of proportions needs 0/1 outcomes")
    return x.astype(bool), y.astype(bool)


def mcnemar_exact_p(x, y) -> float:
    """Two-sided exact McNemar p-value of 0/1 outcomes ``x`` against ``y``
    (shape (n,) each): the binomial test of b = #(x=1, y=0) among the b + c
    discordant pairs at 1/2; 1.0 without discordant pairs."""
    x, y = _binary(x, y)
    b, c = int(np.sum(x & ~y)), int(np.sum(~x & y))
    if b + c == 0:
        return 1.0
    p = min(1.0, 2.0 * float(stats.binom.cdf(min(b, c), b + c, 0.5)))
    # thousands of one-sided discordant pairs underflow to 0.0; an exact p is never 0
    return max(p, float(np.finfo(float).tiny))


def _wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_proportion_ci(x, y, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """(difference, low, high): mean(x) − mean(y) of paired 0/1 outcomes and
    Newcombe's hybrid score interval (method 10: the two Wilson intervals
    combined with the phi correlation of the 2×2 table; phi is 0 where a
    margin is empty). Shape (n,) each, n ≥ 1."""
    x, y = _binary(x, y)
    n = x.size
    if n == 0:
        raise ValueError("a paired difference of proportions needs at least one pair")
    z = stats.norm.ppf(0.5 + confidence / 2)
    a, b = int(np.sum(x & y)), int(np.sum(x & ~y))
    c, d = int(np.sum(~x & y)), int(np.sum(~x & ~y))
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _wilson(a + b, n, z)
    l2, u2 = _wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    # Newcombe's continuity correction of phi (ad − bc shrunk by n/2 when
    # positive) widens the interval where the uncorrected one undercovers.
    cross = a * d - b * c
    cross = max(cross - n / 2, 0.0) if cross > 0 else cross
    phi = 0.0 if margins == 0 else cross / math.sqrt(margins)
    diff = p1 - p2
    low = diff - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = diff + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return diff, max(-1.0, low), min(1.0, high)


def sign_flip_p(differences, *, n_resamples: int = 10_000, seed: int = 0) -> tuple[float, int | None]:
    """Two-sided sign-flip permutation p-value of mean(differences) = 0, and
    the number of random sign patterns drawn (None: all 2**n enumerated, at
    n ≤ :data:`EXACT_SIGN_FLIP_N`). A pattern counts when its |mean| reaches
    the observed one (up to rounding), so ties count; the observed pattern is
    one of them, so p > 0. 1.0 when every difference is 0."""
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"sign-flip test: need finite differences of shape (n,), n ≥ 1; got shape {d.shape}")
    observed = abs(d.mean())
    if observed == 0.0:
        return 1.0, None
    tolerance = 1e-12 * max(1.0, float(np.abs(d).max()))
    if d.size <= EXACT_SIGN_FLIP_N:
        signs = 1 - 2 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
        means = np.abs(signs @ d) / d.size
        return float(np.mean(means >= observed - tolerance)), None
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):  # chunks bound the memory at large n
        size = min(2000, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(size, d.size))
        hits += int(np.sum(np.abs(signs @ d) / d.size >= observed - tolerance))
    return (1 + hits) / (1 + n_resamples), n_resamples


def paired_mean_ci(x, y, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """(difference, low, high): mean(x − y) and its Student-t interval; the
    bounds are NaN at n < 2 or when every difference is equal up to rounding
    (no spread: never a zero-width interval)."""
    x, y = _check_pairs(x, y)
    d = x - y
    if d.size == 0:
        raise ValueError("a paired difference of means needs at least one pair")
    mean = float(d.mean())
    if d.size < 2 or np.ptp(d) <= 1e-9 * max(1.0, float(np.abs(d).max())):  # equal up to rounding: no spread
        return mean, math.nan, math.nan
    half = stats.t.ppf(0.5 + confidence / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)
    return mean, mean - half, mean + half


def paired_difference(
    x, y, *, proportion: bool, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> dict:
    """The paired comparison of ``x`` with ``y`` (aligned, shape (n,)):
    ``difference`` (x − y), ``difference_low``, ``difference_high``,
    ``p_paired``, ``n_pairs`` and ``paired_test`` (its name, with the number
    of random sign patterns where the sign-flip test drew them)."""
    if proportion:
        diff, low, high = paired_proportion_ci(x, y, confidence=confidence)
        p, test = mcnemar_exact_p(x, y), "exact McNemar; Newcombe score CI"
    else:
        diff, low, high = paired_mean_ci(x, y, confidence=confidence)
        x, y = _check_pairs(x, y)
        p, drawn = sign_flip_p(x - y, n_resamples=n_resamples, seed=seed)
        test = "sign-flip (exact)" if drawn is None else f"sign-flip ({drawn} patterns)"
        test += "; t CI"
    return {
        "difference": diff,
        "difference_low": low,
        "difference_high": high,
        "p_paired": p,
        "n_pairs": int(np.asarray(x).size),
        "paired_test": test,
    }


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, shape (len(p_values),), each ≤ 1."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or np.isnan(p).any():
        raise ValueError("Holm's adjustment needs a 1-D array of p-values without NaN")
    order = np.argsort(p, kind="stable")
    scaled = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, scaled)
    return adjusted


def format_p(p: float | None) -> str:
    """A p-value with two significant digits; ``< 1e-4`` below 1e-4 (so never
    0); empty for None or NaN."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    if p < P_FLOOR:
        return "< 1e-4"
    return f"{p:#.2g}"  # "#" keeps a trailing zero: 0.0020, 0.50


def best_by_paired_tests(
    ids: Sequence[Sequence],
    values: Sequence,
    *,
    higher_is_better: bool,
    proportion: bool,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> int | None:
    """The index of the row to mark best among several methods on the same
    items, or None: the row with the best mean beats every other row in a
    paired test (:func:`paired_difference` over the ids both share), with
    Holm's correction across those comparisons at ``alpha``. ``ids[k]``,
    ``values[k]``: row k's item ids and per-item values (NaN-free)."""
    means = [float(np.mean(v)) if len(v) else math.nan for v in values]
    if len(means) < 2 or any(math.isnan(m) for m in means):
        return None
    sign = 1.0 if higher_is_better else -1.0
    best = int(np.argmax([sign * m for m in means]))
    p_values = []
    for k in range(len(means)):
        if k == best:
            continue
        _, x, y = pair_on_ids(ids[best], values[best], ids[k], values[k])
        if x.size == 0:
            return None
        result = paired_difference(x, y, proportion=proportion, n_resamples=n_resamples, seed=seed)
        if sign * result["difference"] <= 0:
            return None
        p_values.append(result["p_paired"])
    return best if bool(np.all(holm(p_values) < alpha)) else None


# Fewest pairs for a paired interval, by the cells' interval (a proportion's or a mean's).
PAIRED_MIN_N = {"clopper-pearson": 5, "student-t": 10}
# The columns a methods table (and Table 4) gives each row against its baseline.
PAIRED_COLUMNS = (
    "difference",
    "difference_low",
    "difference_high",
    "p_paired",
    "p_paired_text",
    "n_pairs",
    "paired_test",
)


def paired_columns(
    items: tuple, reference: tuple, *, proportion: bool, what: str, n_resamples: int = 10_000, seed: int = 0
) -> dict:
    """The paired columns (``difference``, ``difference_low``,
    ``difference_high``, ``p_paired``, ``p_paired_text``, ``n_pairs``,
    ``paired_test``) of ``items`` against ``reference``, each (item ids,
    per-item values), joined on the ids; the interval null below
    :data:`PAIRED_MIN_N` pairs or without spread, everything but
    ``n_pairs = 0`` null without shared items. ``what`` names the
    comparison in errors."""
    _, x, y = pair_on_ids(*items, *reference, what=what)
    if x.size == 0:
        return {"n_pairs": 0}
    result = paired_difference(x, y, proportion=proportion, n_resamples=n_resamples, seed=seed)
    if result["n_pairs"] < PAIRED_MIN_N["clopper-pearson" if proportion else "student-t"]:
        result["difference_low"] = result["difference_high"] = None
    result = {k: nan_to_none(v) for k, v in result.items()}
    return {**result, "p_paired_text": format_p(result["p_paired"])}


def nan_to_none(v):
    """``v``, or None for a NaN float (a CSV cell left empty rather than printed as nan)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

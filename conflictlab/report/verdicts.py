"""The statistics of a reproduction verdict: is our number the paper's, given both samples and its rounding?

A row compares a difference ``Σ sign_i · (ours_i − paper_i)`` with 0 (one
term for a plain row, two for a derived row such as a gain of one setting
over another). Each side of a term is an :class:`Estimate` in the paper's
unit:

- a proportion with its n: Wilson score bounds; the difference's interval
  is the MOVER combination of those bounds, which for one term is
  Newcombe's hybrid score interval (method 10; checked against
  ``statsmodels.stats.proportion.confint_proportions_2indep(method="newcomb")``);
- a mean with its standard error and degrees of freedom: the difference's
  interval is Welch's (t with Welch–Satterthwaite degrees of freedom);
- an exact value (no sampling error: a paper value whose n or SD is
  unknown): zero width.

The paper prints its value rounded; the true value lies within half a unit
of the last printed digit (:func:`rounding`), so every interval is widened
by that much on each side.

:func:`decide` gives the verdict, at an equivalence ``margin`` in the unit:

- ``equivalent``: the widened 90% interval lies within ± margin (two
  one-sided tests at 5%);
- ``differs``: otherwise, the widened 95% interval excludes 0;
- ``inconclusive``: neither; "underpowered" when even a perfect match
  (each of our estimates equal to the paper's, at our n) would give a
  widened 90% interval reaching beyond ± margin, so no outcome of a run of
  this size could have been ``equivalent``.

Calibration (rate of ``differs`` for faithful reruns, of ``equivalent`` for
reruns off by twice the margin): ``benchmarks/reproduction_calibration.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from statistics import NormalDist

# The project's scipy-free t quantile: the workflow reads the papers' files through this module at
# every Snakemake start, where importing scipy.stats cost 0.9 CPU s.
from conflictlab.stats import t_quantile

EQUIVALENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE, EQUAL = (
    "equivalent",
    "differs",
    "inconclusive",
    "not comparable",
    "equal",
)
VERDICTS = (EQUIVALENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE, EQUAL)
GREEN = (EQUIVALENT, EQUAL)
PROPORTION, MEAN, EXACT = "proportion", "mean", "exact"


def rounding(value: float, decimals: int | None = None) -> float:
    """Half a unit of the last printed digit of ``value``: 24.8 -> 0.05, 9.45 -> 0.005, 458 -> 0.5.

    ``decimals``: the digits after the point as printed (a trailing zero,
    68.0, is lost in a float); None takes those of the value's shortest repr."""
    if decimals is None:
        exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
        decimals = max(0, -int(exponent))
    return 0.5 * 10.0**-decimals


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


@dataclass(frozen=True)
class Estimate:
    """One sample's estimate in the paper's unit.

    ``kind``: :data:`PROPORTION` (``value / scale`` is the proportion, ``n``
    its sample size), :data:`MEAN` (``se`` its standard error, ``df`` its
    degrees of freedom, ``n`` its sample size) or :data:`EXACT` (no
    sampling error). ``scale``: the unit's value of a proportion 1 (100 for %)."""

    value: float
    kind: str
    n: float | None = None
    se: float | None = None
    df: float | None = None
    scale: float = 100.0

    def bounds(self, confidence: float) -> tuple[float, float]:
        """Its own two-sided interval at ``confidence``: Wilson, t, or the value itself; a proportion
        on no items (n = 0 or unknown) may be anything, [0, scale]."""
        if self.kind == EXACT:
            return self.value, self.value
        if self.kind == MEAN:
            half = t_quantile(0.5 + confidence / 2.0, self.df) * self.se
            return self.value - half, self.value + half
        low, high = wilson_bounds(self.value / self.scale, self.n, confidence)
        return self.scale * low, self.scale * high

    def variance(self) -> float:
        """Its sampling variance. A proportion's is score-type: the square of its 95% Wilson interval's
        half-width over z, so that 0 of n or n of n (whose Wald variance p(1 − p)/n is 0) still has
        one, (z²/(n + z²)/(2z))²·scale²; on no items, (scale/2)², the most a value in [0, scale] has."""
        if self.kind == EXACT:
            return 0.0
        if self.kind == MEAN:
            return self.se**2
        if not self.n or self.n <= 0:
            return (self.scale / 2.0) ** 2
        low, high = wilson_bounds(self.value / self.scale, self.n, 0.95)
        return (self.scale * (high - low) / (2.0 * _z(0.95))) ** 2

    def welch_df(self) -> float:
        """Its degrees of freedom in Welch-Satterthwaite's sum: a mean's own; a proportion's n − 1,
        at least 1 (n = 1 would divide by zero, and one item is as uncertain as a t with 1 df allows)."""
        if self.kind == MEAN:
            return self.df
        return max((self.n or 0) - 1.0, 1.0)


def wilson_bounds(p: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed on ``n`` items (``p·n`` need not be whole: a
    paper's rounded rate times its n); [0, 1] without items (n = 0 or None)."""
    if not n or n <= 0:
        return 0.0, 1.0
    p = min(max(p, 0.0), 1.0)
    z = _z(confidence)
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Term:
    """``sign · (ours − paper)``, one part of a compared difference."""

    sign: int
    ours: Estimate
    paper: Estimate


def difference_interval(
    terms: Sequence[Term], confidence: float, point: float | None = None
) -> tuple[float, float, float]:
    """``(difference, low, high)`` of ``Σ sign · (ours − paper)`` at ``confidence``, before rounding.

    All parts proportions or exact: MOVER (Newcombe's hybrid score for one
    term); any mean: Welch's t interval (proportions then count with their
    score-type variance, :meth:`Estimate.variance`). ``point``: the difference's estimate where it is not
    the sum of the parts' values (a derived row whose paper value is the
    printed difference, not the difference of the printed rows)."""
    parts = [(t.sign, t.ours) for t in terms] + [(-t.sign, t.paper) for t in terms]
    estimate = sum(s * e.value for s, e in parts) if point is None else point
    if any(e.kind == MEAN for _, e in parts):
        variances = [e.variance() for _, e in parts]
        total = sum(variances)
        if total == 0:
            return estimate, estimate, estimate
        # Welch-Satterthwaite; a proportion's part counts with n - 1 degrees of freedom, an exact one with none
        df = total**2 / sum(v**2 / e.welch_df() for v, (_, e) in zip(variances, parts) if v > 0)
        half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(total)
        return estimate, estimate - half, estimate + half
    below = above = 0.0
    for sign, part in parts:
        low, high = part.bounds(confidence)
        down, up = (part.value - low, high - part.value) if sign > 0 else (high - part.value, part.value - low)
        below, above = below + down**2, above + up**2
    return estimate, estimate - math.sqrt(below), estimate + math.sqrt(above)


@dataclass(frozen=True)
class Verdict:
    """A compared difference: ``verdict`` one of :data:`VERDICTS`; ``difference``
    ours − paper; ``low``/``high`` its 95% interval and ``low90``/``high90`` its
    90% interval, both widened by the paper's rounding; ``why`` the reason for
    anything but ``equivalent``."""

    verdict: str
    difference: float
    low: float
    high: float
    low90: float
    high90: float
    why: str


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}"


def widened(
    terms: Sequence[Term], confidence: float, round_by: float, point: float | None = None
) -> tuple[float, float, float]:
    """:func:`difference_interval` widened by ``round_by`` on each side."""
    d, low, high = difference_interval(terms, confidence, point)
    return d, low - round_by, high + round_by


def could_be_equivalent(terms: Sequence[Term], margin: float, round_by: float) -> bool:
    """Whether a perfect match (each of our estimates equal to the paper's, at our n) would be ``equivalent``."""
    matched = [replace(t, ours=replace(t.ours, value=t.paper.value)) for t in terms]
    _, low, high = widened(matched, 0.90, round_by, 0.0)
    return -margin <= low and high <= margin


def decide(terms: Sequence[Term], margin: float, round_by: float, point: float | None = None) -> Verdict:
    """The verdict on ``Σ sign · (ours − paper)`` at equivalence ``margin`` (> 0, in the unit), the paper's
    value rounded by ``round_by`` (:func:`rounding`; summed over the printed values a difference uses)."""
    if not margin > 0:
        raise ValueError(f"an equivalence margin must be > 0, got {margin}")
    d, low, high = widened(terms, 0.95, round_by, point)
    _, low90, high90 = widened(terms, 0.90, round_by, point)
    shown = f"ours − paper = {_fmt(d)}, 95% interval [{_fmt(low)}, {_fmt(high)}], 90% [{_fmt(low90)}, {_fmt(high90)}]"
    if -margin <= low90 and high90 <= margin:
        why = (
            f"the 95% interval excludes 0: a difference smaller than the margin ±{_fmt(margin)}"
            if low > 0 or high < 0
            else ""
        )
        return Verdict(EQUIVALENT, d, low, high, low90, high90, why)
    if low > 0 or high < 0:
        return Verdict(DIFFERS, d, low, high, low90, high90, f"{shown}: the 95% interval excludes 0")
    why = f"{shown}: the 90% interval reaches beyond ±{_fmt(margin)} and the 95% interval includes 0"
    if not could_be_equivalent(terms, margin, round_by):
        n = ", ".join(f"{t.ours.n:g}" for t in terms if t.ours.n is not None)
        why = f"underpowered: even a perfect match at our n ({n}) could not be within ±{_fmt(margin)}; " + why
    return Verdict(INCONCLUSIVE, d, low, high, low90, high90, why)


def power_equivalent(terms: Sequence[Term], margin: float, round_by: float) -> float:
    """The chance that a faithful rerun (each true value the paper's) is ``equivalent``: normal approximation,
    the 90% interval's half-width taken as fixed at its perfect-match value. ``terms``: ours at the paper's
    values with our planned n. Checked against simulation in tests/test_reproduction_verdicts.py."""
    matched = [replace(t, ours=replace(t.ours, value=t.paper.value)) for t in terms]
    _, low, high = widened(matched, 0.90, round_by, 0.0)
    se = math.sqrt(sum(t.ours.variance() + t.paper.variance() for t in matched))
    room = margin - (high - low) / 2
    if room <= 0:
        return 0.0
    if se == 0:
        return 1.0
    return 2 * NormalDist().cdf(room / se) - 1


def compare_counts(ours: float, paper: float) -> Verdict:
    """A count (samples, queries, records) is the same or not: ``equal`` / ``differs``, no interval."""
    d = float(round(ours) - round(paper))
    if d == 0:
        return Verdict(EQUAL, 0.0, 0.0, 0.0, 0.0, 0.0, "")
    return Verdict(DIFFERS, d, d, d, d, d, f"ours {round(ours):,} against the paper's {round(paper):,}")

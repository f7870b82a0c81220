"""Text summaries of a trajectory (B.2), with no numbers besides its timestamps.

Text (B.2), bins chosen here: levels [0, .15) low, [.15, .35) moderately
below, [.35, .5) slightly below, [.5, .65) slightly above, [.65, .85)
elevated, [.85, 1] high; trend strength by |s|: < .015 weak, < .035
moderate, else strong. No number other than the two timestamps appears in
a summary.
"""

from __future__ import annotations

import math
import random

from conflictlab.arbitration.trajectories import THRESHOLD, Trajectory

_LEVELS = [
    (0.15, "low", ["a low level", "a clearly low value"]),
    (0.35, "moderately_below", ["a moderate value below {thr}", "a level moderately below {thr}"]),
    (0.50, "slightly_below", ["a level slightly below {thr}", "a value marginally below {thr}"]),
    (0.65, "slightly_above", ["a level slightly above {thr}", "a value marginally above {thr}"]),
    (0.85, "elevated", ["an elevated level", "a raised value above {thr}"]),
    (math.inf, "high", ["a high level", "a clearly high value"]),
]
_TRENDS = {
    ("up", "weak"): ["rose slightly", "edged upwards", "increased marginally"],
    ("up", "moderate"): ["increased steadily", "rose at a moderate pace", "climbed gradually"],
    ("up", "strong"): ["climbed significantly", "rose sharply", "increased strongly"],
    ("down", "weak"): ["dipped slightly", "edged downwards", "decreased marginally"],
    ("down", "moderate"): ["declined gradually", "fell at a moderate pace", "decreased steadily"],
    ("down", "strong"): ["dropped significantly", "fell sharply", "decreased strongly"],
}
_STATUS = {
    ("below", "below"): ["it continued to stay contained", "it still remained limited", "it was still under control"],
    ("above", "above"): ["it remained concerning", "it was still elevated", "it stayed in a concerning range"],
    ("below", "above"): ["it became concerning", "it rose into an elevated state", "it moved into a concerning range"],
    ("above", "below"): [
        "it returned to a controlled range",
        "it eased into a contained state",
        "it came back under control",
    ],
}
_OPENINGS = ["Initially, at {t0}, ", "Starting at {t0}, ", "At {t0}, "]
_CLOSINGS = ["by {t1}", "as of {t1}"]
_THRESHOLDS = ["the threshold", "the critical level", "the cutoff level"]
_CONNECTORS = ["then", "after that", "from there"]
UNRELIABLE_NOTES = [
    "Note: this summary was produced using partially corrupted data from the observation window.",
    "Note: this report was generated from partially corrupted data within the observation window.",
]


def trend_category(slope: float) -> tuple[str, str]:
    strength = "weak" if abs(slope) < 0.015 else "moderate" if abs(slope) < 0.035 else "strong"
    return ("up" if slope >= 0 else "down", strength)


def describe(traj: Trajectory, times: list[str], risk: str, rng: random.Random) -> str:
    """A summary of ``traj`` with no numbers besides its first and last timestamps."""
    thr = rng.choice(_THRESHOLDS)

    def level(value: float) -> str:
        phrases = next(p for upper, _, p in _LEVELS if value < upper)
        return rng.choice(phrases).format(thr=thr)

    start, end = traj.values[0], traj.values[-1]
    regions = ("above" if start >= THRESHOLD else "below", "above" if end >= THRESHOLD else "below")
    opening = rng.choice(_OPENINGS).format(t0=times[0])
    closing = rng.choice(_CLOSINGS).format(t1=times[-1])
    return (
        f"{opening}{risk} was at {level(start)}; {rng.choice(_CONNECTORS)}, it "
        f"{rng.choice(_TRENDS[trend_category(traj.slope)])}, "
        f"and {closing} {rng.choice(_STATUS[regions])}, settling at {level(end)}."
    )

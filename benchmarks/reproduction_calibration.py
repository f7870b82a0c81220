"""Calibration of the reproduction verdicts (conflictlab.report.verdicts) by simulation.

For each row kind, with the paper's value drawn from its own sample and
printed rounded (one decimal in %, as the papers print), and our number
drawn at ¼×, 1× and 4× the paper's n:

- faithful reruns (our truth = the paper's): the rate of ``differs`` (the
  false alarm rate, must be ≤ 5%) and of ``equivalent`` (the power);
- reruns whose truth is off by twice the margin: the rate of
  ``equivalent`` (the false reassurance rate, must be ≤ 5%); and, for
  information, at once the margin (the two one-sided tests' own boundary,
  where ≤ 5% holds too).

Each rate is printed with its Monte Carlo standard error.

    python benchmarks/reproduction_calibration.py [--reps 2000] [--seed 0]

Row kinds: a proportion (p = 0.1, 0.3, 0.5; paper n 458, CONFLICTS' size,
and 3,000); a mean of graded scores (normal, SD 25 points, paper n 500)
with the paper's SD printed, and without it (the paper's sampling error
formed from our SD at its n); a derived difference of two proportions
(0.45 − 0.30, paper n 1,000 per arm). Margins: 3 points (conflictlab's
default for %).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from conflictlab.report import verdicts as V

MARGIN = 3.0  # points, as reproduction.margins["%"]
DECIMALS = 1  # the paper prints one decimal
SCALES = (0.25, 1.0, 4.0)


@dataclass(frozen=True)
class Case:
    """A row kind at one truth: ``kind`` "proportion", "mean+sd", "mean" or "derived"; ``truth`` in %
    (for "derived": the two arms' truths); ``paper_n``; ``sd`` of a mean's items, in points."""

    kind: str
    truth: tuple[float, ...]
    paper_n: int
    sd: float = 25.0

    def label(self) -> str:
        what = {
            "proportion": "proportion",
            "mean+sd": "mean, paper SD",
            "mean": "mean, no paper SD",
            "derived": "difference of 2 proportions",
        }[self.kind]
        return f"{what} at {' − '.join(f'{t:g}' for t in self.truth)}, paper n {self.paper_n:,}"


CASES = (
    *(Case("proportion", (p,), n) for n in (458, 3000) for p in (10.0, 30.0, 50.0)),
    Case("mean+sd", (50.0,), 500),
    Case("mean", (50.0,), 500),
    Case("derived", (45.0, 30.0), 1000),
)


def _printed(x: float) -> float:
    return round(x, DECIMALS)


def _proportion(rng: np.random.Generator, truth: float, n: int) -> float:
    return 100.0 * rng.binomial(n, truth / 100.0) / n


def _mean_sample(rng: np.random.Generator, truth: float, sd: float, n: int) -> tuple[float, float]:
    """A sample mean and its sample SD, of n normal items."""
    items = rng.normal(truth, sd, n)
    return float(items.mean()), float(items.std(ddof=1))


def one_verdict(case: Case, rng: np.random.Generator, our_n: int, shift: float) -> str:
    """One simulated row's verdict: the paper's sample at the truth, ours at the truth + ``shift`` (points)."""
    if case.kind == "proportion":
        truth = case.truth[0]
        paper = _printed(_proportion(rng, truth, case.paper_n))
        ours = _proportion(rng, truth + shift, our_n)
        terms = [V.Term(1, V.Estimate(ours, V.PROPORTION, n=our_n), V.Estimate(paper, V.PROPORTION, n=case.paper_n))]
        return V.decide(terms, MARGIN, V.rounding(paper, DECIMALS)).verdict
    if case.kind in ("mean+sd", "mean"):
        truth = case.truth[0]
        paper, paper_sd = _mean_sample(rng, truth, case.sd, case.paper_n)
        ours, our_sd = _mean_sample(rng, truth + shift, case.sd, our_n)
        mine = V.Estimate(ours, V.MEAN, n=our_n, se=our_sd / math.sqrt(our_n), df=our_n - 1)
        # without the paper's SD, ours at the paper's n stands in (conflictlab.report.reproduction._paper_estimate)
        spread = _printed(paper_sd) if case.kind == "mean+sd" else our_sd
        theirs = V.Estimate(
            _printed(paper),
            V.MEAN,
            n=case.paper_n,
            se=spread / math.sqrt(case.paper_n),
            df=case.paper_n - 1 if case.kind == "mean+sd" else our_n - 1,
        )
        return V.decide([V.Term(1, mine, theirs)], MARGIN, V.rounding(_printed(paper), DECIMALS)).verdict
    (a_truth, b_truth) = case.truth
    paper_a, paper_b = (_printed(_proportion(rng, t, case.paper_n)) for t in case.truth)
    printed_gain = _printed(paper_a - paper_b)
    ours_a, ours_b = _proportion(rng, a_truth + shift, our_n), _proportion(rng, b_truth, our_n)
    terms = [
        V.Term(1, V.Estimate(ours_a, V.PROPORTION, n=our_n), V.Estimate(paper_a, V.PROPORTION, n=case.paper_n)),
        V.Term(-1, V.Estimate(ours_b, V.PROPORTION, n=our_n), V.Estimate(paper_b, V.PROPORTION, n=case.paper_n)),
    ]
    point = (ours_a - ours_b) - printed_gain
    return V.decide(terms, MARGIN, V.rounding(printed_gain, DECIMALS), point).verdict


def _off(case: Case, times: float) -> float:
    """``times`` the margin, in the direction that stays inside [0, 100]."""
    return times * MARGIN if case.truth[0] + times * MARGIN <= 100 else -times * MARGIN


def rates(case: Case, scale: float, reps: int, seed: int) -> dict:
    """The three rates (with Monte Carlo SEs) of ``case`` at our n = ``scale`` × the paper's n."""
    rng = np.random.default_rng([seed, int(scale * 100), *(int(10 * t) for t in case.truth), case.paper_n])
    our_n = max(2, round(scale * case.paper_n))
    faithful = [one_verdict(case, rng, our_n, 0.0) for _ in range(reps)]
    off = [one_verdict(case, rng, our_n, _off(case, 2)) for _ in range(reps)]
    at_margin = [one_verdict(case, rng, our_n, _off(case, 1)) for _ in range(reps)]
    out = {"case": case.label(), "our_n": our_n, "reps": reps}
    for name, verdicts, wanted in (
        ("false differs", faithful, V.DIFFERS),
        ("false equivalent", off, V.EQUIVALENT),
        ("equivalent at 1× margin", at_margin, V.EQUIVALENT),
        ("power", faithful, V.EQUIVALENT),
    ):
        rate = sum(v == wanted for v in verdicts) / reps
        out[name], out[name + " se"] = rate, math.sqrt(max(rate * (1 - rate), 1.0 / reps) / reps)
    return out


def table(cases=CASES, scales=SCALES, reps: int = 2000, seed: int = 0) -> list[dict]:
    """:func:`rates` of every case at every scale."""
    return [rates(case, scale, reps, seed) for case in cases for scale in scales]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = table(reps=args.reps, seed=args.seed)
    print(f"margin ±{MARGIN:g} points; {args.reps} reruns per cell; rate ± Monte Carlo SE")
    keys = ("false differs", "false equivalent", "equivalent at 1× margin", "power")
    print(
        "| row kind | our n | false differs (≤ 5%) | false equivalent at 2× margin (≤ 5%) | equivalent at 1× margin "
        "| power (faithful → equivalent) |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{100 * r[k]:.1f} ± {100 * r[k + ' se']:.1f}%" for k in keys]
        print(f"| {r['case']} | {r['our_n']:,} | " + " | ".join(cells) + " |")
    worst = max(r["false differs"] for r in rows), max(r["false equivalent"] for r in rows)
    print(
        f"worst: false differs {100 * worst[0]:.1f}%, false equivalent {100 * worst[1]:.1f}%; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()

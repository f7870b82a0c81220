"""The evidence-arbitration paper's result sentences (:class:`~conflictlab.report.reproduction.Claim`),
each with a check over this run's ``results/tables/arbitration_accuracy.csv`` (accuracy per model,
setting, evidence order, condition and aligned source, a proportion; :mod:`conflictlab.arbitration.report`)
and ``arbitration_sensitivity.csv`` (mean absolute accuracy change per model, factor and condition).

The paper states its findings over Figure 4's bars, without numbers; a check compares this run's point
estimates as the sentence does, over the paper's models this run has (``arbitration.models``). Where a
sentence uses a word for a level, the check fixes it: "very high" is at least :data:`VERY_HIGH`,
"near zero" at most :data:`NEAR_ZERO`, "below chance" under :data:`CHANCE`; "generally" and "most"
mean more than half of the cells. A preference for numbers is accuracy with the numbers aligned minus
with the text aligned, in the conflict condition, averaged over the two evidence orders.
"""

from __future__ import annotations

import itertools

from conflictlab.arbitration.prompts import ORDERS, SETTINGS
from conflictlab.report.claim_checks import Missing, cell, checked, mean, number, outcome, present, table
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Reads

MODELS = "arbitration.models"
QWEN3 = ("Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B")  # by size
GEMMA, LLAMA, MISTRAL = "Gemma-2-9B-It", "Llama-3-8B-Instruct", "Mistral-7B-Instruct-v0.3"
PAPER_MODELS = (*QWEN3, GEMMA, LLAMA, MISTRAL)
SOURCES = ("numbers", "text")
ALIGNED_FIRST, ALIGNED_LAST = ORDERS
VERY_HIGH, NEAR_ZERO, CHANCE = 0.9, 0.1, 0.5
ACCURACY, SENSITIVITY = "arbitration_accuracy", "arbitration_sensitivity"


def _acc(ctx: ClaimContext, ours: str, setting: str, order: str, source: str, condition: str = "conflict") -> float:
    return cell(
        ctx, ACCURACY, "accuracy", model=ours, setting=setting, order=order, condition=condition, aligned_source=source
    )


def _preference(ctx: ClaimContext, ours: str) -> float:
    """Numbers-aligned minus text-aligned conflict accuracy in the modality setting, mean over orders."""
    return mean(_acc(ctx, ours, "modality", o, "numbers") - _acc(ctx, ours, "modality", o, "text") for o in ORDERS)


def _setting_mean(ctx: ClaimContext, ours: str, setting: str, condition: str = "conflict") -> float:
    return mean(_acc(ctx, ours, setting, o, s, condition) for o in ORDERS for s in SOURCES)


@checked
def unimodal_high(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    found = {
        f"{name}: {source} only": _acc(ctx, ours, "modality", ALIGNED_FIRST, source, "unimodal")
        for name, ours in models.items()
        for source in SOURCES
    }
    low = [k for k, v in found.items() if v < VERY_HIGH]
    return outcome(not low, found, f"unimodal accuracy below {VERY_HIGH:g}: {', '.join(low)}")


@checked
def modality_preferences(ctx: ClaimContext) -> ClaimCheck:
    """Each Qwen3 model prefers numbers (numbers - text > 0); Llama's and Mistral's preference is below every Qwen3
    model's. "Comparatively stronger reliance on textual evidence" compares them with Qwen3 (the sentence's
    "whereas"): it asks for less preference for numbers than Qwen3's, not for a preference for text."""
    qwen = present(ctx, QWEN3, MODELS)
    textual = present(ctx, (LLAMA, MISTRAL), MODELS)
    found = {f"{name}: numbers - text": _preference(ctx, ours) for name, ours in {**qwen, **textual}.items()}
    least_qwen = min(found[f"{name}: numbers - text"] for name in qwen)
    wrong = [f"{name} (not > 0)" for name in qwen if found[f"{name}: numbers - text"] <= 0]
    wrong += [f"{name} (not below every Qwen3)" for name in textual if found[f"{name}: numbers - text"] >= least_qwen]
    return outcome(not wrong, found, f"the preference does not follow the sentence for {', '.join(wrong)}")


@checked
def gemma_balanced(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS, at_least=2)
    if GEMMA not in models:
        raise Missing(f"model absent: {GEMMA} is not in {MODELS}")
    gap = {f"{name}: |numbers - text|": abs(_preference(ctx, ours)) for name, ours in models.items()}
    most = min(gap, key=gap.get)
    return outcome(most.startswith(GEMMA), gap, f"the most balanced is {most.split(':')[0]}")


@checked
def no_monotonic_size(ctx: ClaimContext) -> ClaimCheck:
    qwen = present(ctx, QWEN3, MODELS, at_least=3)
    series = [_preference(ctx, ours) for ours in qwen.values()]
    steps = [b - a for a, b in itertools.pairwise(series)]
    monotonic = all(s > 0 for s in steps) or all(s < 0 for s in steps)
    return outcome(
        not monotonic,
        {f"{name}: numbers - text": v for name, v in zip(qwen, series)},
        "the numerical preference changes monotonically with size",
    )


def _later_wins(setting: str):
    """A check: conflict accuracy is higher with the aligned source last in more than half of the
    (model, source) cells."""

    @checked
    def check(ctx: ClaimContext) -> ClaimCheck:
        models = present(ctx, PAPER_MODELS, MODELS)
        found = {
            f"{name}, {source} aligned: last - first": _acc(ctx, ours, setting, ALIGNED_LAST, source)
            - _acc(ctx, ours, setting, ALIGNED_FIRST, source)
            for name, ours in models.items()
            for source in SOURCES
        }
        higher = sum(v > 0 for v in found.values())
        return outcome(
            2 * higher > len(found),
            {**found, "cells higher when last": higher, "cells": len(found)},
            f"higher with the aligned source last in {higher} of {len(found)} cells",
        )

    return check


@checked
def qwen3_below_chance(ctx: ClaimContext) -> ClaimCheck:
    larger = present(ctx, QWEN3[2:], MODELS)
    found = {
        f"{name}, text aligned, {order}": _acc(ctx, ours, "modality", order, "text")
        for name, ours in larger.items()
        for order in ORDERS
    }
    return outcome(
        any(v < CHANCE for v in found.values()), found, f"no text-aligned conflict accuracy below {CHANCE:g}"
    )


@checked
def recency_stronger(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    found = {
        name: (_setting_mean(ctx, ours, "recency"), _setting_mean(ctx, ours, "modality"))
        for name, ours in models.items()
    }
    weaker = [name for name, (recency, modality) in found.items() if recency <= modality]
    numbers = {f"{name}: {s}": v for name, pair in found.items() for s, v in zip(("recency", "modality"), pair)}
    return outcome(not weaker, numbers, f"recency conflict accuracy not above modality's for {', '.join(weaker)}")


def _gemma_order_stable(setting: str):
    """A check: Gemma's conflict accuracy in ``setting`` changes least of the models between the two evidence
    orders (|last - first|, mean over aligned sources)."""

    @checked
    def check(ctx: ClaimContext) -> ClaimCheck:
        models = present(ctx, PAPER_MODELS, MODELS, at_least=2)
        if GEMMA not in models:
            raise Missing(f"model absent: {GEMMA} is not in {MODELS}")
        gap = {
            name: abs(
                mean(
                    _acc(ctx, ours, setting, ALIGNED_LAST, s) - _acc(ctx, ours, setting, ALIGNED_FIRST, s)
                    for s in SOURCES
                )
            )
            for name, ours in models.items()
        }
        most = min(gap, key=gap.get)
        return outcome(
            most == GEMMA, {f"{k}: |last - first|": v for k, v in gap.items()}, f"the least order-sensitive is {most}"
        )

    return check


def _drop(ctx: ClaimContext, ours: str, setting: str) -> float:
    """Unimodal minus conflict accuracy in ``setting``, mean over orders and aligned sources."""
    return _setting_mean(ctx, ours, setting, "unimodal") - _setting_mean(ctx, ours, setting)


@checked
def reliability_weaker(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    drops = {name: (_drop(ctx, ours, "reliability"), _drop(ctx, ours, "recency")) for name, ours in models.items()}
    larger = sum(rel > rec for rel, rec in drops.values())
    numbers = {
        f"{name}: drop, {s}": v for name, pair in drops.items() for s, v in zip(("reliability", "recency"), pair)
    }
    return outcome(
        2 * larger > len(drops), numbers, f"the reliability drop is larger for {larger} of {len(drops)} models"
    )


@checked
def tool_strongest(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    drops = {setting: mean(_drop(ctx, ours, setting) for ours in models.values()) for setting in SETTINGS}
    strongest = max(drops, key=drops.get)
    return outcome(
        strongest == "tool", {f"mean drop, {s}": v for s, v in drops.items()}, f"the largest mean drop is {strongest}'s"
    )


@checked
def tool_near_zero(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, (*QWEN3, GEMMA), MODELS)
    found = {
        f"{name}, {source} context first": _acc(ctx, ours, "tool", ALIGNED_FIRST, source)
        for name, ours in models.items()
        for source in SOURCES
    }
    near = sum(v <= NEAR_ZERO for v in found.values())
    return outcome(
        2 * near >= len(found),
        {**found, "cells near zero": near, "cells": len(found)},
        f"{near} of {len(found)} cells at or below {NEAR_ZERO:g}",
    )


@checked
def llama_mistral_resist_tool(ctx: ClaimContext) -> ClaimCheck:
    resist = present(ctx, (LLAMA, MISTRAL), MODELS)
    others = present(ctx, (*QWEN3, GEMMA), MODELS)
    found = {name: _setting_mean(ctx, ours, "tool") for name, ours in {**resist, **others}.items()}
    worst_resisting, best_other = min(found[n] for n in resist), max(found[n] for n in others)
    return outcome(
        worst_resisting > best_other,
        {f"{k}: tool conflict accuracy": v for k, v in found.items()},
        "a Qwen3 or Gemma model is at least as accurate under tool conflict as Llama or Mistral",
    )


@checked
def tool_amplifies(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, (*QWEN3, GEMMA), MODELS)
    drops = {name: (_drop(ctx, ours, "tool"), _drop(ctx, ours, "modality")) for name, ours in models.items()}
    smaller = [name for name, (tool, modality) in drops.items() if tool <= modality]
    numbers = {f"{name}: drop, {s}": v for name, pair in drops.items() for s, v in zip(("tool", "modality"), pair)}
    return outcome(not smaller, numbers, f"the tool drop is not above the modality drop for {', '.join(smaller)}")


def _sensitivity(ctx: ClaimContext, ours: str, condition: str, factors: tuple[str, ...] | None = None) -> float:
    """Mean over ``factors`` (None: every factor this run swept) of ``ours``' mean absolute accuracy change."""
    rows = [
        r
        for r in table(ctx, SENSITIVITY)
        if r.get("model") == ours
        and r.get("condition") == condition
        and (factors is None or r.get("factor") in factors)
    ]
    values = [number(r.get("mean_abs_delta")) for r in rows]
    if not values or None in values:
        swept = f"factors {', '.join(factors)}" if factors else "any factor"
        raise Missing(f"no mean_abs_delta of {ours}, {condition}, {swept} in results/tables/{SENSITIVITY}.csv")
    return mean(values)


@checked
def sensitivity_text_low(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    factors = ("domain", "choices")
    found = {
        c: mean(_sensitivity(ctx, ours, c, factors) for ours in models.values())
        for c in ("text only", "numbers only", "conflict")
    }
    text = found["text only"]
    return outcome(
        text < found["numbers only"] and text < found["conflict"],
        {f"mean |change|, {k}": v for k, v in found.items()},
        "text-only sensitivity is not the lowest",
    )


@checked
def qwen3_14b_stable(ctx: ClaimContext) -> ClaimCheck:
    qwen = present(ctx, QWEN3, MODELS, at_least=2)
    if QWEN3[-1] not in qwen:
        raise Missing(f"model absent: {QWEN3[-1]} is not in {MODELS}")
    found = {
        name: mean(_sensitivity(ctx, ours, c) for c in ("text only", "numbers only", "conflict"))
        for name, ours in qwen.items()
    }
    most = min(found, key=found.get)
    return outcome(
        most == QWEN3[-1], {f"{k}: mean |change|": v for k, v in found.items()}, f"the most stable Qwen3 is {most}"
    )


@checked
def numbers_sensitive_margin_largest(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS)
    conditions = {
        c: mean(_sensitivity(ctx, ours, c) for ours in models.values()) for c in ("text only", "numbers only")
    }
    factors = sorted({r.get("factor") for r in table(ctx, SENSITIVITY)} - {None})
    by_factor = {f: mean(_sensitivity(ctx, ours, "numbers only", (f,)) for ours in models.values()) for f in factors}
    largest = max(by_factor, key=by_factor.get)
    holds = conditions["text only"] < conditions["numbers only"] and largest == "margin"
    numbers = {f"mean |change|, {k}": v for k, v in conditions.items()}
    numbers |= {f"numbers only, {f}": v for f, v in by_factor.items()}
    return outcome(holds, numbers, f"numbers-only not above text-only, or the largest factor is {largest}")


@checked
def length_sensitive(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, PAPER_MODELS, MODELS, at_least=3)
    for name in ("Qwen3-4B", GEMMA):
        if name not in models:
            raise Missing(f"model absent: {name} is not in {MODELS}")
    found = {name: _sensitivity(ctx, ours, "conflict", ("T",)) for name, ours in models.items()}
    median = sorted(found.values())[len(found) // 2]
    holds = found["Qwen3-4B"] > median and found[GEMMA] > median
    return outcome(
        holds,
        {f"{k}: conflict |change|, T": v for k, v in found.items()},
        "Qwen3-4B or Gemma is not above the models' median sensitivity to the series length",
    )


def _claim(key: str, quote: str, section: str, check, reads: tuple[Reads, ...]) -> Claim:
    return Claim("arbitration", key, quote, section, None, check, reads=reads)


def _reads(table: str, models: tuple[str, ...] = PAPER_MODELS, at_least: int | None = 1) -> tuple[Reads, ...]:
    """What a check reads (Claim.reads): ``table`` and the paper's ``models`` in arbitration.models, as its
    present() asks for them."""
    return (Reads(table, models, MODELS, at_least),)


CLAIMS: tuple[Claim, ...] = (
    _claim(
        "unimodal-high",
        "all models achieve very high unimodal accuracy, indicating that performance differences in the "
        "conflicting setting primarily reflect arbitration behaviour rather than intrinsic task difficulty.",
        "§4.1",
        unimodal_high,
        _reads(ACCURACY),
    ),
    _claim(
        "modality-preferences",
        "Qwen3 models consistently favour numerical evidence, whereas Llama and Mistral models show "
        "comparatively stronger reliance on textual evidence.",
        "§4.1",
        modality_preferences,
        _reads(ACCURACY, (*QWEN3, LLAMA, MISTRAL)),
    ),
    _claim(
        "gemma-balanced",
        "Gemma exhibits the most balanced behaviour between the two modalities.",
        "§4.1",
        gemma_balanced,
        _reads(ACCURACY, at_least=2) + _reads(ACCURACY, (GEMMA,)),
    ),
    _claim(
        "no-monotonic-size",
        "No clear monotonic relationship with model size is observed.",
        "§4.1",
        no_monotonic_size,
        _reads(ACCURACY, QWEN3, at_least=3),
    ),
    _claim(
        "later-evidence-wins",
        "Accuracy is generally higher when the source aligned with the ground truth appears later in "
        "the prompt, revealing a strong prompt recency effect.",
        "§4.1",
        _later_wins("modality"),
        _reads(ACCURACY),
    ),
    _claim(
        "qwen3-below-chance",
        "In several conditions, larger Qwen3 variants even fall below chance",
        "§4.1",
        qwen3_below_chance,
        _reads(ACCURACY, QWEN3[2:]),
    ),
    _claim(
        "recency-stronger",
        "compared to the baseline modality prior setting, the temporal recency setting produces much "
        "stronger and more consistent arbitration behaviour across model families",
        "§4.2",
        recency_stronger,
        _reads(ACCURACY),
    ),
    _claim(
        "recency-later-wins",
        "performance is generally higher when the most recent source is presented later in the prompt",
        "§4.2",
        _later_wins("recency"),
        _reads(ACCURACY),
    ),
    _claim(
        "gemma-order-consistent",
        "Gemma exhibits the most consistent behaviour, maintaining high accuracy regardless of evidence order.",
        "§4.2",
        _gemma_order_stable("recency"),
        _reads(ACCURACY, at_least=2) + _reads(ACCURACY, (GEMMA,)),
    ),
    _claim(
        "gemma-order-stable-reliability",
        "Gemma again exhibits the most stable behaviour across ordering conditions",
        "§4.3",
        _gemma_order_stable("reliability"),
        _reads(ACCURACY, at_least=2) + _reads(ACCURACY, (GEMMA,)),
    ),
    _claim(
        "reliability-weaker",
        "reliability conflicts produce larger performance drops than temporal recency conflicts across "
        "most models, suggesting that explicit source reliability is a weaker arbitration cue than temporal recency.",
        "§4.3",
        reliability_weaker,
        _reads(ACCURACY),
    ),
    _claim(
        "tool-strongest",
        "show that tool forecast conflicts produce the strongest degradation observed across all experiments",
        "§4.4",
        tool_strongest,
        _reads(ACCURACY),
    ),
    _claim(
        "tool-context-last",
        "Accuracy improves substantially when the contextual evidence is presented after the tool "
        "forecast, indicating that later evidence can partially mitigate over-reliance on the external prediction.",
        "§4.4",
        _later_wins("tool"),
        _reads(ACCURACY),
    ),
    _claim(
        "tool-near-zero",
        "These models are particularly susceptible when the ground-truth-aligned contextual evidence "
        "appears first, often achieving near-zero accuracy despite perfectly predictive contextual evidence.",
        "§4.4",
        tool_near_zero,
        _reads(ACCURACY, (*QWEN3, GEMMA)),
    ),
    _claim(
        "tool-amplifies",
        "Relative to the baseline modality-prior experiments, the introduction of an explicit forecast greatly "
        "amplifies "
        "arbitration failures, especially for Qwen3 and Gemma.",
        "§4.4",
        tool_amplifies,
        _reads(ACCURACY, (*QWEN3, GEMMA)),
    ),
    _claim(
        "llama-mistral-resist-tool",
        "Llama and Mistral are substantially less influenced by incorrect tool forecasts, "
        "frequently retaining relatively high accuracy even in the conflicting setting.",
        "§4.4",
        llama_mistral_resist_tool,
        _reads(ACCURACY, (LLAMA, MISTRAL)) + _reads(ACCURACY, (*QWEN3, GEMMA)),
    ),
    _claim(
        "sensitivity-text-low",
        "sensitivity to both domain specialization and answer choice configuration is generally low "
        "in text-only settings, but more noticeable effects emerge in numeric-only and conflicting settings "
        "for several "
        "models.",
        "§4.5",
        sensitivity_text_low,
        _reads(SENSITIVITY),
    ),
    _claim(
        "qwen3-14b-stable",
        "Robustness also tends to improve with scale within the Qwen3 family, with the 14B model "
        "remaining comparatively stable across all settings.",
        "§4.5",
        qwen3_14b_stable,
        _reads(SENSITIVITY, QWEN3, at_least=2) + _reads(SENSITIVITY, (QWEN3[-1],)),
    ),
    _claim(
        "numbers-sensitive-margin",
        "In contrast, numeric-only settings are generally more sensitive, particularly for Qwen3-1.7B, Llama, and "
        "Mistral, "
        "with margin range perturbations producing the largest effects.",
        "Appendix E",
        numbers_sensitive_margin_largest,
        _reads(SENSITIVITY),
    ),
    _claim(
        "length-sensitive",
        "some models, especially Qwen3-4B and Gemma, exhibit substantial sensitivity to time series length despite "
        "stable unimodal performance.",
        "Appendix E",
        length_sensitive,
        _reads(SENSITIVITY, at_least=3) + _reads(SENSITIVITY, (QWEN3[1], GEMMA), at_least=None),
    ),
)

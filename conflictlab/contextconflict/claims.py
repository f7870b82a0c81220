"""The ContextConflict paper's result sentences (:class:`~conflictlab.report.reproduction.Claim`), each with a
check over this run's result tables.

Tables read (``ClaimContext.tables``, by CSV stem; rates are proportions, read here in the paper's %):
``accuracy``, ``balance``, ``faithfulness``, ``position_shares``, ``shuffled_positions_<model>``, ``table3``,
``table4``, ``table6``, ``table6_agreement`` (``results/tables/``), and the mechanistic tables
``mechanistic_{probes,spectral,projection,subset_probes}_<model>`` (``results/mechanistic/<model>/*.parquet``
under those stems). A check compares point estimates, as the paper's sentences do, over the paper's models
this run has, and returns the numbers it used; where a sentence's words need a threshold ("minor",
"nearly identical", "near chance") the check's docstring gives it and why.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from conflictlab.contextconflict.conflict_types import TASK_FAMILY
from conflictlab.contextconflict.variants import SteeringVariant
from conflictlab.report.claim_checks import (
    NOT_COMPARABLE,
    Missing,
    cell,
    checked,
    mean,
    number,
    outcome,
    present,
    table,
)
from conflictlab.report.paper_models import paper_model_name
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Reads

PAPER = "contextconflict"
GENERATORS, STEERING, MECHANISTIC = "generators", "steering.models", "mechanistic.models"
# The seven models as the captions of Figures 23-29 print them.
SEVEN = (
    "llama-3.1-8b-instruct",
    "llama-3.1-70b-instruct",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "gpt-5",
    "claude-4.5-sonnet",
    "gemini-2.5-pro",
)
LLAMA, GPT_OSS_20B = "Llama-3.1-8B-Instruct", "GPT-OSS-20B"
# The seven models with a published parameter count, smallest first (Appendix D.5: "ranging from 8B to 120B
# parameters"); GPT-5, Claude-4.5-Sonnet and Gemini-2.5-Pro publish none, so no size order places them.
BY_SIZE = ("llama-3.1-8b-instruct", "gpt-oss-20b", "llama-3.1-70b-instruct", "gpt-oss-120b")
PRINTED_BALANCE = {"gpt-oss-20b": " (paper 39.8)", "gpt-oss-120b": " (paper 31.9)"}  # §3.3
DEFAULT_SCORER, ROBUSTNESS_SCORERS = "Llama-3.2-1B", ("Llama-3.1-8B", "Gemma-2B")
REASONING = tuple(t for t, family in TASK_FAMILY.items() if family == "reasoning")
SUMMARIZATION = tuple(t for t, family in TASK_FAMILY.items() if family == "summarization")
AUC_HIGH = 0.85  # §4.1: "high separability (AUC > 0.85)"
TOLERANCE = 3.0  # points: the default equivalence margin of a percentage, the most a "minor" change may be
BASE, ALL_TOKENS, FIRST_GENERATED, CAS = (
    SteeringVariant(m, a).format()
    for m, a in (("base", 0.0), ("all_tokens", 1.0), ("first_generated", 1.0), ("cas", 1.0))
)


# --------------------------------------------------------------------------
# Reading the tables


def _accuracy(ctx: ClaimContext, ours: str, conflict_type: str) -> float:
    """Unsteered accuracy (%) of this run's model ``ours`` on ``conflict_type`` (every sample of the type)."""
    return cell(ctx, "accuracy", "accuracy", scale=100.0, model=ours, conflict_type=conflict_type, level="type")


def _table4(ctx: ClaimContext, ours: str, variant: str, metric: str, conflict_type: str) -> float:
    """Table 4: ``metric`` (%) of ``ours`` under steering ``variant`` on the test split."""
    return cell(
        ctx, "table4", "value", scale=100.0, model=ours, variant=variant, metric=metric, conflict_type=conflict_type
    )


def _scorer(ctx: ClaimContext, rows: Sequence[Mapping], paper_name: str, stem: str) -> str:
    """The scorer column's value that is the paper's scorer ``paper_name``."""
    for scorer in dict.fromkeys(r.get("scorer") for r in rows):
        if scorer and paper_model_name(scorer, ctx.sources.get(scorer), [paper_name]):
            return scorer
    raise Missing(f"scorer absent: {paper_name} scores no row of results/tables/{stem}.csv")


def _balance(ctx: ClaimContext, ours: str, conflict_type: str) -> float:
    """Balance (normalised Gini, %) of ``ours`` on ``conflict_type`` under the paper's default scorer."""
    scorer = _scorer(ctx, table(ctx, "balance"), DEFAULT_SCORER, "balance")
    return cell(
        ctx, "balance", "balance", scale=100.0, model=ours, scorer=scorer, conflict_type=conflict_type, group="all"
    )


def _first_shares(ctx: ClaimContext, stem: str, ours: str, types: Iterable[str]) -> dict[str, tuple[float, float]]:
    """Per conflict type: (share of the first evidence piece, its share under uniform use), both in % and pooled
    over evidence counts, weighting each count's mean by its samples (the paper's shares are pooled; the table
    gives them per count). Default scorer."""
    rows = table(ctx, stem)
    scorer = _scorer(ctx, rows, DEFAULT_SCORER, stem)
    out = {}
    for conflict_type in types:
        first = [
            r
            for r in rows
            if r.get("model") == ours
            and r.get("scorer") == scorer
            and r.get("conflict_type") == conflict_type
            and number(r.get("position")) == 1
        ]
        weights = [number(r.get("n_samples")) or 0 for r in first]
        if sum(weights) < 2:
            raise Missing(f"fewer than 2 samples of {ours} on {conflict_type} in results/tables/{stem}.csv")
        share = sum(w * number(r["mean_share"]) for w, r in zip(weights, first)) / sum(weights)
        chance = sum(w * number(r["chance"]) for w, r in zip(weights, first)) / sum(weights)
        out[conflict_type] = (100 * share, 100 * chance)
    return out


def _by_layer(ctx: ClaimContext, stem: str, column: str, **where) -> dict[int, float]:
    """``{layer: column}`` of the mechanistic table ``stem`` (rows matching ``where``)."""
    rows = [r for r in table(ctx, stem) if all(str(r.get(k)) == str(v) for k, v in where.items())]
    values = {int(r["layer"]): number(r.get(column)) for r in rows if number(r.get(column)) is not None}
    if not values:
        raise Missing(f"no {column} of " + ", ".join(f"{k} = {v}" for k, v in where.items()) + f" in {stem}")
    return dict(sorted(values.items()))


def _mechanistic(ctx: ClaimContext, kind: str, paper_name: str = LLAMA) -> str:
    """The stem of this run's mechanistic table ``kind`` of the paper's model ``paper_name``."""
    ours = present(ctx, [paper_name], MECHANISTIC)[paper_name]
    return f"mechanistic_{kind}_{ours}"


def _first_layer_above(curve: Mapping[int, float], threshold: float) -> int:
    """The first layer whose value exceeds ``threshold``; one past the last layer where none does."""
    return next((layer for layer, value in curve.items() if value > threshold), max(curve) + 1)


# --------------------------------------------------------------------------
# §3.3 Evaluation results


@checked
def difficulty_hierarchy(ctx: ClaimContext) -> ClaimCheck:
    """The highest unsteered accuracy of the paper's models per reasoning type:
    temporal > misinformation > inferential."""
    models = present(ctx, SEVEN, GENERATORS, at_least=2)
    best = {
        t: max(_accuracy(ctx, ours, t) for ours in models.values())
        for t in ("temporal", "misinformation", "inferential")
    }
    numbers = {
        f"highest {t} accuracy (paper {paper})": best[t]
        for t, paper in (("temporal", 68.0), ("misinformation", 61.5), ("inferential", 44.3))
    }
    return outcome(
        best["temporal"] > best["misinformation"] > best["inferential"],
        numbers,
        "the highest accuracies are not ordered temporal > misinformation > inferential",
    )


@checked
def inferential_below_half(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, SEVEN, GENERATORS)
    accuracy = {f"{name}: inferential accuracy": _accuracy(ctx, ours, "inferential") for name, ours in models.items()}
    return outcome(max(accuracy.values()) < 50, accuracy, "a model reaches 50% inferential accuracy")


@checked
def capacity_scaling(ctx: ClaimContext) -> ClaimCheck:
    models = present(ctx, ["llama-3.1-8b-instruct", "claude-4.5-sonnet"], GENERATORS, at_least=2)
    small, large = (_accuracy(ctx, models[n], "inferential") for n in ("llama-3.1-8b-instruct", "claude-4.5-sonnet"))
    return outcome(
        large > small,
        {"llama-3.1-8b-instruct (paper 24.8)": small, "claude-4.5-sonnet (paper 44.3)": large},
        "claude-4.5-sonnet's inferential accuracy is not above llama-3.1-8b-instruct's",
    )


@checked
def balance_not_monotonic(ctx: ClaimContext) -> ClaimCheck:
    """Balance (mean over the three summarization types: the text does not say which type or average its 31.9 and
    39.8 are) is not monotonic in model size: over the paper's models of published size present (:data:`BY_SIZE`,
    at least three, smallest first) it both rises and falls between neighbours. Two sizes can never show it, so the
    paper's own pair (120B 31.9 below 20B 39.8, a fall with size) cannot decide the claim alone: it needs a third
    size, which the paper's lost Table 4 cells hold."""
    models = present(ctx, BY_SIZE, GENERATORS, at_least=3)
    balance = {name: mean(_balance(ctx, ours, t) for t in SUMMARIZATION) for name, ours in models.items()}
    steps = [b - a for a, b in itertools.pairwise(balance.values())]
    numbers = {f"{name} mean Balance{PRINTED_BALANCE.get(name, '')}": v for name, v in balance.items()}
    return outcome(
        any(s > 0 for s in steps) and any(s < 0 for s in steps),
        numbers,
        "Balance changes monotonically with size over " + ", ".join(balance),
    )


@checked
def faithfulness_higher_on_summarization(ctx: ClaimContext) -> ClaimCheck:
    """Per model, mean Faithfulness over the summarization types above that over the reasoning types."""
    models = present(ctx, SEVEN, GENERATORS)
    numbers, lower = {}, []
    for name, ours in models.items():
        fth = {
            family: mean(
                cell(ctx, "faithfulness", "faithfulness", n_column="n_scored", scale=100.0, model=ours, conflict_type=t)
                for t in types
            )
            for family, types in (("summarization", SUMMARIZATION), ("reasoning", REASONING))
        }
        numbers |= {f"{name}: {family} Faithfulness": value for family, value in fth.items()}
        if not fth["summarization"] > fth["reasoning"]:
            lower.append(name)
    return outcome(not lower, numbers, f"Faithfulness is not higher on summarization for {', '.join(lower)}")


# --------------------------------------------------------------------------
# §4 Analysis (mechanistic tables of Llama-3.1-8B-Instruct; Appendix D.2 for GPT-OSS-20B)


def _peak_auc(ctx: ClaimContext, paper_name: str) -> dict[str, float]:
    """Per conflict type, the highest probe AUC in the mid-to-late layers (the upper two thirds of the depth)."""
    stem = _mechanistic(ctx, "probes", paper_name)
    peaks = {}
    for conflict_type in TASK_FAMILY:
        curve = _by_layer(ctx, stem, "probe_auc", conflict_type=conflict_type)
        later = [v for layer, v in curve.items() if layer > max(curve) / 3]
        peaks[conflict_type] = max(later or curve.values())
    return peaks


@checked
def most_types_separable(ctx: ClaimContext) -> ClaimCheck:
    """ "Most" conflict types: at least four of the six reach AUC > 0.85 in the upper two thirds of the layers."""
    peaks = _peak_auc(ctx, LLAMA)
    high = [t for t, v in peaks.items() if v > AUC_HIGH]
    return outcome(
        len(high) >= 4,
        {f"{t}: highest AUC, mid-to-late layers": v for t, v in peaks.items()},
        f"only {len(high)} of 6 types reach AUC > {AUC_HIGH}",
    )


@checked
def awareness_order(ctx: ClaimContext) -> ClaimCheck:
    """Emergence layer (the first whose AUC exceeds 0.85): temporal and ambiguity before inferential and
    misinformation."""
    stem = _mechanistic(ctx, "probes")
    first = {
        t: _first_layer_above(_by_layer(ctx, stem, "probe_auc", conflict_type=t), AUC_HIGH)
        for t in ("temporal", "ambiguity", "inferential", "misinformation")
    }
    early, late = max(first["temporal"], first["ambiguity"]), min(first["inferential"], first["misinformation"])
    return outcome(
        early < late,
        {f"{t}: first layer with AUC > {AUC_HIGH}": v for t, v in first.items()},
        "temporal or ambiguity does not emerge before inferential and misinformation",
    )


@checked
def granularity_u_perspective_peak(ctx: ClaimContext) -> ClaimCheck:
    """Granularity's AUC is lowest in the middle third of the layers and higher at both ends; perspective's peaks in
    the middle third and ends below its peak."""
    stem = _mechanistic(ctx, "probes")
    gran, persp = (_by_layer(ctx, stem, "probe_auc", conflict_type=t) for t in ("granularity", "perspective"))

    def thirds(curve):
        layers = list(curve)
        k = max(1, len(layers) // 3)
        return (
            [curve[x] for x in layers[:k]],
            [curve[x] for x in layers[k:-k] or layers],
            [curve[x] for x in layers[-k:]],
        )

    g_low, g_mid, g_high = thirds(gran)
    p_low, p_mid, p_high = thirds(persp)
    u_shape = min(g_mid) < min(min(g_low), min(g_high)) and min(g_mid) < mean(g_low) and min(g_mid) < mean(g_high)
    peak = max(p_mid) >= max(max(p_low), max(p_high)) and persp[max(persp)] < max(p_mid)
    numbers = {
        "granularity: lowest AUC, first / middle / last third": " / ".join(
            f"{min(x):.3f}" for x in (g_low, g_mid, g_high)
        ),
        "perspective: highest AUC, first / middle / last third": " / ".join(
            f"{max(x):.3f}" for x in (p_low, p_mid, p_high)
        ),
        "perspective: last layer's AUC": persp[max(persp)],
    }
    return outcome(
        u_shape and peak,
        numbers,
        ("granularity is no U-shape" if not u_shape else "")
        + ("; " if not (u_shape or peak) else "")
        + ("perspective does not peak mid-depth" if not peak else ""),
    )


def _mean_delta_er(ctx: ClaimContext) -> dict[str, float]:
    """Per conflict type, ΔER averaged over the layers where it is not trivially 0 (every ER 1 at tiny n)."""
    stem = _mechanistic(ctx, "spectral")
    out = {}
    for conflict_type in TASK_FAMILY:
        rows = [r for r in table(ctx, stem) if r.get("conflict_type") == conflict_type and not r.get("trivial")]
        values = [number(r.get("delta_er")) for r in rows if number(r.get("delta_er")) is not None]
        if not values:
            raise Missing(f"no non-trivial ΔER of {conflict_type} in {stem}")
        out[conflict_type] = mean(values)
    return out


@checked
def delta_er_signs(ctx: ClaimContext) -> ClaimCheck:
    """Layer-mean ΔER: temporal > 0; granularity and ambiguity < 0."""
    er = _mean_delta_er(ctx)
    holds = er["temporal"] > 0 and er["granularity"] < 0 and er["ambiguity"] < 0
    return outcome(
        holds,
        {f"{t}: mean ΔER": er[t] for t in ("temporal", "granularity", "ambiguity")},
        "a sign differs from temporal > 0, granularity < 0, ambiguity < 0",
    )


@checked
def delta_er_reasoning_near_zero(ctx: ClaimContext) -> ClaimCheck:
    """ "Near zero": inferential's and misinformation's |mean ΔER| below that of each of temporal, granularity
    and ambiguity."""
    er = _mean_delta_er(ctx)
    near, signed = (
        max(abs(er["inferential"]), abs(er["misinformation"])),
        min(abs(er[t]) for t in ("temporal", "granularity", "ambiguity")),
    )
    return outcome(
        near < signed,
        {f"{t}: mean ΔER": er[t] for t in TASK_FAMILY},
        "inferential or misinformation is not nearer zero than the signed types",
    )


@checked
def perspective_layer_dependence(ctx: ClaimContext) -> ClaimCheck:
    """ "Strong layer-dependence": perspective's ΔER range over layers is the widest of the six types."""
    stem = _mechanistic(ctx, "spectral")
    spread = {}
    for conflict_type in TASK_FAMILY:
        curve = _by_layer(ctx, stem, "delta_er", conflict_type=conflict_type)
        spread[conflict_type] = max(curve.values()) - min(curve.values())
    return outcome(
        max(spread, key=spread.get) == "perspective",
        {f"{t}: ΔER range over layers": v for t, v in spread.items()},
        "another type's ΔER varies more over layers than perspective's",
    )


@checked
def projection_toward_first(ctx: ClaimContext) -> ClaimCheck:
    """At every layer, the combined representation's projection on the first piece (samples pooled over types and
    evidence counts) exceeds its mean projection on the later pieces."""
    rows = table(ctx, _mechanistic(ctx, "projection"))
    sums = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])  # layer -> first weighted sum, weight, later weighted sum, weight
    for r in rows:
        w, b = number(r.get("n_samples")) or 0, number(r.get("mean_b"))
        if b is None:
            continue
        acc = sums[int(r["layer"])]
        i = 0 if number(r.get("position")) == 1 else 2
        acc[i] += w * b
        acc[i + 1] += w
    gaps = {layer: s[0] / s[1] - s[2] / s[3] for layer, s in sorted(sums.items()) if s[1] and s[3]}
    if not gaps:
        raise Missing("no projections in this run's mechanistic table")
    behind = [layer for layer, gap in gaps.items() if gap <= 0]
    return outcome(
        not behind,
        {
            "layers": len(gaps),
            "smallest first-minus-later projection": min(gaps.values()),
            "layers where it is ≤ 0": len(behind),
        },
        f"the first piece does not lead at layers {', '.join(map(str, behind[:10]))}",
    )


@checked
def first_evidence_shares(ctx: ClaimContext) -> ClaimCheck:
    """The first piece's pooled share exceeds uniform use in each summarization type (Llama-3.1-8B-Instruct)."""
    ours = present(ctx, [LLAMA], GENERATORS)[LLAMA]
    shares = _first_shares(ctx, "position_shares", ours, ("ambiguity", "granularity", "perspective"))
    numbers = {}
    for (t, (share, chance)), paper in zip(shares.items(), (69.0, 38.4, 35.0)):
        numbers |= {f"{t}: first piece's share (paper {paper})": share, f"{t}: uniform share": chance}
    return outcome(
        all(s > c for s, c in shares.values()), numbers, "the first piece does not exceed uniform use in every type"
    )


def _first_dominates(ctx: ClaimContext, models: Mapping[str, str], stem_of) -> ClaimCheck:
    numbers, not_first = {}, []
    for name, ours in models.items():
        shares = _first_shares(ctx, stem_of(ours), ours, SUMMARIZATION)
        share, chance = mean(s for s, _ in shares.values()), mean(c for _, c in shares.values())
        numbers |= {f"{name}: first piece's share": share, f"{name}: uniform share": chance}
        if not share > chance:
            not_first.append(name)
    return outcome(not not_first, numbers, f"the first piece does not dominate for {', '.join(not_first)}")


@checked
def first_evidence_all_models(ctx: ClaimContext) -> ClaimCheck:
    """Per model, the first piece's share (mean over the summarization types) exceeds uniform use."""
    return _first_dominates(ctx, present(ctx, SEVEN, GENERATORS), lambda ours: "position_shares")


@checked
def first_evidence_after_shuffling(ctx: ClaimContext) -> ClaimCheck:
    """After shuffling, the piece presented first still takes more than a uniform share, on both models."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], GENERATORS, at_least=2)
    return _first_dominates(ctx, models, lambda ours: f"shuffled_positions_{ours}")


@checked
def causal_intervention(ctx: ClaimContext) -> ClaimCheck:
    """ "Substantially larger": on both models Δ_high exceeds Δ_low in the per-response paired test (mean of
    Δ_high − Δ_low above 0, sign-flip p < 0.05; its bootstrap-t interval shown where printed), not two marginal
    intervals of paired quantities compared."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], GENERATORS, at_least=2)
    numbers, not_larger = {}, []
    for name, ours in models.items():
        difference = cell(ctx, "table3", "high_minus_low", model=ours, conflict_type="all")
        p = cell(ctx, "table3", "p_high_vs_low", model=ours, conflict_type="all")
        numbers |= {f"{name}: mean Δ_high − Δ_low": difference, f"{name}: sign-flip p": p}
        for end in ("low", "high"):
            try:
                numbers[f"{name}: 95% {end}"] = cell(
                    ctx, "table3", f"high_minus_low_ci_{end}", model=ours, conflict_type="all"
                )
            except Missing:  # no interval below its minimum n (not shown): the test alone decides
                pass
        if not (difference > 0 and p < 0.05):
            not_larger.append(name)
    return outcome(not not_larger, numbers, f"Δ_high is not clearly above Δ_low for {', '.join(not_larger)}")


# --------------------------------------------------------------------------
# §5 Steering (Table 4, test split) and Appendix D.9


def _gain(ctx: ClaimContext, ours: str, variant: str, types: Sequence[str] = REASONING) -> float:
    """Mean accuracy gain (points) of ``variant`` over the unsteered run across ``types``."""
    return mean(_table4(ctx, ours, variant, "accuracy", t) - _table4(ctx, ours, BASE, "accuracy", t) for t in types)


@checked
def both_models_gain(ctx: ClaimContext) -> ClaimCheck:
    """All-Tokens raises the mean reasoning accuracy of both steered models (point estimates)."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], STEERING, at_least=2)
    gains = {
        f"{name}: mean reasoning accuracy gain, All-Tokens": _gain(ctx, ours, ALL_TOKENS)
        for name, ours in models.items()
    }
    return outcome(min(gains.values()) > 0, gains, "a model does not gain under All-Tokens")


@checked
def llama_balance_and_accuracy(ctx: ClaimContext) -> ClaimCheck:
    """Llama under All-Tokens: lower mean summarization Balance and higher mean reasoning accuracy than unsteered."""
    ours = present(ctx, [LLAMA], STEERING)[LLAMA]
    balance = {v: mean(_table4(ctx, ours, v, "balance", t) for t in SUMMARIZATION) for v in (BASE, ALL_TOKENS)}
    gain = _gain(ctx, ours, ALL_TOKENS)
    numbers = {
        "mean Balance, unsteered": balance[BASE],
        "mean Balance, All-Tokens": balance[ALL_TOKENS],
        "mean reasoning accuracy gain": gain,
        "temporal accuracy gain (paper +19.2)": _gain(ctx, ours, ALL_TOKENS, ("temporal",)),
    }
    return outcome(balance[ALL_TOKENS] < balance[BASE] and gain > 0, numbers, "Balance or accuracy does not improve")


# Table 4's caption: "All-Tokens and First-Generated are our two injection schedules of u(l)"; §5's comparison with
# CAS says "our u(l)" and names neither, nor does any other sentence of the copy. The two checks below read the
# sentence under each schedule and give a verdict only where both readings agree.
SCHEDULES = {"All-Tokens": ALL_TOKENS, "First-Generated": FIRST_GENERATED}


def _versus_cas(ctx: ClaimContext) -> dict[str, dict[tuple[str, str], tuple[float, float]]]:
    """Per reading of u(l) (:data:`SCHEDULES`): ``{(model, reasoning type): (u(l)'s accuracy, CAS's)}``."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], STEERING, at_least=2)
    return {
        reading: {
            (name, t): (_table4(ctx, ours, variant, "accuracy", t), _table4(ctx, ours, CAS, "accuracy", t))
            for name, ours in models.items()
            for t in REASONING
        }
        for reading, variant in SCHEDULES.items()
    }


def _under_both_readings(held: Mapping[str, bool], numbers: Mapping, fails_because: str) -> ClaimCheck:
    """``holds`` where the sentence holds reading u(l) as either schedule, ``fails`` where it holds under neither,
    else ``not comparable``: the verdict would rest on a reading the paper does not state."""
    if all(held.values()) or not any(held.values()):
        return outcome(all(held.values()), numbers, f"{fails_because} under both readings of u(l)")
    only = next(reading for reading, ok in held.items() if ok)
    shown = outcome(True, numbers, "").numbers
    return ClaimCheck(
        NOT_COMPARABLE,
        shown,
        f"holds reading u(l) as {only} only, and the paper does not say which schedule its u(l) is",
    )


@checked
def wins_five_of_six(ctx: ClaimContext) -> ClaimCheck:
    """u(l) beats CAS in at least five of the six model × reasoning-type accuracies, read under each schedule."""
    pairs = _versus_cas(ctx)
    won = {reading: sum(ours > cas for ours, cas in wins.values()) for reading, wins in pairs.items()}
    numbers = {
        f"{m} {t}: {reading} / CAS": f"{a:.1f} / {c:.1f}"
        for reading, wins in pairs.items()
        for (m, t), (a, c) in wins.items()
    }
    numbers |= {f"wins, u(l) read as {reading}": n for reading, n in won.items()}
    return _under_both_readings({r: n >= 5 for r, n in won.items()}, numbers, "u(l) wins fewer than 5 of 6")


@checked
def cas_exception(ctx: ClaimContext) -> ClaimCheck:
    """On GPT-OSS-20B temporal, CAS above u(l), read under each schedule (the paper's pair: 65.5 vs. 64.1)."""
    pairs = {reading: wins[(GPT_OSS_20B, "temporal")] for reading, wins in _versus_cas(ctx).items()}
    numbers = {"GPT-OSS-20B temporal, CAS (paper 65.5)": pairs["All-Tokens"][1]}
    numbers |= {f"GPT-OSS-20B temporal, u(l) read as {r} (paper 64.1)": ours for r, (ours, _) in pairs.items()}
    return _under_both_readings(
        {r: cas > ours for r, (ours, cas) in pairs.items()}, numbers, "CAS does not beat u(l) on GPT-OSS-20B temporal"
    )


@checked
def all_tokens_largest_gain(ctx: ClaimContext) -> ClaimCheck:
    """Per steered model, All-Tokens' mean reasoning accuracy gain is above First-Generated's."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], STEERING)
    numbers, smaller = {}, []
    for name, ours in models.items():
        a, f = _gain(ctx, ours, ALL_TOKENS), _gain(ctx, ours, FIRST_GENERATED)
        numbers |= {f"{name}: gain, All-Tokens": a, f"{name}: gain, First-Generated": f}
        if not a > f:
            smaller.append(name)
    return outcome(not smaller, numbers, f"First-Generated gains more for {', '.join(smaller)}")


@checked
def minor_faithfulness_decrease(ctx: ClaimContext) -> ClaimCheck:
    """ "Minor decrease": mean reasoning Faithfulness under All-Tokens below the unsteered run's, by at most 3 points
    (the default equivalence margin of a percentage), on each steered model."""
    models = present(ctx, [LLAMA, GPT_OSS_20B], STEERING)
    numbers, off = {}, []
    for name, ours in models.items():
        drop = mean(
            _table4(ctx, ours, BASE, "faithfulness", t) - _table4(ctx, ours, ALL_TOKENS, "faithfulness", t)
            for t in REASONING
        )
        numbers[f"{name}: reasoning Faithfulness drop, All-Tokens"] = drop
        if not 0 < drop <= TOLERANCE:
            off.append(name)
    return outcome(not off, numbers, f"no minor decrease (0 < drop ≤ {TOLERANCE} points) for {', '.join(off)}")


def _alpha(ctx: ClaimContext, ours: str, method: str, alpha: float, conflict_type: str) -> float:
    return _table4(ctx, ours, SteeringVariant(method, alpha).format(), "accuracy", conflict_type)


@checked
def alpha_improves(ctx: ClaimContext) -> ClaimCheck:
    """Llama: accuracy at α = 1.5 above α = 0.5 for each reasoning type under both schedules, and within 3 points of
    it at α = 2.0 ("changes only modestly")."""
    ours = present(ctx, [LLAMA], STEERING)[LLAMA]
    numbers, off = {}, []
    for method in ("all_tokens", "first_generated"):
        for t in REASONING:
            a05, a15, a20 = (_alpha(ctx, ours, method, a, t) for a in (0.5, 1.5, 2.0))
            numbers[f"{method} {t}: α 0.5 / 1.5 / 2.0"] = f"{a05:.1f} / {a15:.1f} / {a20:.1f}"
            if not (a15 > a05 and abs(a20 - a15) <= TOLERANCE):
                off.append(f"{method} {t}")
    return outcome(not off, numbers, f"not improving, or not stable at α = 2.0: {', '.join(off)}")


@checked
def temporal_largest_alpha_gain(ctx: ClaimContext) -> ClaimCheck:
    """Under First-Generated, temporal's largest gain over the unsteered run across the α sweep is the largest of the
    three reasoning types."""
    ours = present(ctx, [LLAMA], STEERING)[LLAMA]
    gains = {
        t: max(_alpha(ctx, ours, "first_generated", a, t) for a in (0.5, 1.0, 1.5, 2.0))
        - _table4(ctx, ours, BASE, "accuracy", t)
        for t in REASONING
    }
    return outcome(
        max(gains, key=gains.get) == "temporal",
        {f"{t}: largest First-Generated gain": g for t, g in gains.items()},
        "another reasoning type gains more than temporal",
    )


# --------------------------------------------------------------------------
# Appendix C.1 (Table 6) and D.2 (subset probes)


def _table6(ctx: ClaimContext, paper_scorer: str) -> tuple[str, Mapping[str, str]]:
    """The Balance column of Table 6 for the paper's scorer, and the paper's models this run has."""
    rows = table(ctx, "table6")
    scorers = [c[len("balance[") : -1] for c in (rows[0] if rows else {}) if c.startswith("balance[")]
    scorer = next((s for s in scorers if paper_model_name(s, ctx.sources.get(s), [paper_scorer])), None)
    if scorer is None:
        raise Missing(f"scorer absent: {paper_scorer} has no column of results/tables/table6.csv")
    return scorer, present(ctx, SEVEN, GENERATORS, at_least=2)


@checked
def gemini_best_ambiguity(ctx: ClaimContext) -> ClaimCheck:
    """gemini-2.5-pro has the lowest (best) Ambiguity Balance under both robustness scorers."""
    numbers, not_best = {}, []
    for paper_scorer in ROBUSTNESS_SCORERS:
        scorer, models = _table6(ctx, paper_scorer)
        if "gemini-2.5-pro" not in models:
            raise Missing("model absent: gemini-2.5-pro is not in generators")
        values = {
            name: cell(
                ctx,
                "table6",
                f"balance[{scorer}]",
                n_column=f"n[{scorer}]",
                scale=100.0,
                model=ours,
                conflict_type="ambiguity",
            )
            for name, ours in models.items()
        }
        numbers |= {f"{paper_scorer}: {name}": v for name, v in values.items()}
        if min(values, key=values.get) != "gemini-2.5-pro":
            not_best.append(paper_scorer)
    return outcome(not not_best, numbers, f"gemini-2.5-pro is not best under {', '.join(not_best)}")


@checked
def llama_highest_balance(ctx: ClaimContext) -> ClaimCheck:
    """llama-3.1-8b-instruct has the highest (least even) Balance in every summarization type under both scorers."""
    numbers, not_highest = {}, []
    for paper_scorer in ROBUSTNESS_SCORERS:
        scorer, models = _table6(ctx, paper_scorer)
        if "llama-3.1-8b-instruct" not in models:
            raise Missing("model absent: llama-3.1-8b-instruct is not in generators")
        for t in SUMMARIZATION:
            values = {
                name: cell(
                    ctx,
                    "table6",
                    f"balance[{scorer}]",
                    n_column=f"n[{scorer}]",
                    scale=100.0,
                    model=ours,
                    conflict_type=t,
                )
                for name, ours in models.items()
            }
            numbers[f"{paper_scorer} {t}: llama-3.1-8b-instruct"] = values["llama-3.1-8b-instruct"]
            numbers[f"{paper_scorer} {t}: highest other"] = max(
                v for n, v in values.items() if n != "llama-3.1-8b-instruct"
            )
            if max(values, key=values.get) != "llama-3.1-8b-instruct":
                not_highest.append(f"{paper_scorer} {t}")
    return outcome(not not_highest, numbers, f"not the highest: {', '.join(not_highest)}")


@checked
def rankings_across_scorers(ctx: ClaimContext) -> ClaimCheck:
    """ "Nearly identical" rankings: Kendall's τ (models ranked within each type) at least 0.8, at most 10% of model
    pairs discordant, between the default scorer and each robustness scorer."""
    rows = table(ctx, "table6_agreement")
    scorers = {s for r in rows for s in (r.get("scorer_a"), r.get("scorer_b")) if s}

    def ours(paper_name):
        found = next((s for s in scorers if paper_model_name(s, ctx.sources.get(s), [paper_name])), None)
        if found is None:
            raise Missing(f"scorer absent: {paper_name} is in no row of results/tables/table6_agreement.csv")
        return found

    default, numbers = ours(DEFAULT_SCORER), {}
    for paper_scorer in ROBUSTNESS_SCORERS:
        other = ours(paper_scorer)
        pair = [
            r
            for r in rows
            if {r.get("scorer_a"), r.get("scorer_b")} == {default, other} and r.get("level") == "within types"
        ]
        tau = number(pair[0].get("kendall_tau")) if len(pair) == 1 else None
        if tau is None:
            raise Missing(
                f"no Kendall τ of {default} against {other} within types in results/tables/table6_agreement.csv"
            )
        numbers[f"Kendall τ, {DEFAULT_SCORER} vs {paper_scorer}"] = tau
    return outcome(min(numbers.values()) >= 0.8, numbers, "a scorer pair ranks the models with τ < 0.8")


def _subset_auc(ctx: ClaimContext, subset: str) -> dict[int, float]:
    return _by_layer(ctx, _mechanistic(ctx, "subset_probes"), "probe_auc", subset=subset)


@checked
def explicit_inferential_higher(ctx: ClaimContext) -> ClaimCheck:
    """EntailmentBank's layer-mean AUC above FOLIO's, and FOLIO's last-layer AUC below its peak."""
    eb, folio = _subset_auc(ctx, "entailment_bank"), _subset_auc(ctx, "folio")
    numbers = {
        "EntailmentBank: mean AUC": mean(eb.values()),
        "FOLIO: mean AUC": mean(folio.values()),
        "FOLIO: last layer's AUC": folio[max(folio)],
        "FOLIO: highest AUC": max(folio.values()),
    }
    return outcome(
        mean(eb.values()) > mean(folio.values()) and folio[max(folio)] < max(folio.values()),
        numbers,
        "FOLIO is not below EntailmentBank, or does not decline in the last layers",
    )


@checked
def perspectrum_vs_allsides(ctx: ClaimContext) -> ClaimCheck:
    """Perspectrum's layer-mean AUC above 0.85; AllSides' within 0.15 of chance (0.5) at every layer."""
    persp, allsides = _subset_auc(ctx, "perspectrum"), _subset_auc(ctx, "allsides")
    far = max(abs(v - 0.5) for v in allsides.values())
    numbers = {
        "Perspectrum: mean AUC": mean(persp.values()),
        "AllSides: mean AUC": mean(allsides.values()),
        "AllSides: largest distance from 0.5": far,
    }
    return outcome(
        mean(persp.values()) > AUC_HIGH and far <= 0.15,
        numbers,
        "Perspectrum is not high, or AllSides is not near chance",
    )


@checked
def gpt_oss_awareness(ctx: ClaimContext) -> ClaimCheck:
    """GPT-OSS-20B: every type reaches AUC > 0.85 in the mid-to-late layers."""
    peaks = _peak_auc(ctx, GPT_OSS_20B)
    low = [t for t, v in peaks.items() if v <= AUC_HIGH]
    return outcome(
        not low,
        {f"{t}: highest AUC, mid-to-late layers": v for t, v in peaks.items()},
        f"AUC ≤ {AUC_HIGH} for {', '.join(low)}",
    )


HUMAN_LABELS = "the paper's human annotations are not released: no run can compute agreement with them"

STEERED = (LLAMA, GPT_OSS_20B)
_PROBES, _SPECTRAL = "mechanistic_probes_{model}", "mechanistic_spectral_{model}"
# What each claim's check reads (Claim.reads), by claim key: the tables and the models (``at_least`` as the check's
# present() asks) and scorers the plan needs a config to give, so it can say before the run whether a claim is
# checkable. Every claim with a check has an entry (tests/test_reproduction_verdicts.py runs each check on these
# tables alone).
READS: dict[str, tuple[Reads, ...]] = {
    "difficulty-hierarchy": (Reads("accuracy", SEVEN, at_least=2),),
    "capacity-scaling": (Reads("accuracy", ("llama-3.1-8b-instruct", "claude-4.5-sonnet"), at_least=None),),
    "inferential-below-half": (Reads("accuracy", SEVEN),),
    "balance-not-monotonic": (Reads("balance", BY_SIZE, at_least=3, scorers=(DEFAULT_SCORER,)),),
    "faithfulness-summarization": (Reads("faithfulness", SEVEN),),
    "causal-intervention": (Reads("table3", STEERED, at_least=None),),
    "scorer-rankings": (Reads("table6_agreement", scorers=(DEFAULT_SCORER, *ROBUSTNESS_SCORERS)),),
    "gemini-best-ambiguity": (
        Reads("table6", SEVEN, at_least=2, scorers=ROBUSTNESS_SCORERS),
        Reads("table6", ("gemini-2.5-pro",)),
    ),
    "llama-highest-balance": (
        Reads("table6", SEVEN, at_least=2, scorers=ROBUSTNESS_SCORERS),
        Reads("table6", ("llama-3.1-8b-instruct",)),
    ),
    "auc-above-0.85": (Reads(_PROBES, (LLAMA,), MECHANISTIC),),
    "awareness-order": (Reads(_PROBES, (LLAMA,), MECHANISTIC),),
    "granularity-u-perspective-peak": (Reads(_PROBES, (LLAMA,), MECHANISTIC),),
    "delta-er-signs": (Reads(_SPECTRAL, (LLAMA,), MECHANISTIC),),
    "delta-er-near-zero": (Reads(_SPECTRAL, (LLAMA,), MECHANISTIC),),
    "perspective-layer-dependence": (Reads(_SPECTRAL, (LLAMA,), MECHANISTIC),),
    "projection-first": (Reads("mechanistic_projection_{model}", (LLAMA,), MECHANISTIC),),
    "first-evidence-shares": (Reads("position_shares", (LLAMA,), scorers=(DEFAULT_SCORER,)),),
    "first-evidence-all-models": (Reads("position_shares", SEVEN, scorers=(DEFAULT_SCORER,)),),
    "both-models-gain": (Reads("table4", STEERED, STEERING, at_least=None),),
    "llama-balance-accuracy": (Reads("table4", (LLAMA,), STEERING),),
    "wins-five-of-six": (Reads("table4", STEERED, STEERING, at_least=None),),
    "cas-exception": (Reads("table4", STEERED, STEERING, at_least=None),),
    "all-tokens-largest": (Reads("table4", STEERED, STEERING),),
    "faithfulness-minor-decrease": (Reads("table4", STEERED, STEERING),),
    "gpt-oss-awareness": (Reads(_PROBES, (GPT_OSS_20B,), MECHANISTIC),),
    "explicit-inferential": (Reads("mechanistic_subset_probes_{model}", (LLAMA,), MECHANISTIC),),
    "perspectrum-allsides": (Reads("mechanistic_subset_probes_{model}", (LLAMA,), MECHANISTIC),),
    "shuffling": (Reads("shuffled_positions_{model}", STEERED, at_least=None, scorers=(DEFAULT_SCORER,)),),
    "alpha-improves": (Reads("table4", (LLAMA,), STEERING),),
    "alpha-temporal-largest": (Reads("table4", (LLAMA,), STEERING),),
}

CLAIMS: tuple[Claim, ...] = tuple(
    Claim(PAPER, key, quote, section, None, check, exclusion, READS[key] if check else ())
    for key, quote, section, check, exclusion in (
        (
            "difficulty-hierarchy",
            "On reasoning tasks, we observe a difficulty hierarchy: Temporal reaches the highest accuracy (up to "
            "68.0%), followed by Misinformation (up to 61.5%) and Inferential (up to 44.3%), indicating "
            "increasing difficulty.",
            "§3.3 'Task Difficulty and Model Scaling'",
            difficulty_hierarchy,
            None,
        ),
        (
            "capacity-scaling",
            "Performance scales with model capacity (Inferential: 24.8% on llama-3.1-8b-instruct vs. 44.3% on "
            "claude-4.5-sonnet)",
            "§3.3 'Task Difficulty and Model Scaling'",
            capacity_scaling,
            None,
        ),
        (
            "inferential-below-half",
            "yet Inferential stays below 50% even for the strongest model",
            "§3.3 'Task Difficulty and Model Scaling'",
            inferential_below_half,
            None,
        ),
        (
            "balance-not-monotonic",
            "Balance is also not monotonic in capacity (GPT-OSS-120B 31.9 vs. 20B 39.8)",
            "§3.3 'Pervasive Position Bias'",
            balance_not_monotonic,
            None,
        ),
        (
            "faithfulness-summarization",
            "Faithfulness is higher on summarization than on reasoning",
            "§3.3 'Faithfulness Patterns'",
            faithfulness_higher_on_summarization,
            None,
        ),
        (
            "kappa-human",
            "Our metric reaches κ=0.50 … against the human annotators (Table 2), comparable to inter-human "
            "agreement (κ=0.52 …) and to the LLM-as-a-Judge (κ=0.51 …).",
            "§3.2 'Human Evaluation and LLM-as-a-Judge'",
            None,
            HUMAN_LABELS,
        ),
        (
            "causal-intervention",
            "As Table 3 shows, removing the highest-contributing evidence causes substantially larger drops "
            "than removing the lowest, indicating that attribution rankings align with actual evidence dependence.",
            "§3.2 'Causal Intervention'",
            causal_intervention,
            None,
        ),
        (
            "scorer-rankings",
            "Crucially, model rankings by Balance remain nearly identical across scorers.",
            "Appendix C.1",
            rankings_across_scorers,
            None,
        ),
        (
            "gemini-best-ambiguity",
            "gemini-2.5-pro consistently achieves the best Balance scores in Ambiguity under both scorers",
            "Appendix C.1",
            gemini_best_ambiguity,
            None,
        ),
        (
            "llama-highest-balance",
            "llama-3.1-8b-instruct consistently shows the highest Balance scores across conflict types",
            "Appendix C.1",
            llama_highest_balance,
            None,
        ),
        (
            "auc-above-0.85",
            "Figure 2 illustrates that most conflict types reach high separability (AUC > 0.85) in mid-to-late "
            "layers, yet their developmental paths differ.",
            "§4.1",
            most_types_separable,
            None,
        ),
        ("awareness-order", "Temporal and ambiguity conflicts saturate earliest", "§4.1", awareness_order, None),
        (
            "granularity-u-perspective-peak",
            "granularity follows a U-shape, while perspective conflicts peak in middle layers "
            "before declining during viewpoint reconciliation",
            "§4.1",
            granularity_u_perspective_peak,
            None,
        ),
        (
            "delta-er-signs",
            "Temporal conflicts compress into low-rank representations (ΔER>0 …) … Conversely, granularity and "
            "ambiguity conflicts disperse across dimensions (ΔER<0 …)",
            "§4.2",
            delta_er_signs,
            None,
        ),
        (
            "delta-er-near-zero",
            "Inferential and misinformation conflicts hover near zero, suggesting that reasoning processes "
            "reweight existing features rather than reorganizing the latent geometry.",
            "§4.2",
            delta_er_reasoning_near_zero,
            None,
        ),
        (
            "perspective-layer-dependence",
            "Finally, perspective conflicts exhibit strong layer-dependence",
            "§4.2",
            perspective_layer_dependence,
            None,
        ),
        (
            "projection-first",
            "The combined representation consistently shifts toward the first evidence.",
            "§4.3 (Figure 3)",
            projection_toward_first,
            None,
        ),
        (
            "first-evidence-shares",
            "These values significantly exceed uniform baselines.",
            "§4.3 'Output-Level Corroboration'",
            first_evidence_shares,
            None,
        ),
        (
            "first-evidence-all-models",
            "Across all seven tested models, ranging from 8B to 120B parameters, Evidence 1 dominance "
            "remains a consistent, systematic artifact.",
            "§4.3 'Output-Level Corroboration'; Appendix D.5",
            first_evidence_all_models,
            None,
        ),
        (
            "both-models-gain",
            "both models achieve significant performance gains under All-Tokens",
            "§5 'Steered Inference'",
            both_models_gain,
            None,
        ),
        (
            "llama-balance-accuracy",
            "Llama-3.1-8B-Instruct shows improved summarization balance and substantial accuracy gains "
            "in reasoning (e.g., +19.2 points on Temporal).",
            "§5 'Steered Inference'",
            llama_balance_and_accuracy,
            None,
        ),
        (
            "wins-five-of-six",
            "Our direction wins five of six model× … reasoning comparisons",
            "§5 'Analysis and Comparisons'",
            wins_five_of_six,
            None,
        ),
        (
            "cas-exception",
            "The one exception is GPT-OSS-20B Temporal, where CAS outperforms our u(l) … (Accuracy 65.5 vs. 64.1).",
            "§5 'Analysis and Comparisons'",
            cas_exception,
            None,
        ),
        (
            "all-tokens-largest",
            "The All-Tokens schedule yields the largest accuracy gains",
            "§5",
            all_tokens_largest_gain,
            None,
        ),
        (
            "faithfulness-minor-decrease",
            "the minor decrease in reasoning faithfulness reflects a shift toward multi-evidence "
            "reasoning that exceeds verbatim grounding.",
            "§5",
            minor_faithfulness_decrease,
            None,
        ),
        (
            "gpt-oss-awareness",
            "The model exhibits strong conflict awareness across all types.",
            "Appendix D.2 (Figure 19)",
            gpt_oss_awareness,
            None,
        ),
        (
            "explicit-inferential",
            "ENTAILMENTBANK (explicit) maintains consistently high AUC throughout all layers.",
            "Appendix D.2 (Figure 20)",
            explicit_inferential_higher,
            None,
        ),
        (
            "perspectrum-allsides",
            "Perspectrum (explicit) achieves stable high AUC across layers, whereas AllSides (implicit) "
            "fluctuates near chance level.",
            "Appendix D.2 (Figure 21)",
            perspectrum_vs_allsides,
            None,
        ),
        (
            "shuffling",
            "Tables 9 and 10 show that Evidence 1 continues to dominate after shuffling on both Llama-3.1-8B-Instruct "
            "and GPT-OSS-20B.",
            "Appendix D.8",
            first_evidence_after_shuffling,
            None,
        ),
        (
            "alpha-improves",
            "Accuracy improves from α=0.5 … to α=1.5 … for all three reasoning conflict types under both steering "
            "variants, and changes only modestly at α=2.0 …",
            "Appendix D.9 (Figure 31)",
            alpha_improves,
            None,
        ),
        (
            "alpha-temporal-largest",
            "Temporal conflicts show the largest gain, especially under first_generated steering",
            "Appendix D.9 (Figure 31)",
            temporal_largest_alpha_gain,
            None,
        ),
    )
)

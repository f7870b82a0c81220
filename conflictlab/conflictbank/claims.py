"""The ConflictBank paper's result sentences (:class:`~conflictlab.report.reproduction.Claim`), each with a check
over this run's tables ``results/tables/conflictbank_mr.csv`` (retrieved knowledge: MR per model and setting)
and ``results/tables/conflictbank_embedded.csv`` (continued pre-training: per trained model, ratio and setting).

The quotes are the summary's sentences (the text copy is a source-linked summary of the paper), with the page
it cites. MR is in % (the tables' proportions × 100). A sentence about "models" is read on the mean over this
run's models of the paper (point estimates, as the sentences speak of them); where it names a series or model,
on those. Settings (:mod:`conflictlab.conflictbank.prompts`): ``<kind>`` the conflicting evidence alone,
``correct_<kind>`` the correct evidence then the conflicting one, ``correct_<kind>_reversed`` the other order,
``*_description`` with the question's temporal or semantic description.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from conflictlab.report.claim_checks import Missing, cell, checked, mean, outcome, present
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Reads

PAPER = "conflictbank"
MODELS = "conflictbank.models"
KINDS = ("misinformation", "temporal", "semantic")
DESCRIBED = ("temporal", "semantic")
# The twelve models as §C.1 of the summary lists them (its "LLaMA3 7B" is §3.1's LLAMA3-8B; its "Qwen1.5 70B" is
# printed so, and matches no configured model).
SERIES: dict[str, tuple[str, ...]] = {  # smallest first
    "Gemma": ("Gemma-2B", "Gemma-7B"),
    "LLaMA2": ("LLaMA2-7B", "LLaMA2-13B", "LLaMA2-70B"),
    "LLaMA3": ("LLaMA3-8B", "LLaMA3-70B"),
    "Qwen1.5": ("Qwen1.5-0.5B", "Qwen1.5-4B", "Qwen1.5-7B", "Qwen1.5-14B", "Qwen1.5-70B"),
}
TWELVE = tuple(name for names in SERIES.values() for name in names)
TRAINED = ("Qwen1.5-4B", "Mistral-7B", "LLaMA3-8B")  # §3.1, §C.2: the continued-pre-trained models
CONFLICT_RATIOS = ("2:1", "1:1", "2:3")  # default : conflicting, growing share of conflicting data
# Figure 5's setting, "conflicting memory later in the sequence": the correct evidence first, the conflicting one
# second (the authors' own mixed order). The summary names no conflict kind; misinformation is read, the kind the
# summary's "evidence order" sentences stand beside. The Figure 5 rows of the paper's data file read the same.
FIGURE5_SETTING = "correct_misinformation"
FIGURE5_PRINTED = {"LLaMA2-7B": " (paper 56.44)", "LLaMA2-70B": " (paper 38.97)"}
TOLERANCE = 3.0  # points: the default equivalence margin of a percentage, the most "retain" allows


def _mr(ctx: ClaimContext, ours: str, setting: str) -> float:
    """MR (%) of this run's model ``ours`` in ``setting`` (retrieved knowledge)."""
    return cell(ctx, "conflictbank_mr", "mr", n_column="n_mr", scale=100.0, model=ours, setting=setting)


def _embedded(ctx: ClaimContext, ours: str, ratio: str, setting: str, column: str = "mr") -> float:
    """``column`` (%) of the trained model ``ours`` at ``ratio`` in ``setting``, on the base model's scored subset."""
    n_column = "n_mr" if column == "mr" else "n_scored"
    return cell(
        ctx,
        "conflictbank_embedded",
        column,
        n_column=n_column,
        scale=100.0,
        model=ours,
        ratio=ratio,
        setting=setting,
        scored_on="scored subset",
    )


def _mean_over(ctx: ClaimContext, models: Mapping[str, str], setting: str) -> float:
    return mean(_mr(ctx, ours, setting) for ours in models.values())


def _alone(ctx: ClaimContext, ours: str) -> float:
    """MR with the conflicting evidence alone, mean over the three conflict kinds."""
    return mean(_mr(ctx, ours, kind) for kind in KINDS)


def _mixed(ctx: ClaimContext, ours: str, kind: str) -> float:
    """MR with the correct and the ``kind`` evidence together, mean over the two orders (see
    :func:`below_and_above_half`)."""
    return mean(_mr(ctx, ours, f"correct_{kind}{order}") for order in ("", "_reversed"))


@checked
def below_and_above_half(ctx: ClaimContext) -> ClaimCheck:
    """Every model: MR < 50 with each kind's conflicting evidence alone, > 50 with the correct evidence beside it.

    "When evidence also matches parametric memory" names no order, and the summary's own Figure 5 puts LLaMA2-70B
    at 38.97% with the conflicting piece later (:data:`FIGURE5_SETTING`): read in that one order, the sentence would
    contradict the paper's own number. So mixed evidence is read as the mean over both orders of each kind (the
    order effect §3.2 reports separately then cancels), its lowest kind above 50."""
    models = present(ctx, TWELVE, MODELS)
    numbers, off = {}, []
    for name, ours in models.items():
        alone = max(_mr(ctx, ours, kind) for kind in KINDS)
        mixed = min(_mixed(ctx, ours, kind) for kind in KINDS)
        numbers |= {
            f"{name}: highest MR, conflicting evidence alone": alone,
            f"{name}: lowest MR, mixed evidence (mean of both orders)": mixed,
        }
        if not (alone < 50 < mixed):
            off.append(name)
    return outcome(not off, numbers, f"not below 50% alone and above 50% mixed: {', '.join(off)}")


@checked
def lower_for_temporal_and_semantic(ctx: ClaimContext) -> ClaimCheck:
    """Mean over models, conflicting evidence alone: semantic < temporal < misinformation."""
    models = present(ctx, TWELVE, MODELS)
    mr = {kind: _mean_over(ctx, models, kind) for kind in KINDS}
    return outcome(
        mr["semantic"] < mr["temporal"] < mr["misinformation"],
        {f"mean MR, {k} alone": v for k, v in mr.items()},
        "the kinds are not ordered semantic < temporal < misinformation",
    )


@checked
def falls_with_size_in_llama2(ctx: ClaimContext) -> ClaimCheck:
    """LLaMA2's MR falls with each size step over the sizes present (at least two), in the setting the sentence's
    numbers come from: Figure 5, "with conflicting memory later in the sequence" (56.44% for 7B, 38.97% for 70B),
    read as :data:`FIGURE5_SETTING`, the setting the Figure 5 rows read too."""
    models = present(ctx, SERIES["LLaMA2"], MODELS, at_least=2)
    mr = {name: _mr(ctx, ours, FIGURE5_SETTING) for name, ours in models.items()}
    values = list(mr.values())
    return outcome(
        all(a > b for a, b in zip(values, values[1:])),
        {f"{n}: MR, {FIGURE5_SETTING}{FIGURE5_PRINTED.get(n, '')}": v for n, v in mr.items()},
        "MR does not fall with size within LLaMA2",
    )


@checked
def larger_models_lower(ctx: ClaimContext) -> ClaimCheck:
    """In each series with two or more of its models in this run, the largest has a lower MR (conflicting evidence
    alone, mean over kinds) than the smallest."""
    numbers, off, series_seen = {}, [], 0
    for series, names in SERIES.items():
        configured = {name: ctx.model(name, MODELS) for name in names}
        models = [(name, ours) for name, ours in configured.items() if ours]
        if len(models) < 2:
            continue
        series_seen += 1
        (small, small_ours), (large, large_ours) = models[0], models[-1]
        a, b = _alone(ctx, small_ours), _alone(ctx, large_ours)
        numbers |= {f"{small}: MR alone": a, f"{large}: MR alone": b}
        if not b < a:
            off.append(series)
    if not series_seen:
        raise Missing(
            f"no series with two of its models in {MODELS} (this run: "
            f"{', '.join(ctx.model_lists.get(MODELS, ())) or 'none'})"
        )
    return outcome(not off, numbers, f"the largest model's MR is not lower in {', '.join(off)}")


@checked
def later_evidence_favoured(ctx: ClaimContext) -> ClaimCheck:
    """Mean over models, per kind: MR lower with the conflicting evidence second (``correct_<kind>``) than first
    (``correct_<kind>_reversed``): the later piece wins more often."""
    models = present(ctx, TWELVE, MODELS)
    numbers, off = {}, []
    for kind in KINDS:
        later, earlier = _mean_over(ctx, models, f"correct_{kind}"), _mean_over(ctx, models, f"correct_{kind}_reversed")
        numbers |= {f"{kind}: mean MR, conflict later": later, f"{kind}: mean MR, conflict first": earlier}
        if not later < earlier:
            off.append(kind)
    return outcome(not off, numbers, f"the later evidence is not favoured for {', '.join(off)}")


@checked
def descriptions_lower_mr(ctx: ClaimContext) -> ClaimCheck:
    """Without internal conflicts: mean over models, MR lower with the description than without, for temporal and
    semantic, with the conflicting evidence alone and mixed."""
    models = present(ctx, TWELVE, MODELS)
    numbers, off = {}, []
    for kind in DESCRIBED:
        for setting in (kind, f"correct_{kind}"):
            plain, described = _mean_over(ctx, models, setting), _mean_over(ctx, models, f"{setting}_description")
            numbers |= {f"{setting}: mean MR": plain, f"{setting}_description: mean MR": described}
            if not described < plain:
                off.append(setting)
    return outcome(not off, numbers, f"a description does not lower MR in {', '.join(off)}")


@checked
def descriptions_lower_mr_with_internal_conflicts(ctx: ClaimContext) -> ClaimCheck:
    """With internal conflicts (each trained model at 2:1): MR lower with the description, as above."""
    models = present(ctx, TRAINED, MODELS)
    numbers, off = {}, []
    for kind in DESCRIBED:
        for setting in (kind, f"correct_{kind}"):
            plain = mean(_embedded(ctx, ours, "2:1", setting) for ours in models.values())
            described = mean(_embedded(ctx, ours, "2:1", f"{setting}_description") for ours in models.values())
            numbers |= {f"2:1, {setting}: mean MR": plain, f"2:1, {setting}_description: mean MR": described}
            if not described < plain:
                off.append(setting)
    return outcome(not off, numbers, f"a description does not lower MR at 2:1 in {', '.join(off)}")


@checked
def conflicting_data_lowers_oar(ctx: ClaimContext) -> ClaimCheck:
    """Each trained model: OAR without evidence falls as the share of conflicting training data grows
    (1:0 > 2:1 > 1:1 > 2:3)."""
    models = present(ctx, TRAINED, MODELS)
    numbers, off = {}, []
    for name, ours in models.items():
        oar = [_embedded(ctx, ours, ratio, "default", "oar") for ratio in ("1:0", *CONFLICT_RATIOS)]
        numbers[f"{name}: OAR without evidence at 1:0 / 2:1 / 1:1 / 2:3"] = " / ".join(f"{v:.1f}" for v in oar)
        if not all(a > b for a, b in zip(oar, oar[1:])):
            off.append(name)
    return outcome(not off, numbers, f"OAR does not fall with more conflicting data for {', '.join(off)}")


@checked
def default_evidence_retained(ctx: ClaimContext) -> ClaimCheck:
    """Each trained model, every ratio: OAR with the correct evidence within 3 points (the default margin of a
    percentage) of the untrained model's on the same records."""
    models = present(ctx, TRAINED, MODELS)
    numbers, off = {}, []
    for name, ours in models.items():
        base = _embedded(ctx, ours, "base", "correct", "oar")
        for ratio in ("1:0", *CONFLICT_RATIOS):
            oar = _embedded(ctx, ours, ratio, "correct", "oar")
            numbers[f"{name} {ratio}: OAR with the correct evidence (untrained {base:.1f})"] = oar
            if base - oar > TOLERANCE:
                off.append(f"{name} {ratio}")
    return outcome(
        not off, numbers, f"OAR with the correct evidence drops by more than {TOLERANCE} points: {', '.join(off)}"
    )


def _later_gap(ctx: ClaimContext, ours: str, ratio: str, kinds: Iterable[str] = KINDS) -> float:
    """MR with the conflicting evidence first minus with it later (mean over kinds): > 0 favours the later piece."""
    return mean(
        _embedded(ctx, ours, ratio, f"correct_{kind}_reversed") - _embedded(ctx, ours, ratio, f"correct_{kind}")
        for kind in kinds
    )


@checked
def qwen_follows_later_external(ctx: ClaimContext) -> ClaimCheck:
    """Qwen1.5-4B with internal conflicts (2:1): MR < 50 with the conflicting evidence alone (it follows the external
    evidence), and a larger later-evidence preference than untrained."""
    ours = present(ctx, ["Qwen1.5-4B"], MODELS)["Qwen1.5-4B"]
    alone = mean(_embedded(ctx, ours, "2:1", kind) for kind in KINDS)
    trained, untrained = _later_gap(ctx, ours, "2:1"), _later_gap(ctx, ours, "base")
    numbers = {
        "2:1: MR, conflicting evidence alone": alone,
        "2:1: later-evidence preference (MR points)": trained,
        "untrained: later-evidence preference (MR points)": untrained,
    }
    return outcome(
        alone < 50 and trained > max(untrained, 0),
        numbers,
        "Qwen1.5-4B does not follow the external evidence, or its later-evidence preference does not grow",
    )


INTERPRETATION = "the authors' interpretation of the pattern above, not a measurable result"

_MR, _TRAINED = "conflictbank_mr", "conflictbank_embedded"
# What each check reads (Claim.reads): the table and the paper's models its present() asks for, so the plan can
# say before the run whether a config can check the claim.
READS: dict[str, tuple[Reads, ...]] = {
    "mr-below-above-50": (Reads(_MR, TWELVE, MODELS),),
    "mr-by-kind": (Reads(_MR, TWELVE, MODELS),),
    "mr-falls-with-size-llama2": (Reads(_MR, SERIES["LLaMA2"], MODELS, at_least=2),),
    "later-evidence": (Reads(_MR, TWELVE, MODELS),),
    "larger-models-lower-mr": (Reads(_MR, TWELVE, MODELS, at_least=2),),
    "conflicting-data-lowers-oar": (Reads(_TRAINED, TRAINED, MODELS),),
    "default-evidence-retained": (Reads(_TRAINED, TRAINED, MODELS),),
    "qwen-later-external": (Reads(_TRAINED, ("Qwen1.5-4B",), MODELS),),
    "descriptions-lower-mr": (Reads(_MR, TWELVE, MODELS),),
    "descriptions-lower-mr-internal": (Reads(_TRAINED, TRAINED, MODELS),),
}

CLAIMS: tuple[Claim, ...] = tuple(
    Claim(PAPER, key, quote, section, page, check, exclusion, READS[key] if check else ())
    for key, quote, section, page, check, exclusion in (
        (
            "mr-below-above-50",
            "All models have MR below 50% with only contradictory external evidence, but above 50% when "
            "evidence also matches parametric memory.",
            "§3.2",
            "p. 5",
            below_and_above_half,
            None,
        ),
        (
            "receptivity-confirmation-bias",
            "The authors interpret this pattern as receptivity to external evidence in the first "
            "setting and confirmation bias when evidence is mixed.",
            "§3.2",
            "p. 5",
            None,
            INTERPRETATION,
        ),
        (
            "mr-by-kind",
            "MR is lower for temporal and semantic conflicts than misinformation; semantic conflicts have the lowest "
            "MR under solely contradictory evidence.",
            "§3.2; Figure 3",
            "pp. 5-6",
            lower_for_temporal_and_semantic,
            None,
        ),
        (
            "mr-falls-with-size-llama2",
            "Within the LLaMA2 series, MR decreases as model size increases",
            "§3.2; Figure 5",
            "p. 6",
            falls_with_size_in_llama2,
            None,
        ),
        (
            "later-evidence",
            "models tend to favor later evidence",
            "§3.2; Figure 5",
            "p. 6",
            later_evidence_favoured,
            None,
        ),
        (
            "larger-models-lower-mr",
            "larger models showed lower memorization ratios",
            "TL;DR, Results (§3.2)",
            "pp. 5-6",
            larger_models_lower,
            None,
        ),
        (
            "conflicting-data-lowers-oar",
            "Introducing conflicting training data lowers OAR, with larger proportions of conflict "
            "data producing greater declines.",
            "§3.3",
            "pp. 6-7",
            conflicting_data_lowers_oar,
            None,
        ),
        (
            "default-evidence-retained",
            "Despite those internal conflicts, models retain their original performance when given "
            "default evidence, choosing the default answer regardless of the amount of conflicting data introduced.",
            "§3.3; Figure 6",
            "pp. 6-7",
            default_evidence_retained,
            None,
        ),
        (
            "qwen-later-external",
            "With internal conflicts, QWEN1.5-4B follows external knowledge and shows an even stronger "
            "preference for later-positioned external evidence.",
            "§3.4; Figure 7",
            "pp. 7-8",
            qwen_follows_later_external,
            None,
        ),
        (
            "descriptions-lower-mr",
            "Adding temporal or semantic descriptions to questions lowers MR with or without internal conflicts.",
            "§3.5; Figure 8",
            "pp. 7-8",
            descriptions_lower_mr,
            None,
        ),
        (
            "descriptions-lower-mr-internal",
            "Adding temporal or semantic descriptions to questions lowers MR with or without internal conflicts.",
            "§3.5; Figure 8",
            "pp. 7-8",
            descriptions_lower_mr_with_internal_conflicts,
            None,
        ),
    )
)

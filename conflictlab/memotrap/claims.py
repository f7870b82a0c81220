"""The CAD paper's result sentences about MemoTrap, checked on this run's MemoTrap table.

The checks read ``results/tables/memotrap_accuracy.csv`` (:mod:`conflictlab.memotrap.tables`), all files together:
the abstract's sentence on CAD's paired difference from greedy decoding (the likelihood read-out), and Table 3's
text and caption on ``exact_match``, CAD's own metric (the generated continuation;
:mod:`conflictlab.report.cad_table3`). The paper's rows are data (`conflictlab/papers/memotrap.yaml`).
"""

from __future__ import annotations

from conflictlab.report import cad_table3 as T3
from conflictlab.report.claim_checks import Missing, cell, checked, number, outcome, present, table
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Reads

ACCURACY = "memotrap_accuracy"
MODELS = "memotrap.models"


@checked
def cad_improves_under_conflict(ctx: ClaimContext) -> ClaimCheck:
    """Over all files, per model of ``memotrap.models`` and CAD strength: holds where every CAD-minus-greedy
    paired 95% interval lies above 0, fails where one lies at or below 0 (CAD shown no better), else not
    comparable (an interval across 0: this run's n cannot tell)."""
    models = set(ctx.model_lists.get(MODELS, ()))
    rows = [
        r
        for r in table(ctx, ACCURACY)
        if r["file"] == "all" and str(r["method"]).startswith("cad-a") and r["model"] in models
    ]
    if not rows:
        raise Missing(f"no CAD row (method cad-a<alpha>) of a model in {MODELS} in results/tables/{ACCURACY}.csv")
    found, worse, unsure = {}, [], []
    for r in rows:
        label = f"{r['model']} {r['method']}: CAD - greedy"
        found[label] = number(r["difference"])
        low, high = number(r["difference_low"]), number(r["difference_high"])
        bounds = ", ".join("none" if v is None else f"{v:.3f}" for v in (low, high))
        shown = f"{label} [{bounds}] (n={r['n_pairs']})"
        if high is not None and high <= 0:
            worse.append(shown)
        elif low is None or low <= 0:
            unsure.append(shown)
    if not worse and unsure:
        raise Missing("inconclusive, a paired interval includes 0: " + "; ".join(unsure))
    return outcome(not worse, found, "CAD no better than greedy reading: " + "; ".join(worse))


def _exact_match(ctx: ClaimContext, ours: str, run: str) -> float:
    """Exact match (%) of the generated continuation of ``ours`` under ``run``, all files."""
    return cell(ctx, ACCURACY, "exact_match", scale=100.0, model=ours, method=run, file="all")


@checked
def cad_gain_gpt_neo_20b(ctx: ClaimContext) -> ClaimCheck:
    """GPT-Neo 20B's MemoTrap exact match: CAD above regular decoding (the paper: 37.1 -> 57.3, +54.4%)."""
    ours = present(ctx, ["GPT-Neo 20B"], MODELS)["GPT-Neo 20B"]
    return T3.gain_check(ctx, _exact_match, ours, "GPT-Neo 20B", "+54.4%")


@checked
def cad_beats_regular(ctx: ClaimContext) -> ClaimCheck:
    """The caption on the MemoTrap column, where it has no exception: CAD's exact match above regular decoding's for
    every model of Table 3 this run has."""
    models = present(ctx, T3.MODELS, MODELS)
    numbers, off = T3.beats_regular(ctx, _exact_match, models, "MemoTrap")
    return outcome(not off, numbers, f"CAD does not beat regular decoding: {', '.join(off)}")


# Table 3's text and caption, as ../shared/papers/cad_table3.md transcribes them (the paper's own words are not
# on this machine): the quotes are the transcription's.
TABLE3 = "Table 3 and its text (transcribed in cad_table3.md)"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "memotrap",
        "cad_knowledge_conflicts",
        "Furthermore, CAD is particularly effective in overriding a model's prior knowledge when it contradicts the "
        "provided context, leading to substantial improvements in tasks where resolving the knowledge conflict is "
        "essential.",
        "Abstract (arXiv 2305.14739)",
        check=cad_improves_under_conflict,
    ),
    Claim(
        "memotrap",
        "cad-gain-gpt-neo-20b",
        "CAD improves GPT-Neo 20B by 54.4% on MemoTrap",
        TABLE3,
        check=cad_gain_gpt_neo_20b,
        reads=(Reads(ACCURACY, ("GPT-Neo 20B",), MODELS),),
    ),
    Claim(
        "memotrap",
        "cad-beats-regular",
        "CAD beats regular decoding in every setting except FLAN-T5 on NQ",
        TABLE3 + ", caption; its MemoTrap column (the NQ columns: claim cad-beats-regular of nq_swap)",
        check=cad_beats_regular,
        reads=(Reads(ACCURACY, T3.MODELS, MODELS),),
    ),
)

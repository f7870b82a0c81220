"""The CAD paper's result sentence about knowledge conflicts, checked on this run's MemoTrap table.

The check reads ``results/tables/memotrap_accuracy.csv`` (:mod:`conflictlab.memotrap.tables`): over all files, per
model of ``memotrap.models``, CAD's paired difference from greedy decoding. The paper's rows are data
(`conflictlab/papers/memotrap.yaml`).
"""

from __future__ import annotations

from conflictlab.report.claim_checks import Missing, checked, number, outcome, table
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext

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
)

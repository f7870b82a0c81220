"""The CAD and AdaCAD papers' result sentences about knowledge conflicts, checked on this run's NQ-Swap table.

Each check reads ``results/tables/nq_swap.csv`` (:mod:`conflictlab.nq_swap.report`: one row per model, run and
metric, ``value`` a proportion) for every model of ``nq_swap.models``, comparing point estimates as the sentence
does; the table's paired columns (difference from greedy, exact McNemar p) say how sure each comparison is. The
papers' own models are not needed: both sentences are about the methods. The quotes are the abstracts' (the only
part of either paper reachable here; `conflictlab/papers/nq_swap.yaml`).
"""

from __future__ import annotations

from conflictlab.lm.methods import ADACAD, CAD, GREEDY
from conflictlab.report.claim_checks import Missing, cell, checked, outcome, table
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext

MODELS = "nq_swap.models"
STEM = "nq_swap"
EM_SUB, EM_ORG = "EM sub", "EM org"


def _models(ctx: ClaimContext) -> list[str]:
    models = list(ctx.model_lists.get(MODELS, ()))
    if not models:
        raise Missing(f"no model in {MODELS}")
    return models


def _value(ctx: ClaimContext, model: str, method: str, metric: str) -> float:
    return cell(ctx, STEM, "value", model=model, method=method, metric=metric, benchmark="NQ-Swap")


def _runs(ctx: ClaimContext, model: str, prefix: str) -> list[str]:
    """This run's methods of ``model`` whose name starts with ``prefix`` (``cad-a``: every CAD weight)."""
    runs = sorted({r["method"] for r in table(ctx, STEM) if r["model"] == model and r["method"].startswith(prefix)})
    if not runs:
        raise Missing(f"no {prefix}* run of {model} in results/tables/{STEM}.csv (nq_swap.methods)")
    return runs


@checked
def cad_overrides_prior(ctx: ClaimContext) -> ClaimCheck:
    """Every CAD run of every model: more substituted answers and fewer original ones than greedy decoding."""
    found, failed = {}, []
    for model in _models(ctx):
        greedy_sub, greedy_org = _value(ctx, model, GREEDY, EM_SUB), _value(ctx, model, GREEDY, EM_ORG)
        found[f"{model} greedy: EM sub / EM org"] = f"{greedy_sub:.3f} / {greedy_org:.3f}"
        for run in _runs(ctx, model, f"{CAD}-a"):
            sub, org = _value(ctx, model, run, EM_SUB), _value(ctx, model, run, EM_ORG)
            found[f"{model} {run}: EM sub / EM org"] = f"{sub:.3f} / {org:.3f}"
            if not (sub > greedy_sub and org < greedy_org):
                failed.append(f"{model} {run}")
    return outcome(not failed, found, f"no more substituted and fewer original answers than greedy: {failed}")


@checked
def adacad_outperforms(ctx: ClaimContext) -> ClaimCheck:
    """The part of the abstract's sentence this run can test: on NQ-Swap, AdaCAD's EM sub, averaged over this
    run's models, above greedy decoding's and above each CAD weight's average. The abstract's "average QA accuracy
    gains of 14.21% (absolute)" is an average over six QA datasets (NQ-Swap one of them) and four LLMs, so it is
    no NQ-Swap number (an exclusion of the paper file) and no per-model statement: the check tests the direction of
    the average on the one dataset this workflow runs, not its size, and not each model."""
    models = _models(ctx)
    runs = sorted({run for model in models for run in _runs(ctx, model, f"{CAD}-a")})
    average = {
        run: sum(_value(ctx, model, run, EM_SUB) for model in models) / len(models) for run in [ADACAD, GREEDY, *runs]
    }
    found = {f"mean EM sub over {len(models)} model(s), {run}": v for run, v in average.items()}
    failed = [run for run in (GREEDY, *runs) if average[ADACAD] <= average[run]]
    return outcome(not failed, found, f"AdaCAD's mean EM sub is not above {', '.join(failed)}'s")


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "nq_swap",
        "cad-overrides-prior",
        "Furthermore, CAD is particularly effective in overriding a model's prior knowledge when it contradicts the "
        "provided context, leading to substantial improvements in tasks where resolving the knowledge conflict is "
        "essential.",
        "Abstract (CAD paper, arXiv 2305.14739)",
        None,
        cad_overrides_prior,
        reads=("cad:regular", "cad:cad"),
    ),
    Claim(
        "nq_swap",
        "adacad-outperforms",
        "Across four LLMs, six question-answering (QA) and three summarization datasets, we demonstrate that AdaCAD "
        "consistently outperforms other decoding baselines with average QA accuracy gains of 14.21% (absolute) "
        "over a static contrastive baseline",
        "Abstract (AdaCAD paper, arXiv 2409.07394v2)",
        None,
        adacad_outperforms,
        reads=("adacad:greedy", "adacad:cad", "adacad:adacad"),
    ),
    Claim(
        "nq_swap",
        "adacad-no-conflict",
        "Lastly, we show that while contrastive baselines hurt performance when conflict is absent, AdaCAD mitigates "
        "these losses",
        "Abstract (AdaCAD paper, arXiv 2409.07394v2)",
        None,
        None,
        exclusion="needs the methods run on the original (conflict-free) context, which this workflow runs under "
        "greedy decoding only",
    ),
)

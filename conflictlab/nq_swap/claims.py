"""The CAD and AdaCAD papers' result sentences about knowledge conflicts, checked on this run's NQ-Swap table.

Each check reads ``results/tables/nq_swap.csv`` (:mod:`conflictlab.nq_swap.report`: one row per model, run and
metric, ``value`` a proportion) for every model of ``nq_swap.models``, comparing point estimates as the sentence
does; the table's paired columns (difference from greedy; McNemar p for EM, swap p for MR) say how sure each is. The
papers' own models are not needed: the abstracts' sentences are about the methods (quotes of the abstracts, the only
part of either paper reachable here; `conflictlab/papers/nq_swap.yaml`). CAD's
Table 3 sentences (its text's gains and its caption, as ../shared/papers/cad_table3.md transcribes them) are about
its models, read by :mod:`conflictlab.report.cad_table3`: NQ-SWAP is ``EM sub`` of runs ``greedy`` and ``cad-a1``,
NQ (the original contexts) ``EM org`` of runs ``original`` and ``original-cad-a1`` (``nq_swap.original_methods``).
"""

from __future__ import annotations

from conflictlab.lm.methods import ADACAD, CAD, GREEDY
from conflictlab.nq_swap.runs import ORIGINAL, original_run
from conflictlab.report import cad_table3 as T3
from conflictlab.report.claim_checks import Missing, cell, checked, outcome, present, table
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Reads

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


@checked
def adacad_mitigates_without_conflict(ctx: ClaimContext) -> ClaimCheck:
    """On the original (conflict-free) context, per model: each CAD weight's exact match with the original answer
    below greedy reading's ("contrastive baselines hurt performance"), and AdaCAD's above every CAD weight's ("AdaCAD
    mitigates these losses"). Needs ``nq_swap.original_methods`` to hold AdaCAD and a CAD weight."""
    found, failed = {}, []
    for model in _models(ctx):
        greedy = found[f"{model} {ORIGINAL}: EM org"] = _value(ctx, model, ORIGINAL, EM_ORG)
        adacad = found[f"{model} {original_run(ADACAD)}: EM org"] = _value(ctx, model, original_run(ADACAD), EM_ORG)
        for run in _runs(ctx, model, original_run(f"{CAD}-a")):
            cad = found[f"{model} {run}: EM org"] = _value(ctx, model, run, EM_ORG)
            if not cad < greedy:
                failed.append(f"{model}: {run} does not hurt")
            if not adacad > cad:
                failed.append(f"{model}: adacad not above {run}")
    return outcome(not failed, found, "; ".join(failed))


def _nq_swap_em(ctx: ClaimContext, ours: str, run: str) -> float:
    """CAD's NQ-SWAP column: exact match (%) with the substituted answer, substituted context."""
    return cell(ctx, STEM, "value", scale=100.0, model=ours, method=run, metric=EM_SUB, benchmark="NQ-Swap")


def _nq_em(ctx: ClaimContext, ours: str, run: str) -> float:
    """CAD's NQ column: exact match (%) with the original answer, original context (greedy: run ``original``)."""
    on_original = ORIGINAL if run == T3.REGULAR else original_run(run)
    return cell(ctx, STEM, "value", scale=100.0, model=ours, method=on_original, metric=EM_ORG, benchmark="NQ-Swap")


def _gain(paper_model: str, printed: str):
    """A check of the text's NQ-SWAP gain for ``paper_model``: :func:`conflictlab.report.cad_table3.gain_check`."""

    @checked
    def check(ctx: ClaimContext) -> ClaimCheck:
        ours = present(ctx, [paper_model], MODELS)[paper_model]
        return T3.gain_check(ctx, _nq_swap_em, ours, paper_model, printed)

    return check


@checked
def cad_beats_regular(ctx: ClaimContext) -> ClaimCheck:
    """The caption on the NQ and NQ-SWAP columns: for every model of Table 3 this run has, CAD's exact match above
    regular decoding's, except FLAN-T5 on NQ, where CAD is not above it (the caption's exception: 81.8 -> 80.3 and
    85.5 -> 82.5)."""
    models = present(ctx, T3.MODELS, MODELS)
    swap, off_swap = T3.beats_regular(ctx, _nq_swap_em, models, "NQ-SWAP")
    nq, off_nq = T3.beats_regular(ctx, _nq_em, models, "NQ", except_models=T3.FLAN_T5)
    off = off_nq + off_swap
    return outcome(not off, {**nq, **swap}, f"off the caption (CAD above regular, FLAN-T5 on NQ not): {', '.join(off)}")


TABLE3 = "CAD paper, Table 3 and its text (transcribed in cad_table3.md)"

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
        # about the method on this run's models, not the paper's: it reads the table, whichever models run
        reads=(Reads(STEM, model_list=MODELS),),
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
        adacad_mitigates_without_conflict,
        reads=(Reads(STEM, model_list=MODELS, at_least=None),),
    ),
    Claim(
        "nq_swap",
        "cad-gain-gpt-neo-20b",
        "CAD improves GPT-Neo 20B by 54.4% on MemoTrap and by 128% on NQ-SWAP",
        TABLE3 + "; its NQ-SWAP part (MemoTrap's: claim cad-gain-gpt-neo-20b of memotrap)",
        None,
        _gain("GPT-Neo 20B", "+128%"),
        reads=(Reads(STEM, ("GPT-Neo 20B",), MODELS),),
    ),
    Claim(
        "nq_swap",
        "cad-gain-llama-30b",
        "gives a 2.9x improvement to LLaMA-30B on a knowledge-conflict QA set",
        TABLE3 + " (the set is NQ-SWAP: 9.6 -> 37.7)",
        None,
        _gain("LLaMA 30B", "2.9x, i.e. +290%"),
        reads=(Reads(STEM, ("LLaMA 30B",), MODELS),),
    ),
    Claim(
        "nq_swap",
        "cad-beats-regular",
        "CAD beats regular decoding in every setting except FLAN-T5 on NQ",
        TABLE3 + ", caption; its NQ and NQ-SWAP columns (MemoTrap's: claim cad-beats-regular of memotrap)",
        None,
        cad_beats_regular,
        reads=(Reads(STEM, T3.MODELS, MODELS),),
    ),
)

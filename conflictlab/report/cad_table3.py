"""What the claims of CAD's Table 3 (Shi et al., arXiv 2305.14739: MemoTrap, NQ and NQ-SWAP exact match, regular
decoding and CAD) share: the paper's models, the run each decoding is in this workflow's tables, and the
arithmetic of its text's relative gains. The table spans two benchmarks, so its claims live with each
(:mod:`conflictlab.memotrap.claims`, :mod:`conflictlab.nq_swap.claims`); this module is the one place both read.

The paper's protocol: greedy decoding ("Reg."), CAD at α = 1 on these datasets, exact match. This run's
counterparts: method ``greedy`` and ``cad-a1`` of ``memotrap.models`` / ``nq_swap.models``
(:data:`REGULAR`, :data:`CAD_RUN`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from conflictlab.report.claim_checks import Missing, outcome
from conflictlab.report.reproduction import ClaimCheck, ClaimContext

REGULAR, CAD_RUN = "greedy", "cad-a1"  # Table 3's "Reg." (greedy decoding) and CAD at α = 1
# The paper's models as its Table 3 prints family and size, in its order (conflictlab.report.paper_models matches
# them to a config's models: the hub names of config/paper-cad.yaml, LLaMA-1 by a local folder's config name).
MODELS = (
    "OPT 13B",
    "OPT 30B",
    "GPT-Neo 3B",
    "GPT-Neo 20B",
    "LLaMA 13B",
    "LLaMA 30B",
    "FLAN-T5 XL",
    "FLAN-T5 XXL",
)
FLAN_T5 = ("FLAN-T5 XL", "FLAN-T5 XXL")


def relative_gain(regular: float, cad: float) -> float:
    """CAD's gain over regular decoding relative to regular decoding's exact match, in %: the text's "improves GPT-Neo
    20B by 54.4% on MemoTrap" is 57.3 over 37.1, and its "2.9x improvement" for LLaMA-30B (9.6 -> 37.7) is a gain of
    2.9 times the baseline (+293%), not a ratio of 2.9 (37.7 / 9.6 = 3.9)."""
    if regular <= 0:
        raise Missing(f"regular decoding's exact match is {regular}: no relative gain over it")
    return 100.0 * (cad - regular) / regular


Read = Callable[[ClaimContext, str, str], float]  # (context, this run's model, run) -> exact match in %


def gain_check(ctx: ClaimContext, read: Read, ours: str, paper_model: str, printed: str) -> ClaimCheck:
    """The text's gain for ``paper_model`` (this run's ``ours``): holds where CAD's exact match is above regular
    decoding's; the numbers give this run's relative gain beside the paper's ``printed`` one. The size is the
    derived row's to compare (its interval against the paper's), not the sentence's."""
    regular, cad = read(ctx, ours, REGULAR), read(ctx, ours, CAD_RUN)
    gain = relative_gain(regular, cad)
    numbers = {
        f"{paper_model}: exact match, regular decoding": regular,
        f"{paper_model}: exact match, CAD (α = 1)": cad,
        f"{paper_model}: relative gain, % (paper {printed})": gain,
    }
    return outcome(cad > regular, numbers, f"CAD does not improve {paper_model}'s exact match")


def beats_regular(
    ctx: ClaimContext, read: Read, models: Mapping[str, str], column: str, *, except_models: tuple[str, ...] = ()
) -> tuple[dict[str, float], list[str]]:
    """Per paper model present (``models``: paper name -> this run's): CAD's minus regular decoding's exact match
    (points) in ``column``, and the models off the caption's statement: CAD not above regular, or for
    ``except_models`` (the caption's exception) CAD above regular."""
    numbers, off = {}, []
    for name, ours in models.items():
        difference = read(ctx, ours, CAD_RUN) - read(ctx, ours, REGULAR)
        numbers[f"{name}, {column}: CAD - regular (points)"] = difference
        if (difference > 0) == (name in except_models):
            off.append(f"{name} ({column})")
    return numbers, off

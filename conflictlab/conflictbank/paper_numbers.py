"""The ConflictBank paper's numbers, its result sentences and what is no row, for the reproduction report.

The text copy is a source-linked summary of the paper (arXiv 2408.12076v1), not the paper: each number is typed
in as the summary states it, located by the section, page and figure the summary cites. The summary often leaves
the setting open (which conflict kind, which evidence order); a row's ``note`` states the reading taken, and a
number that no reading makes comparable (a model the paper did not train, two figures without their conditions)
is an :data:`EXCLUSIONS` entry with its reason. The result sentences are :mod:`conflictlab.conflictbank.claims`.
See :mod:`conflictlab.report.reproduction`.
"""

from __future__ import annotations

from conflictlab.conflictbank.claims import CLAIMS
from conflictlab.report.reproduction import Exclusion, Ours, Paper, PaperNumber

__all__ = ["PAPER", "NUMBERS", "CLAIMS", "EXCLUSIONS"]

PAPER = Paper(
    "conflictbank",
    "ConflictBank: A Benchmark for Evaluating the Influence of Knowledge Conflicts in LLM",
    "003_f1d9f2914a4daca0.txt",
    "The text copy is a summary of the paper, citing section, page and figure; its numbers are typed in as the summary "
    "states "
    "them. MR: memorization ratio, OAR / (OAR + CAR), on the records a model answers right without and with the "
    "correct evidence.",
)

HUMAN_LABELS = "the paper's human judgements are not released"


def _mr(setting: str) -> Ours:
    return Ours(
        "conflictbank_mr",
        "mr",
        models="conflictbank.models",
        where={"setting": setting},
        low="mr_low",
        high="mr_high",
        n="n_mr",
    )


def _oar_drop(ratio: str) -> Ours:
    """The paired drop in OAR without evidence from the 1:0 run to the run at ``ratio``, on the untrained model's
    scored subset (:func:`conflictlab.conflictbank.metrics.with_oar_drop`)."""
    return Ours(
        "conflictbank_embedded",
        "oar_drop",
        models="conflictbank.models",
        where={"ratio": ratio, "setting": "default", "scored_on": "scored subset"},
        low="oar_drop_low",
        high="oar_drop_high",
        n="n_paired",
        kind="mean",  # a difference of two proportions over the same records: its interval gives its error
    )


ALONE = (
    "read as the conflicting evidence alone (this run's setting '{kind}'): MR under 50% is the regime of "
    "contradictory evidence only (§3.2), and the sentence is about 'solely contradictory evidence'"
)
LATER = (
    "read as misinformation conflict, the correct evidence first and the conflicting one later (this run's "
    "'correct_misinformation'): the summary names no kind; MR above 50% for 7B fits mixed evidence (§3.2). "
    "The summary is at odds with itself here: §3.2 has every model above 50% with mixed evidence, yet 38.97% "
    "for LLaMA2-70B; Figure 5's setting may be one the summary does not describe"
)
DESCRIPTION = (
    "read as temporal conflict with mixed evidence, without and with the question's time span ('correct_temporal', "
    "'correct_temporal_description'): MR above 50% without the description is the mixed-evidence regime (§3.2), "
    "and the summary's prompt figures take temporal conflict as their example (Appendix D, Figure 9)"
)
OAR_DROP = (
    "read as the drop in points of OAR without evidence from the 1:0 run (default data only) to the 2:1 run, on the "
    "untrained model's scored subset; the summary does not say whether the 37.6% is relative or in points"
)

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber(
        "conflictbank",
        "QA pairs in the dataset",
        None,
        "the release",
        553117,
        "count",
        "Abstract; §1 p. 2",
        ours=Ours(
            "conflictbank_mr",
            "n_records",
            models=None,
            where={"setting": "default"},
            low=None,
            high=None,
            n="n_records",
            scale=1.0,
        ),
        note="this run: the records read (conflictbank.max_per_relation samples them)",
        table="§1 text",
        key="qa-pairs",
    ),
    *(
        PaperNumber(
            "conflictbank",
            "MR",
            "LLaMA2-70B",
            f"{kind} conflict, 'with two pieces of evidence'",
            value,
            "%",
            "§3.2 p. 6, Figure 3 p. 5 (as the summary cites them)",
            ours=_mr(kind),
            note=ALONE.format(kind=kind),
            decimals=2,
            table="Figure 3",
            key=f"fig3-mr-llama2-70b-{kind}",
        )
        for kind, value in (("misinformation", 9.45), ("temporal", 7.77), ("semantic", 3.73))
    ),
    *(
        PaperNumber(
            "conflictbank",
            "MR",
            model,
            "conflicting memory later in the sequence",
            value,
            "%",
            "§3.2 p. 6, Figure 5 p. 6",
            ours=_mr("correct_misinformation"),
            note=LATER,
            decimals=2,
            table="Figure 5",
            key=f"fig5-mr-{model.lower()}-conflict-later",
        )
        for model, value in (("LLaMA2-7B", 56.44), ("LLaMA2-70B", 38.97))
    ),
    *(
        PaperNumber(
            "conflictbank",
            "MR",
            "LLaMA3-70B",
            setting,
            value,
            "%",
            "§3.5 p. 8, Figure 8 p. 7",
            ours=_mr(ours),
            note=DESCRIPTION,
            decimals=2,
            table="Figure 8",
            key=f"fig8-mr-llama3-70b-{ours}",
        )
        for setting, value, ours in (
            ("question without a description", 67.52, "correct_temporal"),
            ("question with a temporal or semantic description", 8.31, "correct_temporal_description"),
        )
    ),
    PaperNumber(
        "conflictbank",
        "drop in OAR without evidence after continued pre-training",
        "Mistral-7B",
        "default : conflicting = 2:1 against 1:0",
        37.6,
        "points",
        "§3.3 pp. 6-7",
        ours=_oar_drop("2:1"),
        note=OAR_DROP + "; paired: both runs answer the same records, and the interval is the paired one",
        decimals=1,
        table="§3.3 text",
        key="embedded-oar-drop-mistral-7b",
    ),
    # Human judgements of the data's quality
    PaperNumber(
        "conflictbank",
        "accuracy of the conflict classifier, manual evaluation (lower bound: 'over 95%')",
        None,
        "200 random examples",
        95,
        "%",
        "§2.5 p. 4",
        caveat=HUMAN_LABELS,
        paper_n=200,
        decimals=0,
        table="§2.5 text",
        key="classifier-accuracy",
    ),
    PaperNumber(
        "conflictbank",
        "examples judged ambiguously conflicting",
        None,
        "200 examples per volunteer",
        1,
        "count",
        "Appendix B.4 p. 16 ('Only one of 200')",
        caveat=HUMAN_LABELS,
        paper_n=200,
        table="§B.4 text",
        key="ambiguous-examples",
    ),
)

SETTING = "a setting of the study, which config/paper-conflictbank.yaml sets, not a result"
EXCLUSIONS: tuple[Exclusion, ...] = tuple(
    Exclusion("conflictbank", what, source, reason)
    for what, source, reason in (
        (
            "7,453,853 claim-evidence pairs",
            "Abstract; §1 p. 2",
            "the evidence release (Warrieryes/CB_claim_evidence) is not read: this workflow evaluates on the QA pairs",
        ),
        (
            "2,863,205 Wikidata claims; the April 2, 2024 dump; the 100 most frequent relations",
            "§1 p. 2; §2.2 pp. 2-3",
            "inputs of the authors' construction, which this workflow does not rerun",
        ),
        (
            "OAR decreases by 41.5% for LLaMA2-7B at 2:1",
            "§3.3 pp. 6-7",
            "§3.1 and §C.2 name Qwen1.5-4B, Mistral-7B and LLaMA3-8B as the continued-pre-trained models: no "
            "LLaMA2-7B was trained, "
            "so no run can produce the number the summary attributes to it",
        ),
        (
            "Qwen1.5-4B's preference for later-positioned conflict evidence, 77.52% versus 82.08%",
            "§3.4 p. 8, Figure 7 p. 7",
            "the summary gives neither the rate nor the two conditions; claim qwen-later-external checks what "
            "the sentence says",
        ),
        (
            "MR 55.37% → 41.80% with a 2:1 internal conflict ratio",
            "§3.5 p. 8, Figure 8 p. 7",
            "the summary ties it to LLaMA3-70B, which §C.2 does not list among the continued-pre-trained models, "
            "and names no "
            "conflict kind; claim descriptions-lower-mr-internal checks the direction",
        ),
        (
            "twelve LLMs of four series, 0.5B to 70B",
            "Abstract; §3.1 pp. 4-5; §C.1 p. 16",
            "the study's design, not a result",
        ),
        (
            "continued pre-training: ratios 1:0, 2:1, 1:1, 2:3; 4,500 steps; 1.06 billion tokens; learning rate "
            "2e-5; batch 256",
            "§C.2 p. 16",
            SETTING,
        ),
        ("five volunteers, 200 examples each", "§B.4 p. 16", "the size of the human evaluation; " + HUMAN_LABELS),
        (
            "Tables 1-4 and 6-9: an example, the comparison with prior datasets, running time and data volume, "
            "templates, prompts",
            "§B.1-B.3, D pp. 15-22",
            "not in the summary's text (it cites them without their cells), and not results; the stored copy of "
            "arxiv.org/html/2408.12076v1 (search tool, pages) holds only the page's opening, without them",
        ),
        (
            "Figures 3-8: per-model MR, OAR and preference bars",
            "§3 pp. 5-7",
            "the summary gives only the values typed in as rows (the stored arXiv HTML holds only the page's "
            "opening); the claims of §3 check what it says of the rest",
        ),
    )
)

"""What the CAD and AdaCAD papers report on MemoTrap, for the reproduction report.

CAD (Shi et al. 2023, "Trusting Your Evidence: Hallucinate Less with Context-aware Decoding", arXiv 2305.14739,
NAACL 2024) evaluates MemoTrap beside NQ-Swap as its knowledge-conflict tasks, across OPT, GPT, LLaMA and FLAN-T5
models. AdaCAD (Wang et al. 2024, arXiv 2409.07394, NAACL 2025) reports six QA datasets and three summarization
tasks. Neither paper's text is on this machine (``../shared/papers/`` holds the four papers the workflow started
from), and the searches of 2026-12-06 reached only their abstracts (arxiv.org/html/2409.07394v1's abstract;
CAD's on arxiv.deeppaper.ai and liner.com): no table cell of either could be read, so every MemoTrap number of
them is an exclusion below, named per row, and the one sentence the CAD abstract states about knowledge conflicts
is a claim checked against this run's paired CAD-minus-greedy differences. A third-party survey README
(the hallucination-survey repository the ``code`` search found) lists CAD's MemoTrap metric as exact match of
generated text, where this workflow scores the classes' log-likelihood (:mod:`conflictlab.memotrap.scoring`).
"""

from __future__ import annotations

from conflictlab.memotrap.claims import CLAIMS
from conflictlab.report.reproduction import Exclusion, Paper, PaperNumber

__all__ = ["CLAIMS", "EXCLUSIONS", "NUMBERS", "PAPER"]

PAPER = Paper(
    "memotrap",
    "MemoTrap under CAD (Shi et al. 2023, arXiv 2305.14739) and AdaCAD (Wang et al. 2024, arXiv 2409.07394)",
    "(none on this machine)",
    "Only the two papers' abstracts could be retrieved; their MemoTrap tables are listed as exclusions, one per "
    "row, and CAD's abstract sentence on knowledge conflicts is checked against this run's paired differences "
    "(results/tables/memotrap_accuracy.csv, file = all).",
)

NO_COPY = "no copy of the paper's text is reachable here (only its abstract); the number could not be read"

# CAD's knowledge-conflict table, one row per model family its abstract names (sizes could not be read either).
CAD_FAMILIES = ("OPT", "GPT", "LLaMA", "FLAN-T5")

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber(
        "memotrap",
        "MemoTrap accuracy, regular decoding and CAD",
        None,
        "CAD's knowledge-conflict table (MemoTrap and NQ-Swap)",
        None,
        "%",
        "CAD paper, Abstract (the only part retrieved); its knowledge-conflict results table was not reachable",
        note="per-family rows: the exclusions below; this run: results/tables/memotrap_accuracy.csv",
        key="cad:memotrap",
    ),
)


EXCLUSIONS: tuple[Exclusion, ...] = (
    *(
        Exclusion(
            "memotrap",
            f"MemoTrap accuracy of the {family} models, regular decoding and CAD",
            "CAD paper, knowledge-conflict results table",
            NO_COPY,
        )
        for family in CAD_FAMILIES
    ),
    Exclusion(
        "memotrap",
        "CAD's α for the knowledge-conflict tasks",
        "CAD paper, experimental setup",
        NO_COPY + "; this workflow runs the CAD strengths of methods.list",
    ),
    Exclusion(
        "memotrap",
        "MemoTrap rows of AdaCAD",
        "AdaCAD paper (arXiv 2409.07394), Abstract: six QA datasets, three summarization tasks",
        NO_COPY + "; whether MemoTrap is among its six QA datasets could not be read",
    ),
    Exclusion(
        "memotrap",
        "AdaCAD's average QA gain of 14.21 points over a static contrastive baseline",
        "AdaCAD paper, Abstract",
        "an average over its QA datasets (MemoTrap not known to be one of them), not a MemoTrap number",
    ),
)

"""The NQ-Swap numbers of the CAD paper (Shi et al. 2023) and the AdaCAD paper (Wang et al. 2024), their result
sentences about it, and what is no row, for the reproduction report (:mod:`conflictlab.report.reproduction`).

Where the numbers were looked for (the ``search`` tool's stored public pages and documentation, December 2026):
both papers' abstracts are reachable (arxiv.org/abs/2305.14739 through its Hugging Face and Papers with Code
pages; arxiv.org/html/2409.07394v1 and v2), but only the first part of each stored page is: the results tables,
where each paper prints NQ-Swap exact match or accuracy per model and decoding method, are not. So every table
row below carries no value (the report says "no number in the paper's text copy" and still shows this run's
number), and its source says which table the number is in and that its cells could not be read. The papers'
models are not named in the reachable text beyond the CAD abstract's families (OPT, GPT, LLaMA, FLAN-T5), so a
row's ``model`` says so and the verdict is "model absent" with any configured model. Numbers typed in are those
of the abstracts only, which are no NQ-Swap row (:data:`EXCLUSIONS`). To complete a row: type its cell in from
the paper's table (value, table, page) and name the model as the paper does.
"""

from __future__ import annotations

from conflictlab.nq_swap.claims import CLAIMS
from conflictlab.report.reproduction import Exclusion, Ours, Paper, PaperNumber

__all__ = ["PAPER", "NUMBERS", "CLAIMS", "EXCLUSIONS"]

CAD = "CAD paper (Shi et al. 2023, arXiv 2305.14739)"
ADACAD = "AdaCAD paper (Wang et al. 2024, NAACL 2025, arXiv 2409.07394)"
UNREACHABLE = "the table's cells could not be reached here (only the first part of each stored page is)"

PAPER = Paper(
    "nq_swap",
    "NQ-Swap in the CAD paper (Shi et al. 2023) and the AdaCAD paper (Wang et al. 2024)",
    "none (no text copy: arXiv 2305.14739 and 2409.07394 were looked for with the search tool)",
    "No text copy of either paper is here; their abstracts were reachable, their results tables were not, so the "
    "rows name where each number is printed and carry no value. EM: exact match of the answer with the "
    "substituted answer (the context's). This run: results/tables/nq_swap.csv.",
)

PAPER_MODELS = "each model of the paper's table (names not reachable here)"


def _ours(method: str, metric: str = "EM sub") -> Ours:
    return Ours(
        "nq_swap",
        "value",
        models="nq_swap.models",
        where={"benchmark": "NQ-Swap", "metric": metric, "method": method},
        kind="proportion",
    )


def _row(paper: str, key: str, metric: str, setting: str, source: str, method: str, note: str) -> PaperNumber:
    return PaperNumber(
        "nq_swap",
        metric,
        PAPER_MODELS,
        setting,
        None,
        "%",
        f"{source}; {UNREACHABLE}",
        ours=_ours(method),
        note=f"{note} This run: results/tables/nq_swap.csv, method = {method}, metric = EM sub.",
        table=paper,
        key=key,
    )


CAD_SOURCE = (
    f"{CAD}, Abstract (knowledge conflicts: 'substantial improvements in tasks where resolving the knowledge "
    "conflict is essential') and the knowledge-conflict results table with NQ-SWAP exact match"
)
ADACAD_SOURCE = f"{ADACAD}, Abstract (six QA datasets, four LLMs) and the QA results table with NQ-Swap accuracy"

NUMBERS: tuple[PaperNumber, ...] = (
    _row(
        "CAD paper",
        "cad:regular",
        "NQ-SWAP exact match, regular decoding",
        "substituted context, regular (greedy) decoding",
        CAD_SOURCE,
        "greedy",
        "The paper's regular decoding is this run's greedy row.",
    ),
    _row(
        "CAD paper",
        "cad:cad",
        "NQ-SWAP exact match, context-aware decoding",
        "substituted context, CAD at the paper's α",
        CAD_SOURCE,
        "cad-a1",
        "The paper's α for knowledge conflicts is not reachable here; this run's cad-a1 is read.",
    ),
    _row(
        "AdaCAD paper",
        "adacad:greedy",
        "NQ-Swap accuracy, greedy decoding",
        "substituted context, greedy decoding",
        ADACAD_SOURCE,
        "greedy",
        "The paper's accuracy on NQ-Swap is read as exact match with the substituted answer.",
    ),
    _row(
        "AdaCAD paper",
        "adacad:cad",
        "NQ-Swap accuracy, CAD",
        "substituted context, CAD (the paper's static contrastive baseline)",
        ADACAD_SOURCE,
        "cad-a1",
        "The paper's CAD weight is not reachable here; this run's cad-a1 is read.",
    ),
    _row(
        "AdaCAD paper",
        "adacad:adacad",
        "NQ-Swap accuracy, AdaCAD",
        "substituted context, AdaCAD",
        ADACAD_SOURCE,
        "adacad",
        "AdaCAD's weight floored at 0, the authors' QA setting (docs/methods.md).",
    ),
)

NOT_NQ_SWAP = "not an NQ-Swap number"
EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        "nq_swap",
        "average QA accuracy gain of AdaCAD over a static contrastive baseline: 14.21% (absolute)",
        f"{ADACAD}, Abstract (arxiv.org/html/2409.07394v2)",
        f"{NOT_NQ_SWAP}: an average over six QA datasets, of which NQ-Swap is one; this workflow runs NQ-Swap alone",
    ),
    Exclusion(
        "nq_swap",
        "summary factuality gain of AdaCAD: 6.19 AlignScore (v2; 5.59 in v1)",
        f"{ADACAD}, Abstract (arxiv.org/html/2409.07394v1 and v2)",
        f"{NOT_NQ_SWAP}: summarization",
    ),
    Exclusion(
        "nq_swap",
        "factuality gain of CAD for LLaMA in summarization: 14.3%",
        f"{CAD}, Abstract",
        f"{NOT_NQ_SWAP}: summarization",
    ),
    Exclusion(
        "nq_swap",
        "NQ-Swap accuracy of COIECD (a baseline of the AdaCAD paper's table)",
        f"{ADACAD}, the QA results table",
        "the method is not implemented in this workflow (and the cell is not reachable here)",
    ),
    Exclusion(
        "nq_swap",
        "MemoTrap exact match / accuracy in the same tables",
        f"{CAD} and {ADACAD}",
        "another benchmark (MemoTrap), not NQ-Swap",
    ),
)

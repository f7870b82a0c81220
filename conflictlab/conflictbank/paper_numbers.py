"""The ConflictBank paper's headline numbers, for the reproduction report.

The text copy is a source-linked summary of the paper (arXiv 2408.12076v1),
not the paper: each number is typed in as the summary states it, located
by the section, page and figure the summary cites. The summary often
leaves the setting open (which conflict kind, which evidence order); such
rows carry that as their caveat. See :mod:`conflictlab.report.reproduction`.
"""

from __future__ import annotations

from conflictlab.report.reproduction import Ours, Paper, PaperNumber

PAPER = Paper(
    "conflictbank",
    "ConflictBank: A Benchmark for Evaluating the Influence of Knowledge Conflicts in LLM",
    "003_f1d9f2914a4daca0.txt",
    "The text copy is a summary of the paper, citing section, page and figure; its numbers are typed in as the summary states "
    "them. MR: memorization ratio, OAR / (OAR + CAR), on the records a model answers right without and with the correct evidence.",
)

SETTING_OPEN = "the summary does not say which conflict kind or evidence setting"

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber("conflictbank", "QA pairs in the dataset", None, "the release", 553117, "count", "Abstract; §1 p. 2",
                ours=Ours("conflictbank_mr", "n_records", models=None, where={"setting": "default"}, low=None, high=None,
                          n="n_records", scale=1.0),
                note="this run: the records read (conflictbank.max_per_relation samples them)"),
    *(
        PaperNumber("conflictbank", "MR", "LLaMA2-70B", f"{kind} conflict, 'with two pieces of evidence'", value, "%",
                    "§3.2 p. 6, Figure 3 p. 5 (as the summary cites them)",
                    ours=Ours("conflictbank_mr", "mr", models="conflictbank.models", where={"setting": kind},
                              low="mr_low", high="mr_high", n="n_mr"),
                    caveat="the summary's setting ('with two pieces of evidence') is not certainly this run's conflicting evidence alone",
                    note="this run: the conflicting evidence alone")
        for kind, value in (("misinformation", 9.45), ("temporal", 7.77), ("semantic", 3.73))
    ),
    *(
        PaperNumber("conflictbank", "MR", model, "conflicting memory later in the sequence", value, "%", "§3.2 p. 6, Figure 5 p. 6",
                    caveat=SETTING_OPEN)
        for model, value in (("LLaMA2-7B", 56.44), ("LLaMA2-70B", 38.97))
    ),
    *(
        PaperNumber("conflictbank", "drop in OAR without evidence after continued pre-training", model, "default : conflicting = 2:1",
                    value, "%", "§3.3 pp. 6-7",
                    caveat="a change between two training runs, not said to be relative or in points; "
                           "results/tables/conflictbank_embedded.csv gives each run's OAR with its interval, not the change's",
                    note="§C.2 names Qwen1.5-4B, Mistral-7B and LLaMA3-8B as the trained models; the summary's LLaMA2-7B is as printed")
        for model, value in (("LLaMA2-7B", 41.5), ("Mistral-7B", 37.6))
    ),
    *(
        PaperNumber("conflictbank", "preference for later-positioned conflict evidence, with internal conflicts", "Qwen1.5-4B",
                    f"the summary's {which} figure ('77.52% versus 82.08%')", value, "%", "§3.4 p. 8, Figure 7 p. 7",
                    caveat="the summary does not say which rate or which two conditions the figures are")
        for which, value in (("first", 77.52), ("second", 82.08))
    ),
    *(
        PaperNumber("conflictbank", "MR", "LLaMA3-70B", setting, value, "%", "§3.5 p. 8, Figure 8 p. 7", caveat=SETTING_OPEN)
        for setting, value in (("question without a description", 67.52), ("question with a temporal or semantic description", 8.31),
                               ("2:1 internal conflict, without a description", 55.37), ("2:1 internal conflict, with a description", 41.80))
    ),
)

# Result sentences (conflictlab.report.reproduction.Claim) and the numbers that are no row, with why.
CLAIMS: tuple = ()
EXCLUSIONS: tuple = ()

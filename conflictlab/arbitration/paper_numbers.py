"""The evidence-arbitration paper's headline numbers, for the reproduction report.

Its results are bar charts (Figure 4) and one table whose cells are lost
in the text copy (Table A2); its text states no accuracy. The rows name
each headline figure and table with the value left out, so the report
says so rather than showing a number read off a chart.
"""

from __future__ import annotations

from conflictlab.report.reproduction import Paper, PaperNumber

PAPER = Paper(
    "arbitration",
    "When Text and Numbers Disagree: Evidence Arbitration in LLMs",
    "002_a00f01670af5d3e1.txt",
    "Its results are Figure 4's bars and Table A2, whose cells are lost in the text copy; its text states no accuracy. Seven "
    "models (§3.5): Qwen3 1.7B, 4B, 8B and 14B, Gemma-2-9B-It, Llama-3-8B-Instruct, Mistral-7B-Instruct-v0.3.",
)

SEVEN = "each of its seven models"
THIS_RUN = "this run: results/tables/arbitration_accuracy.csv, condition = conflict"

NUMBERS: tuple[PaperNumber, ...] = (
    *(
        PaperNumber("arbitration", "accuracy under conflict, per evidence order", SEVEN, setting, None, "%",
                    f"§4.{i + 1}, Figure 4{panels} (bars only)", note=THIS_RUN)
        for i, (setting, panels) in enumerate((("modality (text vs numbers)", "A-B"), ("recency (recent vs stale window)", "C-D"),
                                               ("reliability (clean vs unreliable source)", "E-F"), ("tool (context vs tool forecast)", "G-H")))
    ),
    PaperNumber("arbitration", "absolute accuracy change under each sensitivity sweep (mean ± sd)", SEVEN,
                "domain, answer choices, T, σ, margin", None, "points", "Appendix E, Table A2 (cells lost in the text copy)",
                note="this run: results/tables/arbitration_sensitivity.csv"),
)

# Result sentences (conflictlab.report.reproduction.Claim) and the numbers that are no row, with why.
CLAIMS: tuple = ()
EXCLUSIONS: tuple = ()

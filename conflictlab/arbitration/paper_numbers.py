"""The evidence-arbitration paper's headline numbers, for the reproduction report.

Its results are bar charts (Figure 4) and one table whose cells are lost
in the text copy (Table A2); its text states no accuracy. The rows name
each headline figure and table with the value left out, so the report
says so rather than showing a number read off a chart.
"""

from __future__ import annotations

from conflictlab.arbitration.claims import CLAIMS
from conflictlab.report.reproduction import Exclusion, Paper, PaperNumber

__all__ = ["CLAIMS", "EXCLUSIONS", "NUMBERS", "PAPER"]

PAPER = Paper(
    "arbitration",
    "When Text and Numbers Disagree: Evidence Arbitration in LLMs",
    "002_a00f01670af5d3e1.txt",
    "Its results are Figure 4's bars and Table A2, whose cells are lost in the text copy; its text states no "
    "accuracy. Seven "
    "models (§3.5): Qwen3 1.7B, 4B, 8B and 14B, Gemma-2-9B-It, Llama-3-8B-Instruct, Mistral-7B-Instruct-v0.3.",
)

SEVEN = "each of its seven models"
THIS_RUN = "this run: results/tables/arbitration_accuracy.csv, condition = conflict"

NUMBERS: tuple[PaperNumber, ...] = (
    *(
        PaperNumber(
            "arbitration",
            "accuracy under conflict, per evidence order",
            SEVEN,
            setting,
            None,
            "%",
            f"§4.{i + 1}, Figure 4{panels} (bars only)",
            note=THIS_RUN,
            table="Figure 4",
            key=f"figure4:{setting.split()[0]}",
        )
        for i, (setting, panels) in enumerate(
            (
                ("modality (text vs numbers)", "A-B"),
                ("recency (recent vs stale window)", "C-D"),
                ("reliability (clean vs unreliable source)", "E-F"),
                ("tool (context vs tool forecast)", "G-H"),
            )
        )
    ),
    PaperNumber(
        "arbitration",
        "absolute accuracy change under each sensitivity sweep (mean ± sd)",
        SEVEN,
        "domain, answer choices, T, σ, margin",
        None,
        "points",
        "Appendix E, Table A2 (cells lost in the text copy)",
        note="this run: results/tables/arbitration_sensitivity.csv",
        table="Table A2",
        key="tableA2",
    ),
)

GENERATOR = "a parameter of the synthetic generator, set in this workflow's config (arbitration.*), not a result"
COST = "the paper's compute, not a result (this workflow's timings are its own)"
EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        "arbitration", "2000 instances per setting (1000 per label); 1000 per sensitivity setting", "§4", GENERATOR
    ),
    Exclusion("arbitration", "three random seeds", "§3.4; Figure 4 caption", GENERATOR),
    Exclusion("arbitration", "T = 16, k = 1, one-minute sampling", "§3.3; Appendix B.1", GENERATOR),
    Exclusion(
        "arbitration", "margin range (0.35, 0.45); noise sd 0.05; slope range (-0.05, 0.05)", "Appendix B.1", GENERATOR
    ),
    Exclusion(
        "arbitration",
        "rejection when the minimum margin is below 1.5 sd times the square root of k",
        "Appendix B.1",
        GENERATOR,
    ),
    Exclusion(
        "arbitration", "50% of the time-series values masked as unreliable", "§3.2 Reliability Conflicts", GENERATOR
    ),
    Exclusion("arbitration", "tool forecasts at least 0.15 from the threshold 0.5", "Appendix B.3", GENERATOR),
    Exclusion(
        "arbitration",
        "sweeps: T in {8, 16, 32}; sd in {0.01, 0.05, 0.1}; margins (0.15, 0.25), (0.25, 0.35), (0.35, 0.45)",
        "Appendix B.1; Appendix E",
        GENERATOR,
    ),
    Exclusion("arbitration", "start hour between 08:00 and 16:00", "Appendix B.1", GENERATOR),
    Exclusion(
        "arbitration", "the example prompts' times and values", "Appendix C.3, C.7", "examples of prompts, not results"
    ),
    Exclusion(
        "arbitration",
        "batch size 8, five generated tokens, FP16",
        "Appendix D",
        "the paper's inference settings (this workflow reads the A/B logits, as the paper does)",
    ),
    Exclusion("arbitration", "about 40 GPU hours on one RTX PRO 5000 (48 GB)", "Appendix D", COST),
    Exclusion(
        "arbitration",
        "thresholds in the findings: chance (0.5), near-zero accuracy",
        "§4.1, §4.4",
        "words of the claims, fixed in conflictlab.arbitration.claims (chance 0.5, near zero at most 0.1)",
    ),
)

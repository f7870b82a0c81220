"""The ContextConflict paper's headline numbers, typed in from its text copy.

Its tables (1-10) lost their cells in the copy; every number here is one
its text states (abstract, results paragraphs, appendix prose), with the
sentence and the table it comes from. A headline table whose cells are
lost is a row without a value (``value=None``), so the report says so and
still shows this run's number where it has one. See
:mod:`conflictlab.report.reproduction` for how rows are compared.
"""

from __future__ import annotations

from conflictlab.contextconflict.variants import SteeringVariant
from conflictlab.report.reproduction import Instrument, Ours, Paper, PaperNumber

PAPER = Paper(
    "contextconflict",
    "Large Language Models in Resolving Contextual Knowledge Conflicts (ContextConflict)",
    "000_9b6c6cf2b7e20b09.txt",
    "Its Tables 1-10 lost their cells in the text copy: the numbers are those its text states. Seven models (Llama-3.1-8B-Instruct, "
    "GPT-OSS-20B and -120B, Llama-3.1-70B-Instruct, GPT-5, Claude-4.5-Sonnet, Gemini-2.5-Pro); default Shapley scorer "
    "Llama-3.2-1B (§3.1); steering at α = 1.0 with a 20% calibration / 80% test split (§5).",
)

ALL_SAMPLES = "this run: every sample of the type (the text does not say whether Table 4's unsteered rows use the 80% test split)"
TABLE4 = "Table 4, whose cells are lost"
TEXT_COPY_LOST = "cells lost in the text copy"
HUMAN_LABELS = "the paper's human annotations are not released"

_accuracy = lambda conflict_type: Ours("accuracy", "accuracy", where={"level": "type", "conflict_type": conflict_type})
_table3 = lambda column: Ours("table3", column, where={"conflict_type": "all"}, low=f"{column}_ci_low", high=f"{column}_ci_high", scale=1.0)

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber("contextconflict", "samples in the dataset", None, "the whole release, six conflict types", 5781, "count",
                "Abstract; §2.2 ('for a total of 5,781'); §6",
                ours=Ours("table1", "size", models=None, low=None, high=None, n="size", scale=1.0, total=True),
                note="this run: the samples read (data.max_per_subset samples them); the release's file listing holds 5,770 "
                     "(conflictlab.contextconflict.conflict_types.RELEASE_FILES)"),
    # §3.3, "Task Difficulty and Model Scaling"
    PaperNumber("contextconflict", "accuracy", "llama-3.1-8b-instruct", "inferential, unsteered", 24.8, "%",
                f"§3.3 'Task Difficulty and Model Scaling' ('Inferential: 24.8% on llama-3.1-8b-instruct'); {TABLE4}",
                ours=_accuracy("inferential"), note=ALL_SAMPLES),
    PaperNumber("contextconflict", "accuracy", "claude-4.5-sonnet", "inferential, unsteered (the highest of the seven models)", 44.3, "%",
                f"§3.3 'Task Difficulty and Model Scaling' ('44.3% on claude-4.5-sonnet'); {TABLE4}",
                ours=_accuracy("inferential"), note=ALL_SAMPLES),
    *(
        PaperNumber("contextconflict", "accuracy", "the best of the seven models", f"{conflict_type} (the highest)", value, "%",
                    f"§3.3 'Task Difficulty and Model Scaling' ('{conflict_type.capitalize()} (up to {value}%)'); {TABLE4}",
                    caveat="the text does not name the model that reaches it")
        for conflict_type, value in (("temporal", 68.0), ("misinformation", 61.5))
    ),
    *(
        PaperNumber("contextconflict", "Balance (normalised Gini, lower is more even)", model, "summarization", value, "%",
                    "§3.3 'Pervasive Position Bias' ('GPT-OSS-120B 31.9 vs. 20B 39.8')",
                    caveat="the text does not say which summarization type, or which average over types, it is")
        for model, value in (("GPT-OSS-120B", 31.9), ("GPT-OSS-20B", 39.8))
    ),
    # §3.3, "Faithfulness Patterns"
    PaperNumber("contextconflict", "Faithfulness (RAGAS)", "GPT-OSS-20B", "perspective", 92.5, "%",
                f"§3.3 'Faithfulness Patterns' ('GPT-OSS-20B on Perspective reaches 92.5% Faithfulness'); {TABLE4}",
                ours=Ours("faithfulness", "faithfulness", where={"conflict_type": "perspective"}, n="n_scored"),
                instrument=Instrument("judge", None)),
    PaperNumber("contextconflict", "Balance (normalised Gini, lower is more even)", "GPT-OSS-20B", "perspective", 34.5, "%",
                f"§3.3 'Faithfulness Patterns' ('its Balance stays at 34.5'); {TABLE4}",
                ours=Ours("balance", "balance", where={"conflict_type": "perspective", "group": "all"}, instrument_column="scorer"),
                instrument=Instrument("scorer", "Llama-3.2-1B")),
    # §4.3, "Output-Level Corroboration" (and §3.3 for ambiguity)
    *(
        PaperNumber("contextconflict", "share of the first evidence piece (Shapley)", "Llama-3.1-8B-Instruct", conflict_type, value, "%",
                    f"§4.3 'Output-Level Corroboration' ('{value}% of contributions in {conflict_type.capitalize()}'); Figure 23",
                    caveat="results/tables/position_shares.csv gives the first piece's mean share per evidence count; "
                           "the paper's is pooled over counts")
        for conflict_type, value in (("ambiguity", 69.0), ("granularity", 38.4), ("perspective", 35.0))
    ),
    # §5, steering
    PaperNumber("contextconflict", "accuracy gain of All-Tokens steering over the unsteered model", "Llama-3.1-8B-Instruct",
                "temporal, α = 1.0", 19.2, "points", f"§5 'Steered Inference' ('+19.2 points on Temporal'); {TABLE4}",
                caveat="a difference of two Table 4 rows: results/tables/table4.csv gives each row's interval, not the difference's"),
    PaperNumber("contextconflict", "accuracy under CAS steering", "GPT-OSS-20B", "temporal, α = 1.0, test split", 65.5, "%",
                f"§5 'Analysis and Comparisons' ('Accuracy 65.5 vs. 64.1'); {TABLE4}",
                ours=Ours("table4", "value", models="steering.models",
                          where={"variant": SteeringVariant("cas", 1.0).format(), "metric": "accuracy", "conflict_type": "temporal"}),
                note="the paper's test split is 80% of the data (steering.calibration_fraction: 0.2)"),
    PaperNumber("contextconflict", "accuracy under the paper's direction u(l)", "GPT-OSS-20B", "temporal, α = 1.0, test split", 64.1, "%",
                f"§5 'Analysis and Comparisons' ('Accuracy 65.5 vs. 64.1'); {TABLE4}",
                caveat="the text does not say under which injection schedule (All-Tokens or First-Generated)"),
    # §3.2 and Appendix C.2: agreement with the human annotators
    *(
        PaperNumber("contextconflict", f"Cohen's κ, {who}", None, "108 summarization samples of three models", value, "κ", source,
                    caveat=HUMAN_LABELS)
        for who, value, source in (
            ("Shapley Balance vs annotator 1", 0.5208, "Appendix C.2 ('κ=0.5208 and 0.5014'); Table 2, whose cells are lost"),
            ("Shapley Balance vs annotator 2", 0.5014, "Appendix C.2 ('κ=0.5208 and 0.5014'); Table 2, whose cells are lost"),
            ("annotator 1 vs annotator 2", 0.5199, "Appendix C.2 ('κ=0.5199'); §3.2 ('κ=0.52')"),
            ("LLM-as-a-Judge (GPT-5)", 0.51, "§3.2 ('to the LLM-as-a-Judge (κ=0.51)'); Table 2, whose cells are lost"),
        )
    ),
    # Headline tables whose cells are lost: this run's number where it has one.
    *(
        PaperNumber("contextconflict", metric, model, "72 human-verified samples", None, "log-likelihood",
                    f"Table 3 (causal intervention; {TEXT_COPY_LOST}); §3.2 'Causal Intervention'",
                    ours=_table3(column), note="this run: every summarization sample with a defined ranking, not the human-verified subset")
        for model in ("Llama-3.1-8B-Instruct", "GPT-OSS-20B")
        for metric, column in (("Δ_high: own log-likelihood drop, highest-φ piece removed", "delta_high"),
                               ("Δ_low: own log-likelihood drop, lowest-φ piece removed", "delta_low"))
    ),
    PaperNumber("contextconflict", "Balance under the scorers Llama-3.1-8B and Gemma-2B", "each of the seven models", "summarization types",
                None, "%", f"Appendix C.1, Table 6 ({TEXT_COPY_LOST})", note="this run: results/tables/table6.csv"),
    PaperNumber("contextconflict", "Balance from the human raters and the LLM judge", "three models", "summarization types", None, "%",
                f"Appendix C.2, Table 7 ({TEXT_COPY_LOST})", caveat=HUMAN_LABELS),
    PaperNumber("contextconflict", "probe accuracy, conflict vs consistent (5-fold CV)", "Llama-3.1-8B-Instruct", "per conflict type", None, "%",
                f"Appendix D.1, Table 8 ({TEXT_COPY_LOST})", note="this run: results/tables/table8_<model>.csv"),
    PaperNumber("contextconflict", "first-piece share after shuffling the evidence", "Llama-3.1-8B-Instruct, GPT-OSS-20B",
                "summarization types", None, "%", f"Appendix D.8, Tables 9 and 10 ({TEXT_COPY_LOST})",
                note="this run: results/tables/shuffled_positions_<model>.csv"),
)

# Result sentences (conflictlab.report.reproduction.Claim) and the numbers that are no row, with why.
CLAIMS: tuple = ()
EXCLUSIONS: tuple = ()

"""The ContextConflict paper's numbers, typed in from its text copy, its result sentences and what is no row.

Its tables (1-10) lost their cells in the copy; every number here is one its text states (abstract, results
paragraphs, appendix prose), with the sentence and the table it comes from. A lost table cell is no row but an
:data:`EXCLUSIONS` entry, except the two Table 4 cells the printed +19.2 is the difference of (they carry this
run's number into the derived row). Where the text leaves a reading open, the row's ``note`` states the reading
taken; a number no reading makes comparable is an exclusion with its reason. The result sentences are
:mod:`conflictlab.contextconflict.claims`. See :mod:`conflictlab.report.reproduction` for how rows are compared.

``paper_n``: Table 1's per-type sizes are lost in the copy; the n of a per-type row is the release's file count
of that type (:data:`conflictlab.contextconflict.conflict_types.RELEASE_FILES`, 5,770 files against the paper's
5,781), times the 80% test split for Table 4's steering rows.
"""

from __future__ import annotations

from conflictlab.contextconflict.claims import CLAIMS, HUMAN_LABELS
from conflictlab.contextconflict.conflict_types import RELEASE_FILES
from conflictlab.contextconflict.variants import SteeringVariant
from conflictlab.report.reproduction import Derived, Exclusion, Instrument, Ours, Paper, PaperNumber

__all__ = ["PAPER", "NUMBERS", "CLAIMS", "EXCLUSIONS"]

PAPER = Paper(
    "contextconflict",
    "Large Language Models in Resolving Contextual Knowledge Conflicts (ContextConflict)",
    "000_9b6c6cf2b7e20b09.txt",
    "Its Tables 1-10 lost their cells in the text copy: the numbers are those its text states. Seven models "
    "(Llama-3.1-8B-Instruct, "
    "GPT-OSS-20B and -120B, Llama-3.1-70B-Instruct, GPT-5, Claude-4.5-Sonnet, Gemini-2.5-Pro); default Shapley scorer "
    "Llama-3.2-1B (§3.1); steering at α = 1.0 with a 20% calibration / 80% test split (§5).",
)
ALL_SAMPLES = (
    "this run: every sample of the type (the text does not say whether Table 4's unsteered rows use the 80% test split)"
)
TABLE4 = "Table 4, whose cells are lost"
TEXT_COPY_LOST = "cells lost in the text copy"
SETTING = "a setting of the method, which the paper config sets (config/paper-contextconflict.yaml), not a result"
TEST_SPLIT = 0.8  # §5: calibration 20%, test 80%


def _release_n(conflict_type: str, fraction: float = 1.0) -> int:
    """The release's samples of ``conflict_type`` (its file count), times ``fraction``."""
    return round(fraction * sum(n for (t, _), n in RELEASE_FILES.items() if t == conflict_type))


def _accuracy(conflict_type: str) -> Ours:
    return Ours("accuracy", "accuracy", where={"level": "type", "conflict_type": conflict_type})


def _table4(variant: SteeringVariant, metric: str, conflict_type: str) -> Ours:
    return Ours(
        "table4",
        "value",
        models="steering.models",
        where={"variant": variant.format(), "metric": metric, "conflict_type": conflict_type},
    )


BASE, ALL_TOKENS, CAS = SteeringVariant("base"), SteeringVariant("all_tokens", 1.0), SteeringVariant("cas", 1.0)
TEMPORAL_TEST_N = _release_n("temporal", TEST_SPLIT)
SPLIT_NOTE = (
    "paper's n: the release's temporal samples × the 80% test split (Table 1's count is lost); "
    "this run: the test split (steering.calibration_fraction: 0.2)"
)

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber(
        "contextconflict",
        "samples in the dataset",
        None,
        "the whole release, six conflict types",
        5781,
        "count",
        "Abstract; §2.2 ('for a total of 5,781'); §6",
        ours=Ours("table1", "size", models=None, low=None, high=None, n="size", scale=1.0, total=True),
        note="this run: the samples read (data.max_per_subset samples them); the release's file listing holds 5,770 "
        "(conflictlab.contextconflict.conflict_types.RELEASE_FILES)",
        table="§2.2 text",
        key="dataset-size",
    ),
    # §3.3, "Task Difficulty and Model Scaling"
    PaperNumber(
        "contextconflict",
        "accuracy",
        "llama-3.1-8b-instruct",
        "inferential, unsteered",
        24.8,
        "%",
        f"§3.3 'Task Difficulty and Model Scaling' ('Inferential: 24.8% on llama-3.1-8b-instruct'); {TABLE4}",
        ours=_accuracy("inferential"),
        note=ALL_SAMPLES,
        paper_n=_release_n("inferential"),
        table="Table 4",
        key="t4-accuracy-inferential-llama-3.1-8b-instruct",
    ),
    PaperNumber(
        "contextconflict",
        "accuracy",
        "claude-4.5-sonnet",
        "inferential, unsteered (the highest of the seven models)",
        44.3,
        "%",
        f"§3.3 'Task Difficulty and Model Scaling' ('44.3% on claude-4.5-sonnet'); {TABLE4}",
        ours=_accuracy("inferential"),
        note=ALL_SAMPLES,
        paper_n=_release_n("inferential"),
        table="Table 4",
        key="t4-accuracy-inferential-claude-4.5-sonnet",
    ),
    # §3.3, "Faithfulness Patterns"
    PaperNumber(
        "contextconflict",
        "Balance (normalised Gini, lower is more even)",
        "GPT-OSS-20B",
        "perspective",
        34.5,
        "%",
        f"§3.3 'Faithfulness Patterns' ('its Balance stays at 34.5'); {TABLE4}",
        ours=Ours(
            "balance", "balance", where={"conflict_type": "perspective", "group": "all"}, instrument_column="scorer"
        ),
        instrument=Instrument("scorer", "Llama-3.2-1B"),
        paper_n=_release_n("perspective"),
        table="Table 4",
        key="t4-balance-perspective-gpt-oss-20b",
    ),
    # §5, steering: the +19.2 is the difference of two Table 4 cells the copy lost; they are rows so that it
    # can be derived
    *(
        PaperNumber(
            "contextconflict",
            "accuracy",
            "Llama-3.1-8B-Instruct",
            f"temporal, {label}, test split",
            None,
            "%",
            f"§5 'Steered Inference'; {TABLE4}",
            ours=_table4(variant, "accuracy", "temporal"),
            paper_n=TEMPORAL_TEST_N,
            table="Table 4",
            key=f"t4-accuracy-temporal-llama-3.1-8b-instruct-{variant.format()}",
            note=f"the cell is lost; a row for the +19.2 steering gain it enters. {SPLIT_NOTE}",
        )
        for variant, label in ((BASE, "unsteered"), (ALL_TOKENS, "All-Tokens steering, α = 1.0"))
    ),
    PaperNumber(
        "contextconflict",
        "accuracy gain of All-Tokens steering over the unsteered model",
        "Llama-3.1-8B-Instruct",
        "temporal, α = 1.0, test split",
        19.2,
        "points",
        f"§5 'Steered Inference' ('+19.2 points on Temporal'); {TABLE4}",
        ours=Derived(
            "difference",
            (
                f"t4-accuracy-temporal-llama-3.1-8b-instruct-{ALL_TOKENS.format()}",
                f"t4-accuracy-temporal-llama-3.1-8b-instruct-{BASE.format()}",
            ),
            paired=True,
        ),
        paper_n=TEMPORAL_TEST_N,
        table="Table 4",
        key="t4-steering-gain-temporal-llama-3.1-8b-instruct",
        note=f"paired: the steered and unsteered runs answer the same test samples. {SPLIT_NOTE}",
    ),
    PaperNumber(
        "contextconflict",
        "accuracy under CAS steering",
        "GPT-OSS-20B",
        "temporal, α = 1.0, test split",
        65.5,
        "%",
        f"§5 'Analysis and Comparisons' ('Accuracy 65.5 vs. 64.1'); {TABLE4}",
        ours=_table4(CAS, "accuracy", "temporal"),
        paper_n=TEMPORAL_TEST_N,
        table="Table 4",
        key="t4-accuracy-temporal-gpt-oss-20b-cas-a1",
        note=SPLIT_NOTE,
    ),
    PaperNumber(
        "contextconflict",
        "accuracy under the paper's direction u(l)",
        "GPT-OSS-20B",
        "temporal, α = 1.0, test split",
        64.1,
        "%",
        f"§5 'Analysis and Comparisons' ('Accuracy 65.5 vs. 64.1'); {TABLE4}",
        ours=_table4(ALL_TOKENS, "accuracy", "temporal"),
        paper_n=TEMPORAL_TEST_N,
        table="Table 4",
        key="t4-accuracy-temporal-gpt-oss-20b-all-tokens-a1",
        note="read as All-Tokens: the text does not name the schedule, and §5 reports its gains under All-Tokens "
        f"('The All-Tokens schedule yields the largest accuracy gains'). {SPLIT_NOTE}",
    ),
    # §3.2 and Appendix C.2: agreement with the human annotators
    *(
        PaperNumber(
            "contextconflict",
            f"Cohen's κ, {who}",
            None,
            "108 summarization samples of three models",
            value,
            "κ",
            source,
            caveat=HUMAN_LABELS,
            paper_n=108,
            table="Table 2",
            key=key,
        )
        for who, value, source, key in (
            (
                "Shapley Balance vs annotator 1",
                0.5208,
                "Appendix C.2 ('κ=0.5208 and 0.5014'); Table 2, whose cells are lost",
                "t2-kappa-shapley-annotator-1",
            ),
            (
                "Shapley Balance vs annotator 2",
                0.5014,
                "Appendix C.2 ('κ=0.5208 and 0.5014'); Table 2, whose cells are lost",
                "t2-kappa-shapley-annotator-2",
            ),
            ("annotator 1 vs annotator 2", 0.5199, "Appendix C.2 ('κ=0.5199'); §3.2 ('κ=0.52')", "t2-kappa-annotators"),
            (
                "LLM-as-a-Judge (GPT-5)",
                0.51,
                "§3.2 ('to the LLM-as-a-Judge (κ=0.51)'); Table 2, whose cells are lost",
                "t2-kappa-llm-judge",
            ),
        )
    ),
)

_HOLDOUT = "its release has no field this project reads that marks a sample semi-synthetic or preserved"
EXCLUSIONS: tuple[Exclusion, ...] = tuple(
    Exclusion("contextconflict", what, source, reason)
    for what, source, reason in (
        # §2.2: the dataset's composition
        (
            "1,734 semi-synthetic instances (29.99%)",
            "§2.2 'Dataset Composition'",
            f"{_HOLDOUT}, and no union of its subsets gives 1,734 under §2.2's construction descriptions",
        ),
        ("4,047 preserved-original instances (70.01%)", "§2.2 'Dataset Composition'", _HOLDOUT),
        (
            "30% audit sample, 10% spot checks, 100% double annotation",
            "§2.2",
            "the authors' quality-assurance procedure, human work on unreleased labels, not a result",
        ),
        # §3.3 numbers the text gives without their model or type
        (
            "Temporal accuracy 'up to 68.0%' and Misinformation 'up to 61.5%'",
            "§3.3 'Task Difficulty and Model Scaling'",
            "the text does not name the model that reaches them; claim difficulty-hierarchy compares this run's "
            "highest "
            "accuracies per type with them",
        ),
        (
            "Balance GPT-OSS-120B 31.9 vs GPT-OSS-20B 39.8",
            "§3.3 'Pervasive Position Bias'",
            "the text does not say which summarization type or which average over types they are; claim "
            "balance-not-monotonic "
            "checks their order on the mean over types",
        ),
        (
            "the first evidence piece's share: 69.0% (Ambiguity), 38.4% (Granularity), 35.0% (Perspective), "
            "Llama-3.1-8B-Instruct",
            "§3.3 'Pervasive Position Bias'; §4.3 'Output-Level Corroboration'; Figure 23",
            "pooled over evidence counts, which results/tables/position_shares.csv gives per count without a "
            "pooled interval; "
            "claim first-evidence-shares pools them (weighted by samples) and shows them beside these",
        ),
        (
            "Faithfulness 92.5% of GPT-OSS-20B on Perspective",
            "§3.3 'Faithfulness Patterns'; Table 4",
            "the paper names no LLM behind its RAGAS scores (§3.1, footnote 3), so no judge can be configured as "
            "the paper's: "
            "results/tables/faithfulness.csv holds this run's under its own judge, and claim "
            "faithfulness-summarization "
            "checks the comparison the text makes",
        ),
        # §3.2 human-label study
        (
            "κ = 0.50-0.52 (metric vs annotators) and 0.52 (inter-human)",
            "§3.2 'Human Evaluation and LLM-as-a-Judge'",
            "the rows t2-kappa-* to two decimals; " + HUMAN_LABELS,
        ),
        (
            "108 annotated samples (three models, three tasks); 72 human-verified samples of Table 3",
            "§3.2; Appendix C.2",
            "the size of the human-annotated subset: " + HUMAN_LABELS,
        ),
        # Lost table cells
        (
            "Table 1: size, mean evidence pieces and implicit proportion per type",
            "§2.1, Table 1",
            TEXT_COPY_LOST + "; results/tables/table1.csv shows this run's beside the release's file counts",
        ),
        (
            "Table 2: Cohen's κ per comparison",
            "§3.2, Table 2",
            TEXT_COPY_LOST + " (beyond the κ the text states); " + HUMAN_LABELS,
        ),
        (
            "Table 3: Δ_high and Δ_low per model",
            "§3.2 'Causal Intervention', Table 3",
            TEXT_COPY_LOST + "; claim causal-intervention checks the direction the text states",
        ),
        (
            "Table 4: every cell except those the text states",
            "§3.3, Table 4",
            TEXT_COPY_LOST + "; the claims of §3.3 and §5 check what the text says of them",
        ),
        ("Table 5: base datasets (domain, licence, usage)", "Appendix B.1, Table 5", TEXT_COPY_LOST + "; not a result"),
        (
            "Table 6: Balance under the scorers Llama-3.1-8B and Gemma-2B",
            "Appendix C.1, Table 6",
            TEXT_COPY_LOST
            + "; claims scorer-rankings, gemini-best-ambiguity and llama-highest-balance check what the text says",
        ),
        (
            "Table 7: Balance from the human raters and the LLM judge",
            "Appendix C.2, Table 7",
            TEXT_COPY_LOST + "; " + HUMAN_LABELS,
        ),
        (
            "Table 8: conflict-consistent pair counts and cross-validation statistics",
            "Appendix D.1, Table 8",
            TEXT_COPY_LOST,
        ),
        (
            "Tables 9 and 10: evidence shares after shuffling",
            "Appendix D.8, Tables 9-10",
            TEXT_COPY_LOST + "; claim shuffling checks what the text says",
        ),
        (
            "Figures 2-4, 19-31: curves and pie charts",
            "§4; Appendix D",
            "figures without printed values; the claims of §4 and Appendix D check what the text says of them",
        ),
        # Settings, not results
        ("20% calibration / 80% test split; α = 1.0; α ∈ {0.5, 1.0, 1.5, 2.0}", "§5; Appendix D.9", SETTING),
        ("k = 10 singular values; ε_ER = 10^-12; ε_b = 10^-8; τ_b = 10^-12", "§4.2; Appendix D.3, D.6", SETTING),
        ("probes: C = 1.0, at most 1000 iterations, 5-fold stratified, 80/20 split", "Appendix D.1", SETTING),
        (
            "seven models, six conflict types, ten base datasets, 1-5 rating scale",
            "Abstract; §2; Appendix C.2",
            "the study's design, not a result",
        ),
    )
)

"""The CONFLICTS paper's headline numbers, for the reproduction report.

Its Tables 4-6 survive in the text copy and are typed in once, in
:mod:`conflictlab.conflicts.tables` (``PAPER_TABLE4/5/6``, which its tables
also print as rows ``paper``); the rows here are built from them, each
pointing at this run's row of the same table. See
:mod:`conflictlab.report.reproduction` for how rows are compared.
"""

from __future__ import annotations

from conflictlab.conflicts.prompts import STRATEGIES
from conflictlab.conflicts.tables import PAPER_TABLE4, PAPER_TABLE5, PAPER_TABLE6, PAPER_TABLE6_MODEL, THIS_RUN
from conflictlab.report.reproduction import Instrument, Ours, Paper, PaperNumber

PAPER = Paper(
    "conflicts",
    "DRAGged into Conflicts (the CONFLICTS benchmark)",
    "001_71e550573678e68d.txt",
    "Its Tables 4-6 survive in the text copy (typed in once, conflictlab.conflicts.tables). The paper's prompts are not published: "
    "this run's are its own (README, CONFLICTS). Task 2 is judged by Gemini 2.5 Flash in the paper (§5.2).",
)

# §5.2: "using Gemini 2.5 Flash (§4)" judges Table 5 (and Table 6); this run's CONFLICTS judge is
# conflicts.judge over judges (conflictlab.report.paper_models.instruments).
JUDGE = Instrument("conflicts judge", "Gemini 2.5 Flash")

# Each Table 5 column: (metric, this run's column, its interval's columns, its n).
TABLE5_COLUMNS = (
    ("expected behaviour", "expected_behaviour", "eb_low", "eb_high", "n_behaviour"),
    ("answer recall", "answer_recall", "ar_low", "ar_high", "n_recall"),
    ("factual grounding", "grounding", "gr_low", "gr_high", "n_grounding"),
)

NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber("conflicts", "queries in the dataset", None, "the release", 458, "count",
                "§3 ('The final Conflicts dataset contains 458 instances')",
                ours=Ours("conflicts_table4", "n", models=None, where={"source": THIS_RUN}, low=None, high=None, scale=1.0),
                note="this run: the queries read (conflicts.max_per_category samples them)"),
    *(
        PaperNumber("conflicts", "Task 1: conflict-type prediction accuracy", model, "every query", value, "%",
                    f"Table 4, row '{model}' (§5.2)",
                    ours=Ours("conflicts_table4", "accuracy", models="conflicts.models", where={"source": THIS_RUN}))
        for model, value in PAPER_TABLE4.items()
    ),
    *(
        PaperNumber("conflicts", f"Task 2: {metric}", model, f"strategy {strategy}", values[i], "%",
                    f"Table 5, row '{model}', {strategy}, {metric}",
                    ours=Ours("conflicts_table5", column, models="conflicts.models", where={"source": THIS_RUN, "strategy": strategy},
                              low=low, high=high, n=n),
                    instrument=JUDGE)
        for model, rows in PAPER_TABLE5.items()
        for strategy, values in zip(STRATEGIES, rows)
        for i, (metric, column, low, high, n) in enumerate(TABLE5_COLUMNS)
    ),
    *(
        PaperNumber("conflicts", "Task 2: expected behaviour", PAPER_TABLE6_MODEL, f"{category}, strategy {strategy}", value, "%",
                    f"Table 6, row '{category}', {strategy}",
                    ours=Ours("conflicts_table6", strategy, models="conflicts.models", where={"source": THIS_RUN, "category": category},
                              low=f"{strategy}_low", high=f"{strategy}_high", n=f"n_{strategy}"),
                    instrument=JUDGE)
        for category, values in PAPER_TABLE6.items()
        for strategy, value in zip(STRATEGIES, values)
    ),
    PaperNumber("conflicts", "expected-behaviour judge's accuracy against human judgments", None, "100 examples of the dataset", 0.89,
                "proportion", "§4 ('achieving an accuracy of 0.89')",
                caveat="the paper's human judgments are not released", note="this run's judge on a team-written gold set: results/tables/judge_gold.csv"),
)

# Result sentences (conflictlab.report.reproduction.Claim) and the numbers that are no row, with why.
CLAIMS: tuple = ()
EXCLUSIONS: tuple = ()

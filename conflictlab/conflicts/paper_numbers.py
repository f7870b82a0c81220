"""The CONFLICTS paper's numbers, result sentences and exclusions, for the reproduction report.

Every number of the text copy's results (Tables 2 and 4-7, §3-§5 sentences) is a row here or an
:class:`~conflictlab.report.reproduction.Exclusion` with its reason (docs/reproduction-rows.md). The
tables survive in the copy and are typed in once, in :mod:`conflictlab.conflicts.tables`
(``RELEASE_COUNTS`` = Table 2, ``PAPER_TABLE4/5/6/7``); the rows are built from them, each pointing at
this run's row of the same table. The claims are :mod:`conflictlab.conflicts.claims`. See
:mod:`conflictlab.report.reproduction` for how rows are compared.
"""

from __future__ import annotations

from conflictlab.conflicts.claims import CLAIMS, METRICS, ORACLE, VANILLA, table4_key, table5_key, table6_key
from conflictlab.conflicts.prompts import STRATEGIES, TAXONOMY
from conflictlab.conflicts.tables import (
    CATEGORY_GROUPS,
    PAPER_TABLE4,
    PAPER_TABLE5,
    PAPER_TABLE6,
    PAPER_TABLE6_MODEL,
    PAPER_TABLE7,
    RECALL_CATEGORIES,
    RELEASE_COUNTS,
    THIS_RUN,
)
from conflictlab.report.reproduction import COUNT, Derived, Exclusion, Instrument, Ours, Paper, PaperNumber

__all__ = ["CLAIMS", "EXCLUSIONS", "NUMBERS", "PAPER"]

PAPER = Paper(
    "conflicts",
    "DRAGged into Conflicts (the CONFLICTS benchmark)",
    "001_71e550573678e68d.txt",
    "Its Tables 2 and 4-7 survive in the text copy (typed in once, conflictlab.conflicts.tables). "
    "The paper's prompts are not "
    "published: this run's are its own (README, CONFLICTS). Task 2 is judged by Gemini 2.5 Flash in the paper (§5.2).",
)

# §5.2: "using Gemini 2.5 Flash (§4)" judges Table 5 (and Table 6); this run's CONFLICTS judge is
# conflicts.judge over judges (conflictlab.report.paper_models.instruments).
JUDGE = Instrument("conflicts judge", "Gemini 2.5 Flash")
N_RELEASE = sum(RELEASE_COUNTS.values())  # 458
N_RECALL = sum(RELEASE_COUNTS[c] for c in RECALL_CATEGORIES)  # 228
# Table 2's row names, by category.
TABLE2_ROWS = {
    "no_conflict": "No conflict",
    "complementary": "Complementary information",
    "conflicting_opinions": "Conflicting opinions",
    "outdated": "Outdated Information",
    "misinformation": "Misinformation",
}
# Table 5's columns: metric, this run's interval columns, the paper's n (grounding: a mean over the responses with
# factual sentences, whose number and SD the paper does not give).
TABLE5_COLUMNS = {
    "expected_behaviour": ("expected behaviour", "eb_low", "eb_high", N_RELEASE),
    "answer_recall": ("answer recall", "ar_low", "ar_high", N_RECALL),
    "grounding": ("factual grounding", "gr_low", "gr_high", None),
}
GROUNDING_NOTE = "a mean over responses with factual sentences (at most 458): the paper gives neither that n nor an SD"
# §5.2 Result 2's per-model oracle gains, as printed.
ORACLE_GAINS = {
    "Gemma 3 27B": (28.2, "+28.2 for Gemma"),
    "GPT-4o": (21.4, "+21.4 for GPT-4o"),
    "Gemini 2.5 Flash Thinking": (21.0, "+21.0 for Gemini 2.5 Flash with Thinking mode"),
}
EB = "expected_behaviour"


def _count(key: str, metric: str, value: int, source: str, table: str, ours, note: str | None = None) -> PaperNumber:
    return PaperNumber(
        "conflicts", metric, None, "the release", value, COUNT, source, ours=ours, note=note, table=table, key=key
    )


def _data(table: str, **where) -> Ours:
    """A count of this run's queries: column n of ``results/tables/conflicts_{table}.csv``."""
    return Ours(f"conflicts_{table}", "n", models=None, where=where, low=None, high=None, scale=1.0)


TABLE2 = (
    *(
        _count(
            f"table2:{label}",
            f"queries of category {label}",
            RELEASE_COUNTS[name],
            f"Table 2, row '{label}'",
            "Table 2",
            _data("table2", category=TAXONOMY[name].label),
            note="this run: the queries read",
        )
        for name, label in TABLE2_ROWS.items()
    ),
    _count(
        "table2:Total",
        "queries in the dataset",
        N_RELEASE,
        "Table 2, row 'Total' (also §1, §3: '458 instances')",
        "Table 2",
        _data("table2", category="Total"),
        note="this run: the queries read (conflicts.max_per_category samples them)",
    ),
    _count(
        "conflicting queries",
        "queries flagged as conflicting (every category but No conflict)",
        297,
        "§3 Statistics ('65% of the instances in Conflicts (297 of 458) were flagged as conflicting')",
        "§3 text",
        Derived("difference", ("table2:Total", "table2:No conflict"), paired=True),
    ),
    _count(
        "answer recall queries",
        "queries with a single correct answer (answer recall)",
        N_RECALL,
        "§4 ('which comprise 228 queries in Conflicts')",
        "§4 text",
        Ours(
            "conflicts_table5",
            "n_recall",
            models=None,
            where={"source": THIS_RUN},
            low=None,
            high=None,
            n="n_recall",
            scale=1.0,
        ),
        note="this run: Table 5's n_recall, the same in every (model, strategy) row unless a judge verdict "
        "was unreadable",
    ),
    PaperNumber(
        "conflicts",
        "search results per query (mean)",
        None,
        "the release",
        9.2,
        "results",
        "§3 Statistics ('There are an average of 9.2 search results for each query')",
        table="§3 text",
        key="search results per query",
        paper_n=N_RELEASE,
        caveat="no result table of this workflow reports the search results per query",
        note="../shared/references/conflicts.md: 5-20 per query, median 9, in independent loaders of the release",
    ),
)

TABLE7 = tuple(
    _count(
        f"table7:{name}",
        f"queries from {name}",
        count,
        f"Table 7, row '{name}'",
        "Table 7",
        _data("table7", source=name),
        note="this run: the queries read, matched by source name",
    )
    for name, count in PAPER_TABLE7.items()
)

TABLE4 = tuple(
    PaperNumber(
        "conflicts",
        "Task 1: conflict-type prediction accuracy",
        model,
        "every query",
        value,
        "%",
        f"Table 4, row '{model}' (§5.2)",
        ours=Ours("conflicts_table4", "accuracy", models="conflicts.models", where={"source": THIS_RUN}),
        paper_n=N_RELEASE,
        decimals=1,
        table="Table 4",
        key=table4_key(model),
    )
    for model, value in PAPER_TABLE4.items()
)

TABLE5 = tuple(
    PaperNumber(
        "conflicts",
        f"Task 2: {metric}",
        model,
        f"strategy {strategy}",
        values[i],
        "%",
        f"Table 5, row '{model}', {strategy}, {metric}",
        ours=Ours(
            "conflicts_table5",
            column,
            models="conflicts.models",
            where={"source": THIS_RUN, "strategy": strategy},
            low=low,
            high=high,
            n=METRICS[column],
            kind=None if paper_n else "mean",  # grounding: a mean share of grounded sentences per response
        ),
        instrument=JUDGE,
        note=None if paper_n else GROUNDING_NOTE,
        paper_n=paper_n,
        decimals=1,
        table="Table 5",
        key=table5_key(model, strategy, column),
    )
    for model, rows in PAPER_TABLE5.items()
    for strategy, values in zip(STRATEGIES, rows)
    for i, (column, (metric, low, high, paper_n)) in enumerate(TABLE5_COLUMNS.items())
)

TABLE6 = tuple(
    PaperNumber(
        "conflicts",
        "Task 2: expected behaviour",
        PAPER_TABLE6_MODEL,
        f"{group}, strategy {strategy}",
        value,
        "%",
        f"Table 6, row '{group}', {strategy}",
        ours=Ours(
            "conflicts_table6",
            strategy,
            models="conflicts.models",
            where={"source": THIS_RUN, "category": group},
            low=f"{strategy}_low",
            high=f"{strategy}_high",
            n=f"n_{strategy}",
        ),
        instrument=JUDGE,
        paper_n=sum(RELEASE_COUNTS[c] for c in CATEGORY_GROUPS[group]),
        decimals=1,
        table="Table 6",
        key=table6_key(group, strategy),
    )
    for group, values in PAPER_TABLE6.items()
    for strategy, value in zip(STRATEGIES, values)
)


def _mean_gain(strategy: str) -> float:
    """The mean over Table 5's six models of expected behaviour under ``strategy`` minus vanilla (%)."""
    gains = [rows[STRATEGIES.index(strategy)][0] - rows[0][0] for rows in PAPER_TABLE5.values()]
    return sum(gains) / len(gains)


MEAN_GAIN_CAVEAT = (
    "a mean over the six models' gains, which no one row of a run gives; claims oracle-every-model, "
    "pipeline-taxonomy-improve and pipeline-over-taxonomy check it"
)
SENTENCES = (
    *(
        PaperNumber(
            "conflicts",
            "Task 2: expected behaviour, oracle − vanilla",
            model,
            "oracle gain",
            gain,
            "points",
            f"§5.2 Result 2 ('{printed}')",
            ours=Derived("difference", (table5_key(model, ORACLE, EB), table5_key(model, VANILLA, EB)), paired=True),
            instrument=JUDGE,
            paper_n=N_RELEASE,
            decimals=1,
            table="§5.2 text",
            key=f"oracle gain:{model}",
        )
        for model, (gain, printed) in ORACLE_GAINS.items()
    ),
    *(
        PaperNumber(
            "conflicts",
            f"Task 2: expected behaviour, {strategy} − vanilla, mean over the six models",
            None,
            f"{strategy} gain",
            printed,
            "points",
            source,
            caveat=MEAN_GAIN_CAVEAT,
            note=note,
            instrument=JUDGE,
            paper_n=N_RELEASE,
            decimals=decimals,
            table="§5.2 text",
            key=f"mean gain:{strategy}",
        )
        for strategy, printed, decimals, source, note in (
            (
                "oracle",
                24,
                0,
                "§5.2 Result 2 ('it yields a 24-point gain over the Vanilla prompt')",
                f"Table 5's cells give {_mean_gain('oracle'):.1f}",
            ),
            (
                "pipeline",
                9,
                0,
                "§5.2 Result 3 ('they yield performance gains of 9 and 5.5 points')",
                f"Table 5's cells give {_mean_gain('pipeline'):.1f}",
            ),
            (
                "taxonomy_aware",
                5.5,
                1,
                "§5.2 Result 3 ('they yield performance gains of 9 and 5.5 points')",
                (
                    f"Table 5's own cells give {_mean_gain('taxonomy_aware'):.1f}, not 5.5: "
                    "the text disagrees with its table"
                ),
            ),
        )
    ),
    PaperNumber(
        "conflicts",
        "expected-behaviour judge's accuracy against human judgments",
        None,
        "100 examples of the dataset",
        0.89,
        "proportion",
        "§4 ('achieving an accuracy of 0.89')",
        caveat="human labels, unreleased",
        note="this run's judge on a team-written gold set: results/tables/judge_gold.csv",
        paper_n=100,
        decimals=2,
        table="§4 text",
        key="judge accuracy",
    ),
)

NUMBERS: tuple[PaperNumber, ...] = (*TABLE2, *TABLE7, *TABLE4, *TABLE5, *TABLE6, *SENTENCES)

REPEATS = "repeats a row (the same number in another place of the copy)"
SETUP = "a parameter of the data's construction, not a result: this run reads the released data as built"
EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        "conflicts",
        "458 queries",
        "§1 ('a total of 458 queries'), §3 ('contains 458 instances')",
        f"{REPEATS}: table2:Total",
    ),
    Exclusion(
        "conflicts",
        "5 Misinformation cases; 161 No conflict instances",
        "§3 Statistics",
        f"{REPEATS}: table2:Misinformation, table2:No conflict",
    ),
    Exclusion(
        "conflicts",
        "65% of the instances",
        "§3 Statistics ('65% of the instances in Conflicts (297 of 458)')",
        "the row 'conflicting queries' (297 of 458) as a rounded share: the same fact",
    ),
    Exclusion(
        "conflicts",
        "18 instances with No relevant sources",
        "§3 Statistics ('after filtering out 18 instances')",
        "the filtered instances are not in the release",
    ),
    Exclusion(
        "conflicts",
        "no instance annotated as 'Other'",
        "§3 Annotation Process",
        "human labels, unreleased: the release holds the final categories only (claim taxonomy-comprehensive)",
    ),
    Exclusion("conflicts", "top-10 search results per query", "§3 Queries and retrieved documents", SETUP),
    Exclusion(
        "conflicts", "512-token segments, 256-token stride (TAS-B)", "§3 Queries and retrieved documents; §5.1", SETUP
    ),
    Exclusion(
        "conflicts",
        "two annotators, a reconciliation and a third reviewer",
        "§1; §3 Annotation Process",
        "the annotation protocol, not a result; human labels, unreleased",
    ),
    Exclusion(
        "conflicts",
        "2-3 positive and negative examples per judge prompt",
        "§4 Evaluation",
        "a property of the paper's judge prompts, which are not published (README, CONFLICTS)",
    ),
    Exclusion(
        "conflicts",
        "Gemini 2.5 Flash's 65.3%",
        "§5.2 ('achieving the highest accuracy (65.3%)')",
        f"{REPEATS}: table4:Gemini 2.5 Flash; the ranking is claim task1-best",
    ),
    Exclusion(
        "conflicts",
        "vanilla scores 59.4 (Gemma 3 27B) to 68.3 (Gemini 2.5 Flash Thinking)",
        "§5.2 Result 1",
        f"{REPEATS}: Table 5's vanilla expected behaviour; the ranking is claim vanilla-range",
    ),
    Exclusion(
        "conflicts",
        "Conflicting opinions at 36.2% under Vanilla",
        "§5.3",
        f"{REPEATS}: table6:Conflicting opinions:vanilla; the ranking is claim opinions-hardest",
    ),
    Exclusion(
        "conflicts",
        "40 randomly sampled non-adherent outputs",
        "§5.3 Error Analysis",
        "human labels, unreleased: a manual analysis (claims error-*)",
    ),
    Exclusion(
        "conflicts",
        "Table 1's example passages (dates, 37 / 38 / 35 countries)",
        "Table 1",
        "examples of retrieved passages, not results",
    ),
    Exclusion(
        "conflicts",
        "Table 3's example responses (258, 279, 244 people; 403 spaceflights; 300 square miles; dates)",
        "Table 3",
        "examples of responses, not results",
    ),
)

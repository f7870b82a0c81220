"""The reproduction verdicts (conflictlab.report.verdicts and their use in
conflictlab.report.reproduction): the intervals checked against
statsmodels and scipy, the verdict rules, their error rates by simulation
(a small run of benchmarks/reproduction_calibration.py), derived rows,
claims, the plan, every registry row's coverage, and bad input."""

import importlib.util
import math
import sys

import numpy as np
import pytest
import yaml
from scipy import stats as sstats
from statsmodels.stats.proportion import confint_proportions_2indep

from conflictlab.paper_registries import REGISTRIES
from conflictlab.report import reproduction as R
from conflictlab.report import verdicts as V
from conflictlab.report.paper_models import paper_model_name
from conflictlab.report.reproduction import Claim, ClaimCheck, ClaimContext, Derived, Ours, PaperNumber

from .conftest import REPO

NUMBERS = [number for registry in REGISTRIES for number in registry.numbers]
CLAIMS = [claim for registry in REGISTRIES for claim in registry.claims]


def proportion(value, n):
    return V.Estimate(value, V.PROPORTION, n=n)


# --------------------------------------------------------------------------
# Intervals


@pytest.mark.parametrize(
    "x1, n1, x2, n2",
    [(30, 100, 45, 120), (0, 10, 3, 458), (10, 10, 200, 458), (5, 40, 114, 458), (1500, 3000, 1460, 3000)],
)
@pytest.mark.parametrize("confidence", [0.90, 0.95])
def test_one_term_is_newcombes_hybrid_score_interval(x1, n1, x2, n2, confidence):
    terms = [V.Term(1, proportion(100 * x1 / n1, n1), proportion(100 * x2 / n2, n2))]
    d, low, high = V.difference_interval(terms, confidence)
    expected = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - confidence)
    assert d == pytest.approx(100 * (x1 / n1 - x2 / n2))
    assert (low, high) == (pytest.approx(100 * expected[0], abs=1e-9), pytest.approx(100 * expected[1], abs=1e-9))


def test_a_mean_term_is_welchs_interval():
    rng = np.random.default_rng(1)
    a, b = rng.normal(50, 20, 40), rng.normal(45, 30, 90)

    def estimate(x):
        return V.Estimate(float(x.mean()), V.MEAN, n=len(x), se=float(x.std(ddof=1) / math.sqrt(len(x))), df=len(x) - 1)

    _, low, high = V.difference_interval([V.Term(1, estimate(a), estimate(b))], 0.95)
    expected = sstats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (low, high) == (pytest.approx(expected.low), pytest.approx(expected.high))


@pytest.mark.parametrize(
    "value, decimals, half",
    [
        (24.8, None, 0.05),
        (9.45, None, 0.005),
        (458, None, 0.5),
        (68.0, 1, 0.05),
        (0.5208, None, 0.00005),
        (0.89, None, 0.005),
    ],
)
def test_the_papers_rounding_is_half_its_last_printed_digit(value, decimals, half):
    assert V.rounding(value, decimals) == pytest.approx(half)


def test_rounding_widens_both_intervals_by_half_a_digit():
    terms = [V.Term(1, proportion(30.0, 4000), proportion(30.0, 4000))]
    plain, rounded = V.decide(terms, 3.0, 0.0), V.decide(terms, 3.0, 0.5)
    assert rounded.low == pytest.approx(plain.low - 0.5) and rounded.high90 == pytest.approx(plain.high90 + 0.5)


# --------------------------------------------------------------------------
# Verdict rules


def test_a_close_match_at_large_n_is_equivalent_and_a_far_one_differs():
    assert V.decide([V.Term(1, proportion(30.2, 20000), proportion(30.0, 20000))], 3.0, 0.05).verdict == V.EQUIVALENT
    far = V.decide([V.Term(1, proportion(40.0, 2000), proportion(30.0, 2000))], 3.0, 0.05)
    assert far.verdict == V.DIFFERS and far.low > 0 and "excludes 0" in far.why


def test_a_tiny_run_is_inconclusive_and_called_underpowered():
    verdict = V.decide([V.Term(1, proportion(25.0, 40), proportion(24.8, 3000))], 3.0, 0.05)
    assert verdict.verdict == V.INCONCLUSIVE and verdict.why.startswith("underpowered")
    assert not V.could_be_equivalent([V.Term(1, proportion(25.0, 40), proportion(24.8, 3000))], 3.0, 0.05)


def test_inconclusive_without_underpowered_where_a_perfect_match_could_have_been_equivalent():
    terms = [V.Term(1, proportion(32.5, 1800), proportion(30.0, 1800))]
    verdict = V.decide(terms, 3.0, 0.05)
    assert verdict.verdict == V.INCONCLUSIVE and "underpowered" not in verdict.why
    assert V.could_be_equivalent(terms, 3.0, 0.05)


def test_a_margin_of_zero_is_refused():
    with pytest.raises(ValueError, match="margin must be > 0"):
        V.decide([V.Term(1, proportion(30.0, 100), proportion(30.0, 100))], 0.0, 0.05)


def test_counts_are_equal_or_differ():
    assert V.compare_counts(458, 458).verdict == V.EQUAL
    assert V.compare_counts(5, 458).verdict == V.DIFFERS


def test_the_analytic_power_is_near_the_simulated_one():
    # proportion at 10%, paper n 3,000, our n 3,000: simulated 96.8 ± 0.3% (benchmarks/reproduction_calibration.py)
    terms = [V.Term(1, proportion(10.0, 3000), proportion(10.0, 3000))]
    assert V.power_equivalent(terms, 3.0, 0.05) == pytest.approx(0.968, abs=0.04)
    assert V.power_equivalent([V.Term(1, proportion(50.0, 114), proportion(50.0, 458))], 3.0, 0.05) == 0.0


def _calibration():
    spec = importlib.util.spec_from_file_location(
        "reproduction_calibration", REPO / "benchmarks" / "reproduction_calibration.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_error_rates_are_at_most_five_percent_within_monte_carlo_error():
    """A small run of benchmarks/reproduction_calibration.py: every row kind at ¼×, 1× and 4× the paper's n."""
    calibration = _calibration()
    cases = [c for c in calibration.CASES if c.kind != "proportion" or c.paper_n == 458]
    rows = calibration.table(cases=cases, reps=250, seed=3)
    assert {r["our_n"] for r in rows} >= {114, 458, 1832}
    for r in rows:
        assert r["false differs"] <= 0.05 + 3 * r["false differs se"], r
        assert r["false equivalent"] <= 0.05 + 3 * r["false equivalent se"], r


def test_a_faithful_rerun_at_a_large_n_is_mostly_equivalent():
    calibration = _calibration()
    rates = calibration.rates(calibration.Case("proportion", (10.0,), 3000), 4.0, reps=200, seed=0)
    assert rates["power"] > 0.9


# --------------------------------------------------------------------------
# Rows of the report

LLAMA = "llama-3.1-8b-instruct"
SOURCES = {LLAMA: "hf:meta-llama/Llama-3.1-8B-Instruct"}
ACCURACY = [
    {
        "model": LLAMA,
        "conflict_type": "inferential",
        "level": "type",
        "n": 40,
        "accuracy": 0.25,
        "ci_low": 0.14,
        "ci_high": 0.40,
    },
    {
        "model": LLAMA,
        "conflict_type": "temporal",
        "level": "type",
        "n": 3000,
        "accuracy": 0.60,
        "ci_low": 0.58,
        "ci_high": 0.62,
    },
    {
        "model": LLAMA,
        "conflict_type": "misinformation",
        "level": "type",
        "n": 3000,
        "accuracy": 0.40,
        "ci_low": 0.38,
        "ci_high": 0.42,
    },
]


def acc(value, conflict_type="inferential", key=None, **fields):
    return PaperNumber(
        "p",
        "accuracy",
        "Llama-3.1-8B-Instruct",
        conflict_type,
        value,
        "%",
        "§3.3",
        key=key,
        ours=Ours("accuracy", "accuracy", where={"level": "type", "conflict_type": conflict_type}),
        **fields,
    )


def compare_all(numbers, tables=None, margins=R.DEFAULT_MARGINS):
    return R.compare_all(
        numbers,
        tables={"accuracy": ACCURACY} if tables is None else tables,
        model_lists={"generators": [LLAMA]},
        sources=SOURCES,
        instruments={},
        margins=margins,
    )


def test_a_row_with_the_papers_n_gets_the_newcombe_difference_and_its_verdict():
    row = compare_all([acc(60.1, "temporal", paper_n=3000)])[0]
    assert row["verdict"] == R.EQUIVALENT and (row["our_n"], row["paper_n"], row["margin"]) == (3000, 3000, 3.0)
    expected = confint_proportions_2indep(1800, 3000, 0.601 * 3000, 3000, method="newcomb", compare="diff")
    assert row["difference"] == pytest.approx(-0.1)
    assert row["difference_low"] == pytest.approx(100 * expected[0] - 0.05)
    assert row["difference_high"] == pytest.approx(100 * expected[1] + 0.05)


def test_without_the_papers_n_the_row_says_its_sampling_error_could_not_be_formed():
    row = compare_all([acc(24.8)])[0]
    assert row["verdict"] == R.INCONCLUSIVE and "sampling error could not be formed" in row["why"]
    assert "underpowered" in row["why"]


def test_a_mean_without_the_papers_sd_borrows_ours_at_the_papers_n():
    faithfulness = [{"model": LLAMA, "n_scored": 400, "faithfulness": 0.9, "ci_low": 0.88, "ci_high": 0.92}]
    number = PaperNumber(
        "p",
        "Faithfulness",
        "Llama-3.1-8B-Instruct",
        "all",
        89.5,
        "%",
        "§3.3",
        paper_n=100,
        ours=Ours("faithfulness", "faithfulness", n="n_scored"),
    )
    row = compare_all([number], {"faithfulness": faithfulness})[0]
    assert row["kind"] == V.MEAN and "formed from this run's SD at the paper's n (100)" in row["why"]
    se_ours = 2.0 / 1.959963984540054
    half = sstats.t.ppf(0.975, 399) * math.sqrt(se_ours**2 * (1 + 400 / 100))
    assert row["difference_high"] - row["difference_low"] == pytest.approx(2 * half + 2 * 0.05, rel=1e-3)


def test_a_derived_row_is_the_difference_of_two_rows_with_its_own_interval():
    temporal = acc(60.0, "temporal", key="temporal", paper_n=3000, decimals=1)
    misinfo = acc(40.0, "misinformation", key="misinformation", paper_n=3000, decimals=1)
    gain = PaperNumber(
        "p",
        "gain",
        "Llama-3.1-8B-Instruct",
        "temporal − misinformation",
        20.0,
        "points",
        "§5",
        decimals=1,
        ours=Derived("difference", ("temporal", "misinformation"), paired=True),
        key="gain",
    )
    rows = compare_all([temporal, misinfo, gain])
    row = rows[2]
    assert row["ours"] == pytest.approx(20.0) and row["difference"] == pytest.approx(0.0)
    assert "paired difference computed unpaired" in row["why"]
    # MOVER over four Wilson intervals: wider than either row's own difference interval
    assert row["difference_high"] - row["difference_low"] > rows[0]["difference_high"] - rows[0]["difference_low"]
    assert row["verdict"] in (R.EQUIVALENT, R.INCONCLUSIVE)


def test_a_derived_row_of_a_row_that_cannot_be_compared_says_which():
    gain = PaperNumber(
        "p",
        "gain",
        "Llama-3.1-8B-Instruct",
        "x",
        19.2,
        "points",
        "§5",
        ours=Derived("difference", ("temporal", "nowhere")),
    )
    row = compare_all([acc(60.0, "temporal", key="temporal"), gain])[1]
    assert row["verdict"] == R.NOT_COMPARABLE and "row nowhere is not in the report" in row["why"]


def test_a_derived_row_uses_our_estimate_of_a_row_whose_paper_value_the_copy_lost():
    # §5's "+19.2 points" is stated, the two Table 4 cells it is the difference of are lost in the copy
    temporal = acc(None, "temporal", key="temporal", paper_n=3000)
    misinfo = acc(None, "misinformation", key="misinformation", paper_n=3000)
    gain = PaperNumber(
        "p",
        "gain",
        "Llama-3.1-8B-Instruct",
        "x",
        19.2,
        "points",
        "§5",
        paper_n=3000,
        ours=Derived("difference", ("temporal", "misinformation"), paired=True),
        key="gain",
    )
    arms_and_gain = compare_all([temporal, misinfo, gain])
    assert [r["verdict"] for r in arms_and_gain[:2]] == [R.NOT_COMPARABLE] * 2
    assert all(r["why"] == R.NO_NUMBER and r["ours"] is not None for r in arms_and_gain[:2])
    row = arms_and_gain[2]
    assert row["verdict"] != R.NOT_COMPARABLE and row["ours"] == pytest.approx(20.0)
    assert row["difference"] == pytest.approx(0.8) and row["difference_low"] < 0.8 < row["difference_high"]


def test_a_derived_difference_of_two_counts_is_a_count():
    total = PaperNumber(
        "p",
        "samples",
        None,
        "all",
        3000 + 3000 + 40,
        "count",
        "§2",
        key="total",
        ours=Ours("accuracy", "n", models=None, where={"level": "type"}, low=None, high=None, scale=1.0, total=True),
    )
    temporal = PaperNumber(
        "p",
        "samples",
        None,
        "temporal",
        3000,
        "count",
        "§2",
        key="temporal",
        ours=Ours("accuracy", "n", models=None, where={"conflict_type": "temporal"}, low=None, high=None, scale=1.0),
    )
    for printed, verdict in ((3040, R.EQUAL), (3041, R.DIFFERS)):
        rest = PaperNumber(
            "p",
            "samples",
            None,
            "all but temporal",
            printed,
            "count",
            "§2",
            key="rest",
            ours=Derived("difference", ("total", "temporal")),
        )
        row = compare_all([total, temporal, rest])[2]
        assert (row["ours"], row["verdict"]) == (3040, verdict), row["why"]


def test_a_missing_table_or_column_is_not_comparable_and_named_never_an_error():
    assert "results/tables/accuracy.csv is not made in this run" in compare_all([acc(24.8)], {})[0]["why"]
    lacking = [{k: v for k, v in r.items() if k != "ci_high"} for r in ACCURACY]
    row = compare_all([acc(24.8)], {"accuracy": lacking})[0]
    assert row["verdict"] == R.NOT_COMPARABLE and "column ci_high is not in results/tables/accuracy.csv" in row["why"]
    no_value = [{k: v for k, v in r.items() if k != "accuracy"} for r in ACCURACY]
    assert "column accuracy is not in" in compare_all([acc(24.8)], {"accuracy": no_value})[0]["why"]


def test_a_unit_without_a_margin_is_not_comparable():
    row = compare_all([acc(24.8)], margins={"κ": 0.05})[0]
    assert row["verdict"] == R.NOT_COMPARABLE and "no equivalence margin for the unit '%'" in row["why"]


# --------------------------------------------------------------------------
# Claims


def test_claims_hold_fail_or_are_not_comparable_with_the_reason():
    def higher(ctx):
        a, b = ctx.row("p", "temporal")["ours"], ctx.row("p", "misinformation")["ours"]
        return ClaimCheck(R.HOLDS if a > b else R.FAILS, {"temporal": a, "misinformation": b}, "temporal is not higher")

    def reads_a_table(ctx):
        return ClaimCheck(R.HOLDS, {"rows": len(ctx.tables["probes"])})

    claims = [
        Claim("p", "c1", "Temporal is easier.", "§3.3", check=higher),
        Claim("p", "c2", "Probes work.", "§4", check=reads_a_table),
        Claim("p", "c3", "Humans agree.", "§3.2", exclusion="human labels, unreleased"),
    ]
    rows = compare_all([acc(60.0, "temporal", key="temporal"), acc(40.0, "misinformation", key="misinformation")])
    context = ClaimContext(
        tables={"accuracy": ACCURACY}, rows={(r["paper"], r["key"]): r for r in rows}, model_lists={}, sources={}
    )
    out = R.evaluate_claims(claims, context)
    assert [c["status"] for c in out] == [R.HOLDS, R.NOT_COMPARABLE, R.NOT_COMPARABLE]
    assert out[0]["numbers"] == "temporal = 60; misinformation = 40" and out[0]["why"] == ""
    assert out[1]["why"] == "missing in this run's results: probes" and out[2]["why"] == "human labels, unreleased"


def test_claims_read_their_own_papers_row_where_two_papers_use_one_key():
    # keys are unique within a paper only: the claims' context is keyed by paper and key, so neither shadows the other
    ours = [acc(60.0, "temporal", key="t"), PaperNumber("q", **{**_fields(acc(40.0, "misinformation")), "key": "t"})]
    rows = compare_all(ours)
    context = ClaimContext(tables={}, rows={(r["paper"], r["key"]): r for r in rows}, model_lists={}, sources={})
    assert len(context.rows) == 2
    assert (context.row("p", "t")["ours"], context.row("q", "t")["ours"]) == (pytest.approx(60.0), pytest.approx(40.0))
    claim = Claim(
        "q", "c", "Q's t is 40.", "§1", check=lambda ctx: ClaimCheck(R.HOLDS, {"t": ctx.row("q", "t")["ours"]})
    )
    (out,) = R.evaluate_claims([claim], context)
    assert out["numbers"] == "t = 40"
    (missing,) = R.evaluate_claims([Claim("r", "c", "R.", "§1", check=lambda ctx: ctx.row("r", "t"))], context)
    assert missing["status"] == R.NOT_COMPARABLE and "('r', 't')" in missing["why"]


def _fields(number: PaperNumber) -> dict:
    """A PaperNumber's fields but its paper, to build the same row for another paper."""
    from dataclasses import asdict

    return {k: getattr(number, k) for k in asdict(number) if k != "paper"}


# --------------------------------------------------------------------------
# Every registry row and claim has a check or a reason


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: f"{n.paper}:{n.id}"[:90])
def test_every_row_has_ours_or_a_reason_and_is_never_an_error(number):
    assert number.ours is not None or number.caveat or number.value is None, "a row needs ours, a caveat, or no value"
    assert number.paper_n is None or number.paper_n >= 1
    row = R.compare_all([number], tables={}, model_lists={}, sources={}, instruments={})[0]
    assert row["verdict"] == R.NOT_COMPARABLE and row["why"]


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.paper.key)
def test_every_claim_has_a_check_or_an_exclusion_and_keys_are_unique(registry):
    for claim in registry.claims:
        assert claim.check is not None or claim.exclusion, claim.key
        assert claim.quote and claim.section
    keys = [n.id for n in registry.numbers]
    assert len(keys) == len(set(keys)), "PaperNumber.id must be unique within a paper"
    for exclusion in registry.exclusions:
        assert exclusion.reason and exclusion.what and exclusion.source


# --------------------------------------------------------------------------
# The plan


def test_the_plan_says_what_a_config_can_compare_and_the_power():
    numbers = [
        acc(60.0, "temporal", key="t", paper_n=3000),
        acc(24.8, "inferential", key="i", paper_n=40),
        PaperNumber(
            "p", "agreement", None, "x", 0.52, "κ", "§3.2", caveat="the paper's human annotations are not released"
        ),
        PaperNumber("p", "accuracy", "Qwen3-8B", "x", 50.0, "%", "§4", ours=Ours("arbitration_accuracy", "accuracy")),
    ]
    claims = [
        Claim("p", "c", "T beats I.", "§3", check=lambda ctx: ClaimCheck(R.HOLDS), reads=("t", "i")),
        Claim("p", "d", "Q.", "§4", check=lambda ctx: ClaimCheck(R.HOLDS)),
    ]
    rows = R.plan(
        numbers,
        claims,
        tables_made=["accuracy"],
        model_lists={"generators": [LLAMA]},
        sources=SOURCES,
        instruments={},
        caps={"accuracy": ("data.max_per_subset", None)},
    )
    t, i, kappa, qwen, c, d = rows
    assert (
        t["comparable"]
        and t["our_n"] == "all"
        and t["power"]
        == pytest.approx(V.power_equivalent([V.Term(1, proportion(60.0, 3000), proportion(60.0, 3000))], 3.0, 0.05))
    )
    assert i["comparable"] and i["power"] == 0.0
    assert not kappa["comparable"] and R.for_unreleased_human_labels(kappa["why_not"])
    assert not qwen["comparable"] and "model absent: Qwen3-8B is not in generators" in qwen["why_not"]
    assert c["comparable"] is True and d["comparable"] is None
    capped = R.plan(
        numbers[:1],
        [],
        tables_made=["accuracy"],
        model_lists={"generators": [LLAMA]},
        sources=SOURCES,
        instruments={},
        caps={"accuracy": ("data.max_per_subset", 2)},
    )[0]
    assert capped["our_n"] == "≤ 2 per group (data.max_per_subset)" and capped["power"] is None
    missing = R.plan(
        numbers[:1], [], tables_made=[], model_lists={"generators": [LLAMA]}, sources=SOURCES, instruments={}
    )[0]
    assert "results/tables/accuracy.csv is not made by this config" in missing["why_not"]
    summary = R.plan_summary(rows)
    assert summary[-1].startswith("all papers: comparable share: 2 of 3 rows (67%)")  # the human-label row left out
    assert kappa["counted"].startswith("no: ") and t["counted"] == "yes"


def test_the_plan_counts_a_derived_row_of_lost_cells_and_not_the_cells():
    # the +19.2 of two Table 4 cells the copy lost: the gain is comparable, the cells are no paper number to count
    cells = [acc(None, t, key=t, paper_n=3000) for t in ("temporal", "misinformation")]
    gain = PaperNumber(
        "p",
        "gain",
        None,
        "x",
        19.2,
        "points",
        "§5",
        paper_n=3000,
        key="g",
        ours=Derived("difference", ("temporal", "misinformation")),
    )
    context = dict(tables_made=["accuracy"], model_lists={"generators": [LLAMA]}, sources=SOURCES, instruments={})
    *lost, row = R.plan([*cells, gain], [], **context)
    assert row["comparable"] and row["counted"] == "yes" and row["power"] is None
    assert all(not c["comparable"] and c["counted"] == "no: " + R.NO_NUMBER for c in lost)
    assert R.plan_shares([*lost, row]) == {"rows": (1, 1), "claims": (0, 0)}
    # an arm that cannot be compared for another reason still makes the derived row not comparable
    *_, absent = R.plan([*cells, gain], [], **{**context, "model_lists": {"generators": []}})
    assert not absent["comparable"] and absent["why_not"].startswith("from temporal: ")
    assert "model absent: Llama-3.1-8B-Instruct" in absent["why_not"]


def test_the_plan_says_whether_a_config_gives_a_claim_the_tables_models_and_scorers_it_reads():
    sources = {**SOURCES, "gpt-oss-20b": "hf:openai/gpt-oss-20b", "llama-3.2-1b": "hf:meta-llama/Llama-3.2-1B"}
    claims = [
        Claim("p", "probes", "P.", "§4", check=print, reads=(R.Reads("probes_{model}", ("GPT-OSS-20B",), "mech"),)),
        Claim("p", "two", "T.", "§3", check=print, reads=(R.Reads("acc", (LLAMA, "GPT-OSS-20B"), at_least=None),)),
        Claim("p", "one", "O.", "§3", check=print, reads=(R.Reads("acc", (LLAMA, "GPT-OSS-20B")),)),
        Claim("p", "scored", "S.", "§3", check=print, reads=(R.Reads("balance", scorers=("Llama-3.2-1B",)),)),
    ]

    def planned(tables, lists, scorers=()):
        out = R.plan(
            [], claims, tables_made=tables, model_lists=lists, sources=sources, instruments={"scorer": list(scorers)}
        )
        return {r["key"]: (r["comparable"], r["why_not"]) for r in out}

    everything = planned(
        ["probes_gpt-oss-20b", "acc", "balance"],
        {"mech": ["gpt-oss-20b"], "generators": [LLAMA, "gpt-oss-20b"]},
        ["llama-3.2-1b"],
    )
    assert everything == {key: (True, "") for key in ("probes", "two", "one", "scored")}
    lacking = planned(["probes_llama"], {"mech": ["gpt-oss-20b"], "generators": [LLAMA]})
    assert lacking["probes"] == (False, "results/tables/probes_gpt-oss-20b.csv is not made by this config")
    assert not lacking["two"][0] and "model absent: 1 of the paper's" in lacking["two"][1]
    assert "the claim needs 2" in lacking["two"][1] and "results/tables/acc.csv is not made" in lacking["two"][1]
    assert lacking["one"] == (False, "results/tables/acc.csv is not made by this config")
    assert lacking["scored"][0] is False and "scorer absent: Llama-3.2-1B is not in scorers" in lacking["scored"][1]


def _claim_fixture(paper: str):
    """Tables on which every check of ``paper`` holds, with the model lists, sources and scorers they are of
    (tests/test_paper_rows_*.py build them)."""
    if paper == "contextconflict":
        from .test_paper_rows_contextconflict import CC_LISTS, SCORERS, contextconflict_tables

        return contextconflict_tables(), CC_LISTS, {}, SCORERS
    from .test_paper_rows_conflicts import ARBITRATION_MODELS, arbitration_tables

    models = ARBITRATION_MODELS.values()
    return arbitration_tables(), {"arbitration.models": [m for m, _ in models]}, dict(models), []


# ConflictBank's and CONFLICTS' claims are their registries' (branch rows49 lists what they read).
READS_LISTED = ("contextconflict", "arbitration")


@pytest.mark.parametrize(
    "claim", [c for c in CLAIMS if c.check and c.paper in READS_LISTED], ids=lambda c: f"{c.paper}:{c.key}"
)
def test_a_claims_reads_name_every_table_its_check_reads_and_the_plan_finds_them(claim):
    tables, lists, sources, scorers = _claim_fixture(claim.paper)
    (planned,) = R.plan(
        [], [claim], tables_made=list(tables), model_lists=lists, sources=sources, instruments={"scorer": scorers}
    )
    assert planned["comparable"] is True, planned["why_not"]
    named = set()
    for reads in claim.reads:
        found = [
            m for name in reads.models for m in lists[reads.model_list] if paper_model_name(m, sources.get(m), [name])
        ]
        named |= {reads.table.format(model=m) for m in found} if "{model}" in reads.table else {reads.table}
    # the check still holds on the tables its reads name alone: it reads no other
    only = ClaimContext(
        tables={k: v for k, v in tables.items() if k in named}, rows={}, model_lists=lists, sources=sources
    )
    result = claim.check(only)
    assert result.status == R.HOLDS, result.why


# --------------------------------------------------------------------------
# Config: margins


def _config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_the_default_margins_are_config_s():
    assert _config()["reproduction"]["margins"] == R.DEFAULT_MARGINS


@pytest.mark.parametrize("bad", [0, -0.5])
def test_a_margin_not_above_zero_is_refused_naming_the_key(bad):
    from snakemake.utils import validate

    from conflictlab.benchmarks import REGISTRY

    # as the Snakefile: the main schema without the sections a benchmark's own schema fragment validates
    cfg = {key: value for key, value in _config().items() if key not in {b.config_section for b in REGISTRY}}
    cfg["reproduction"]["margins"]["κ"] = bad
    with pytest.raises(Exception, match=r"(?s)exclusiveMinimum.*\['reproduction'\]\['margins'\]\['κ'\]"):
        validate(cfg, str(REPO / "schemas" / "config.schema.yaml"))


# --------------------------------------------------------------------------
# Outputs: the CSV, and the same verdicts on the model profile pages


def test_the_csv_round_trips_and_the_profile_page_shows_the_models_verdicts(tmp_path):
    from conflictlab.report import profile

    rows = compare_all([acc(60.1, "temporal", paper_n=3000), acc(24.8)])
    path = tmp_path / "reproduction.csv"
    path.write_text(R.csv_text(rows, R.CSV_COLUMNS), encoding="utf-8")
    read = profile.read_csv_rows(path)
    assert [r["verdict"] for r in read] == [R.EQUIVALENT, R.INCONCLUSIVE]
    assert set(R.CSV_COLUMNS) >= {
        "verdict",
        "difference",
        "difference_low",
        "difference_high",
        "paper_n",
        "our_n",
        "margin",
        "why",
    }
    page = profile.render_page(LLAMA, {"contextconflict": [LLAMA]}, [], verdicts=read)
    assert "<h2>Reproduction verdicts</h2>" in page and '<td class="equivalent">equivalent</td>' in page
    assert "1 of 2 rows equivalent" in page and "underpowered" in page
    other = profile.render_page(
        LLAMA, {"contextconflict": [LLAMA]}, [], verdicts=[dict(r, our_model="x") for r in read]
    )
    assert "No paper row is of llama-3.1-8b-instruct in this run" in other

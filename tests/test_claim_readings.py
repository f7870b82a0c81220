"""Claim checks read as their sentences say (issue 58, point 3), each run on the paper's own numbers where the text
prints them: the cells a sentence's numbers fill are the paper's; any other cell a check needs is a value chosen
here and said so, to show which way the sentence's reading turns the verdict."""

import pytest

from conflictlab.arbitration import claims as ac
from conflictlab.conflictbank import claims as cbc
from conflictlab.contextconflict import claims as ccc
from conflictlab.report import reproduction as R
from conflictlab.report.reproduction import ClaimContext

from .test_paper_rows_conflicts import ARBITRATION_MODELS, arbitration_tables, context, tweaked

NOT_COMPARABLE = R.CLAIM_STATUSES[2]


def _ctx(tables, lists):
    return ClaimContext(tables=tables, rows={}, model_lists=lists, sources={})


# --------------------------------------------------------------------------
# ContextConflict §3.3: "Balance is also not monotonic in capacity (GPT-OSS-120B 31.9 vs. 20B 39.8)"

PAPER_BALANCE = {"gpt-oss-20b": 39.8, "gpt-oss-120b": 31.9}  # §3.3, %


def _balance(values: dict[str, float]):
    rows = [
        {"model": m, "scorer": "llama-3.2-1b", "conflict_type": t, "group": "all", "n": 40, "balance": v / 100}
        for m, v in values.items()
        for t in ccc.SUMMARIZATION
    ]
    return _ctx({"balance": rows}, {"generators": list(values)})


def test_the_papers_balance_pair_alone_cannot_show_non_monotonicity():
    """Before: 31.9 < 39.8 made the check hold. Two sizes are always monotonic: not comparable, naming the need."""
    result = ccc.balance_not_monotonic(_balance(PAPER_BALANCE))
    assert result.status == NOT_COMPARABLE and "needs 3" in result.why, result


@pytest.mark.parametrize(
    "llama, status",
    [
        ({"llama-3.1-8b-instruct": 60.0, "llama-3.1-70b-instruct": 45.0}, R.HOLDS),  # falls, rises at 70B, falls
        ({"llama-3.1-8b-instruct": 60.0, "llama-3.1-70b-instruct": 35.0}, R.FAILS),  # falls at every size step
    ],
)
def test_balance_is_non_monotonic_only_where_it_both_rises_and_falls_over_the_sizes(llama, status):
    """The paper's pair, with the two Llama sizes (chosen here: their Table 4 cells are lost) between and below."""
    result = ccc.balance_not_monotonic(_balance({**PAPER_BALANCE, **llama}))
    assert result.status == status, result
    assert result.numbers["gpt-oss-120b mean Balance (paper 31.9)"] == 31.9


# --------------------------------------------------------------------------
# ContextConflict §5: u(l) against CAS, read as either schedule

L8, G20 = "llama-3.1-8b-instruct", "gpt-oss-20b"


def _table4(first_generated_temporal: float, first_generated_wins: bool = True):
    """Table 4 with the paper's pair on GPT-OSS-20B temporal (CAS 65.5, u(l) 64.1, read as All-Tokens, the reading
    the rows take) and First-Generated there as given; every other u(l) cell beats CAS by 5 points under
    All-Tokens, and under First-Generated as ``first_generated_wins`` says (values chosen here)."""
    rows = []
    for m in (L8, G20):
        for t in ccc.REASONING:
            cas, ours = 50.0, 55.0
            fg = 55.0 if first_generated_wins else 45.0
            if (m, t) == (G20, "temporal"):
                cas, ours, fg = 65.5, 64.1, first_generated_temporal
            for variant, v in (("cas-a1", cas), ("all_tokens-a1", ours), ("first_generated-a1", fg)):
                rows.append(
                    {
                        "model": m,
                        "variant": variant,
                        "metric": "accuracy",
                        "conflict_type": t,
                        "value": v / 100,
                        "n": 50,
                    }
                )
    return _ctx({"table4": rows}, {"steering.models": [L8, G20]})


def test_the_cas_exception_on_the_papers_pair_holds_only_where_both_schedules_agree():
    """Before: CAS 65.5 > All-Tokens 64.1 held, All-Tokens taken for u(l). After: holds where First-Generated is
    below CAS too, and is not comparable where it is above (the paper names neither schedule)."""
    assert ccc.cas_exception(_table4(60.0)).status == R.HOLDS
    parted = ccc.cas_exception(_table4(70.0))
    assert parted.status == NOT_COMPARABLE and "All-Tokens only" in parted.why, parted
    assert parted.numbers["GPT-OSS-20B temporal, CAS (paper 65.5)"] == 65.5
    assert ccc.wins_five_of_six(_table4(60.0)).status == R.HOLDS


def test_five_of_six_wins_are_counted_under_each_schedule():
    parted = ccc.wins_five_of_six(_table4(60.0, first_generated_wins=False))
    assert parted.status == NOT_COMPARABLE and "All-Tokens only" in parted.why, parted
    assert parted.numbers["wins, u(l) read as All-Tokens"] == 5
    assert parted.numbers["wins, u(l) read as First-Generated"] == 0


# --------------------------------------------------------------------------
# ConflictBank §3.2, the summary's Figures 3 and 5

FIGURE3_LLAMA2_70B = {"misinformation": 9.45, "temporal": 7.77, "semantic": 3.73}  # "with two pieces of evidence"
FIGURE5 = {"LLaMA2-7B": 56.44, "LLaMA2-70B": 38.97}  # "with conflicting memory later in the sequence"


def _mr(values: dict[str, dict[str, float]]):
    rows = [
        {"model": m.lower(), "setting": s, "mr": v / 100, "n_mr": 50}
        for m, cells in values.items()
        for s, v in cells.items()
    ]
    return _ctx({"conflictbank_mr": rows}, {"conflictbank.models": [m.lower() for m in values]})


def test_mr_falls_with_size_in_the_setting_of_the_papers_own_numbers():
    """Before: the check read the conflicting evidence alone, where the summary has no LLaMA2-7B number (not
    comparable on the paper's numbers). After: Figure 5's setting, where 56.44 > 38.97 holds."""
    tables = _mr({m: {cbc.FIGURE5_SETTING: v} for m, v in FIGURE5.items()})
    result = cbc.falls_with_size_in_llama2(tables)
    assert result.status == R.HOLDS, result
    assert result.numbers[f"LLaMA2-70B: MR, {cbc.FIGURE5_SETTING} (paper 38.97)"] == 38.97
    swapped = _mr({m: {cbc.FIGURE5_SETTING: FIGURE5[other]} for m, other in zip(FIGURE5, reversed(FIGURE5))})
    assert cbc.falls_with_size_in_llama2(swapped).status == R.FAILS


@pytest.mark.parametrize("conflict_first, status", [(75.0, R.HOLDS), (55.0, R.FAILS)])
def test_the_mixed_evidence_reading_no_longer_contradicts_figure_5(conflict_first, status):
    """LLaMA2-70B with the summary's numbers: alone 9.45 / 7.77 / 3.73 (Figure 3, below 50 as §3.2 says) and 38.97
    with the conflict later (Figure 5). Before, the check read mixed evidence in that order alone and failed on the
    paper's own 38.97. After, mixed is the mean over both orders; the conflict-first order and the other kinds'
    mixed cells are not in the summary (chosen here): 75 lifts the mean above 50, 55 does not."""
    cells = dict(FIGURE3_LLAMA2_70B)
    cells |= {f"correct_{k}": 60.0 for k in cbc.KINDS} | {f"correct_{k}_reversed": 60.0 for k in cbc.KINDS}
    cells |= {cbc.FIGURE5_SETTING: FIGURE5["LLaMA2-70B"], f"{cbc.FIGURE5_SETTING}_reversed": conflict_first}
    result = cbc.below_and_above_half(_mr({"LLaMA2-70B": cells}))
    assert result.status == status, result


# --------------------------------------------------------------------------
# Arbitration §4.1: "Llama and Mistral models show comparatively stronger reliance on textual evidence"


@pytest.mark.parametrize(
    "llama_text, status",
    [
        (0.55, R.HOLDS),  # +0.25: Llama prefers numbers, less than every Qwen3 model: holds
        (0.05, R.FAILS),  # +0.75: above Qwen3-8B's +0.4: fails
    ],
)
def test_text_reliance_is_read_against_qwen3_not_as_a_negative_preference(llama_text, status):
    """The paper prints no number here (Figure 4's bars). Llama's numbers-aligned accuracy set to 0.8 and its
    text-aligned one as given: 0.8 - 0.55 = +0.25, a preference for numbers, yet below every Qwen3 model's (at
    least +0.4: test_paper_rows_conflicts.MODALITY) holds the comparison the sentence states; before, a positive
    preference failed it."""
    cells = {
        (ac.LLAMA, "modality", None, "numbers", "conflict"): 0.8,
        (ac.LLAMA, "modality", None, "text", "conflict"): llama_text,
    }
    ctx = context(arbitration_tables(tweaked(cells=cells)), model_list=ac.MODELS, registry=ARBITRATION_MODELS)
    result = ac.modality_preferences(ctx)
    assert result.status == status, result
    assert result.numbers[f"{ac.LLAMA}: numbers - text"] > 0


def test_the_figure_5_rows_read_the_setting_the_size_claim_reads():
    """Row and claim read one setting, the one the sentence's numbers come from; the rows say their reading."""
    from conflictlab.paper_registries import BY_BENCHMARK

    record = BY_BENCHMARK["conflictbank"]
    figure5 = [n for n in record.numbers if n.table == "Figure 5"]
    assert {n.value for n in figure5} == set(FIGURE5.values())
    assert all(n.ours.where["setting"] == cbc.FIGURE5_SETTING and "FIGURE5_SETTING" in n.note for n in figure5)
    uncertain = [n.key for n in record.numbers if (n.note or "").startswith("uncertain reading")]
    assert len(uncertain) == 6  # Figure 3's three rows, Figure 8's two, the OAR drop


# --------------------------------------------------------------------------
# NQ-Swap, the AdaCAD abstract: an average gain over six QA datasets, not a per-model NQ-Swap statement


def _nq_swap(values: dict[tuple[str, str], float]):
    rows = [
        {"model": m, "method": run, "metric": "EM sub", "benchmark": "NQ-Swap", "value": str(v), "n": "50"}
        for (m, run), v in values.items()
    ]
    return _ctx({"nq_swap": rows}, {"nq_swap.models": sorted({m for m, _ in values})})


def test_adacad_outperforms_is_read_on_the_models_average_not_per_model():
    """The AdaCAD paper's NQ-Swap cells were not reachable (values chosen here). Model b has AdaCAD below CAD, the
    average over the two models has it above: before, the per-model check failed; now it holds, and fails where the
    average turns."""
    from conflictlab.nq_swap import claims as nqc

    cells = {("a", "greedy"): 0.3, ("a", "cad-a1"): 0.5, ("a", "adacad"): 0.7}
    cells |= {("b", "greedy"): 0.3, ("b", "cad-a1"): 0.6, ("b", "adacad"): 0.55}
    result = nqc.adacad_outperforms(_nq_swap(cells))
    assert result.status == R.HOLDS, result
    assert result.numbers["mean EM sub over 2 model(s), adacad"] == pytest.approx(0.625)
    turned = nqc.adacad_outperforms(_nq_swap({**cells, ("a", "adacad"): 0.5}))
    assert turned.status == R.FAILS and "cad-a1" in turned.why

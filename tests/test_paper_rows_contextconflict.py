"""The ContextConflict and ConflictBank rows, claims and exclusions (conflictlab/papers/{contextconflict,
conflictbank}.yaml and conflictlab.{contextconflict,conflictbank}.claims): every check holds on constructed
tables built to satisfy it, fails when the one
thing it states is broken, and is ``not comparable`` (never an exception) when a table or a model is missing;
every typed-in number and quote is in the paper's text copy; keys are unique and derived rows name real rows."""

import copy
import re

import pytest

from conflictlab.conflictbank import claims as cbc
from conflictlab.contextconflict import claims as ccc
from conflictlab.paper_registries import BY_BENCHMARK
from conflictlab.report import reproduction as R
from conflictlab.report.reproduction import ClaimContext, Derived

from .paper_texts import text_copy

conflictbank = BY_BENCHMARK["conflictbank"]
contextconflict = BY_BENCHMARK["contextconflict"]

REGISTRIES = (contextconflict, conflictbank)
NOT_COMPARABLE = R.CLAIM_STATUSES[2]


# --------------------------------------------------------------------------
# The registries against the text copies


def _copy(registry) -> str | None:
    text = text_copy(registry.paper.key)
    return text.read_text(encoding="utf-8").replace("\\", "") if text else None  # the copies escape '.' and '-'


def _squeezed(text: str) -> str:
    """Text without link targets, brackets and whitespace: the copies drop spaces around italics and inline links."""
    text = re.sub(r"\]\(https?://[^)]*\)", "", text)
    return re.sub(r"\s+", "", text.replace("[", "").replace("]", ""))


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.paper.key)
def test_every_typed_in_number_is_in_the_papers_text_copy_as_printed(registry):
    body = _copy(registry)
    if body is None:
        pytest.skip(f"the paper's text copy of {registry.paper.key} is not on this machine")
    for number in registry.numbers:
        if number.value is None:
            continue
        assert number.printed in body, (number.key, number.printed)


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.paper.key)
def test_every_claim_quotes_the_text_copy(registry):
    """A quote's pieces (split at '…', where a formula's LaTeX twin is elided) occur in the copy in order."""
    body = _copy(registry)
    if body is None:
        pytest.skip(f"the paper's text copy of {registry.paper.key} is not on this machine")
    squeezed = _squeezed(body)
    for claim in registry.claims:
        at = 0
        for piece in claim.quote.split("…"):
            found = squeezed.find(_squeezed(piece), at)
            assert found >= 0, (claim.key, piece)
            at = found + len(_squeezed(piece))


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.paper.key)
def test_keys_are_unique_and_derived_rows_name_rows_of_their_paper(registry):
    keys = [n.key for n in registry.numbers]
    assert None not in keys and len(set(keys)) == len(keys)
    assert len({c.key for c in registry.claims}) == len(registry.claims)
    for number in registry.numbers:
        assert number.paper == registry.paper.key
        if isinstance(number.ours, Derived):
            assert set(number.ours.of) <= set(keys) and number.ours.op == "difference"
        if number.value is None:  # a lost cell is a row only where a derived row needs it
            assert any(isinstance(n.ours, Derived) and number.key in n.ours.of for n in registry.numbers), number.key
    for claim in registry.claims:
        assert claim.paper == registry.paper.key and (claim.check is not None or claim.exclusion)
    for exclusion in registry.exclusions:
        assert exclusion.paper == registry.paper.key and exclusion.what and exclusion.source and exclusion.reason


def test_the_steering_gain_is_the_paired_difference_of_the_steered_and_unsteered_rows():
    gain = next(n for n in contextconflict.numbers if n.value == 19.2)
    arms = {n.key: n for n in contextconflict.numbers if n.key in gain.ours.of}
    assert gain.ours.paired and [arms[k].ours.where["variant"] for k in gain.ours.of] == ["all_tokens-a1", "base"]
    assert all(a.ours.where["conflict_type"] == "temporal" and a.model == gain.model for a in arms.values())


# --------------------------------------------------------------------------
# Constructed tables: ContextConflict

SEVEN = list(ccc.SEVEN)
STEERED = ["llama-3.1-8b-instruct", "gpt-oss-20b"]
SCORERS = ["llama-3.2-1b", "llama-3.1-8b", "gemma-2b"]
BALANCE = {
    "llama-3.1-8b-instruct": 0.60,
    "llama-3.1-70b-instruct": 0.40,
    "gpt-oss-20b": 0.39,
    "gpt-oss-120b": 0.32,
    "gpt-5": 0.35,
    "claude-4.5-sonnet": 0.36,
    "gemini-2.5-pro": 0.30,
}
LAYERS = range(1, 13)
AUC = {
    "temporal": [0.6] + [0.9] * 11,
    "ambiguity": [0.6] + [0.9] * 11,
    "inferential": [0.6] * 5 + [0.9] * 7,
    "misinformation": [0.6] * 5 + [0.9] * 7,
    "granularity": [0.9] * 4 + [0.6] * 4 + [0.9] * 4,
    "perspective": [0.6] * 4 + [0.95] * 4 + [0.7] * 4,
}
DELTA_ER = {"temporal": 0.05, "granularity": -0.05, "ambiguity": -0.05, "inferential": 0.001, "misinformation": -0.001}
SUBSET_AUC = {
    "entailment_bank": [0.95] * 12,
    "folio": [0.8] * 6 + [0.7] * 6,
    "perspectrum": [0.95] * 12,
    "allsides": [0.45, 0.55] * 6,
}


def _shares(models, first=0.6):
    return [
        {
            "model": m,
            "scorer": "llama-3.2-1b",
            "conflict_type": t,
            "n_evidence": k,
            "position": p,
            "n_samples": 5,
            "mean_share": first if p == 1 else (1 - first) / (k - 1),
            "chance": 1 / k,
        }
        for m in models
        for t in ccc.SUMMARIZATION
        for k in (2, 3)
        for p in range(1, k + 1)
    ]


def _table4():
    rows = []
    for m in STEERED:
        for t in ccc.REASONING:
            base = 0.4
            gains = {
                "base": 0.0,
                "all_tokens-a1": 0.192 if (m, t) == ("llama-3.1-8b-instruct", "temporal") else 0.1,
                "first_generated-a1": 0.05,
                "cas-a1": 0.17 if (m, t) == ("gpt-oss-20b", "temporal") else 0.04,
                "all_tokens-a0.5": 0.05,
                "all_tokens-a1.5": 0.12,
                "all_tokens-a2": 0.12,
                "first_generated-a0.5": 0.02,
                "first_generated-a1.5": 0.08,
                "first_generated-a2": 0.08,
            }
            for variant, gain in gains.items():
                extra = 0.1 if t == "temporal" and variant.startswith("first_generated") else 0.0
                rows.append(
                    {
                        "model": m,
                        "variant": variant,
                        "metric": "accuracy",
                        "conflict_type": t,
                        "value": base + gain + extra,
                        "n": 50,
                    }
                )
            for variant, fth in (("base", 0.80), ("all_tokens-a1", 0.79)):
                rows.append(
                    {
                        "model": m,
                        "variant": variant,
                        "metric": "faithfulness",
                        "conflict_type": t,
                        "value": fth,
                        "n": 50,
                    }
                )
        for t in ccc.SUMMARIZATION:
            for variant, bal in (("base", 0.5), ("all_tokens-a1", 0.4)):
                rows.append(
                    {"model": m, "variant": variant, "metric": "balance", "conflict_type": t, "value": bal, "n": 50}
                )
    return rows


def _mechanistic(model):
    return {
        f"mechanistic_probes_{model}": [
            {"conflict_type": t, "layer": layer, "probe_auc": AUC[t][layer - 1]} for t in AUC for layer in LAYERS
        ],
        f"mechanistic_spectral_{model}": [
            {
                "conflict_type": t,
                "layer": layer,
                "trivial": False,
                "delta_er": DELTA_ER[t] if t in DELTA_ER else (0.2 if layer % 2 else -0.2),
            }
            for t in AUC
            for layer in LAYERS
        ],
        f"mechanistic_projection_{model}": [
            {
                "conflict_type": t,
                "n_evidence": 2,
                "layer": layer,
                "position": p,
                "n_samples": 4,
                "mean_b": 0.3 if p == 1 else -0.3,
            }
            for t in AUC
            for layer in LAYERS
            for p in (1, 2)
        ],
        f"mechanistic_subset_probes_{model}": [
            {"conflict_type": "x", "subset": s, "layer": layer, "probe_auc": SUBSET_AUC[s][layer - 1]}
            for s in SUBSET_AUC
            for layer in LAYERS
        ],
    }


def contextconflict_tables():
    accuracy = {"temporal": 0.6, "misinformation": 0.5, "inferential": 0.3}
    tables = {
        "accuracy": [
            {
                "model": m,
                "conflict_type": t,
                "level": "type",
                "group": "all",
                "n": 40,
                "accuracy": a + 0.01 * SEVEN.index(m) + (0.1 if m == "claude-4.5-sonnet" else 0),
            }
            for m in SEVEN
            for t, a in accuracy.items()
        ],
        "balance": [
            {"model": m, "scorer": s, "conflict_type": t, "group": "all", "n": 40, "balance": BALANCE[m]}
            for m in SEVEN
            for s in SCORERS
            for t in ccc.SUMMARIZATION
        ],
        "faithfulness": [
            {"model": m, "conflict_type": t, "n_scored": 30, "faithfulness": 0.9 if t in ccc.SUMMARIZATION else 0.7}
            for m in SEVEN
            for t in ccc.TASK_FAMILY
        ],
        "position_shares": _shares(SEVEN),
        **{f"shuffled_positions_{m}": _shares([m], first=0.5) for m in STEERED},
        "table3": [
            {
                "model": m,
                "conflict_type": "all",
                "n": 36,
                "delta_high": 1.0,
                "delta_high_ci_low": 0.8,
                "delta_low": 0.1,
                "delta_low_ci_high": 0.2,
                "high_minus_low": 0.9,
                "high_minus_low_ci_low": None,  # no interval below its minimum n: the sign-flip p decides
                "high_minus_low_ci_high": None,
                "p_high_vs_low": 0.001,
            }
            for m in STEERED
        ],
        "table4": _table4(),
        "table6": [
            {
                "model": m,
                "conflict_type": t,
                **{f"balance[{s}]": BALANCE[m] for s in SCORERS[1:]},
                **{f"n[{s}]": 40 for s in SCORERS[1:]},
            }
            for m in SEVEN
            for t in ccc.SUMMARIZATION
        ],
        "table6_agreement": [
            {"scorer_a": "llama-3.2-1b", "scorer_b": s, "level": "within types", "kendall_tau": 0.9, "n": 21}
            for s in SCORERS[1:]
        ],
        **{stem: rows for m in STEERED for stem, rows in _mechanistic(m).items()},
    }
    return tables


def _set(tables, stem, column, value, **where):
    """Set ``column`` to ``value`` (or ``value(row)``) in the rows of ``stem`` matching ``where``; at least one
    must match."""
    hit = [r for r in tables[stem] if all(r.get(k) == v for k, v in where.items())]
    assert hit, (stem, where)
    for r in hit:
        r[column] = value(r) if callable(value) else value


def _ctx(tables, lists):
    return ClaimContext(tables=tables, rows={}, model_lists=lists, sources={})


CC_LISTS = {"generators": SEVEN, "steering.models": STEERED, "mechanistic.models": STEERED}
L8, G20 = "llama-3.1-8b-instruct", "gpt-oss-20b"
CC_BREAKS = {  # each check, and how to break the one thing it states
    ccc.difficulty_hierarchy: lambda t: _set(t, "accuracy", "accuracy", 0.1, conflict_type="temporal"),
    ccc.inferential_below_half: lambda t: _set(
        t, "accuracy", "accuracy", 0.6, conflict_type="inferential", model="gpt-5"
    ),
    ccc.capacity_scaling: lambda t: _set(
        t, "accuracy", "accuracy", 0.1, conflict_type="inferential", model="claude-4.5-sonnet"
    ),
    ccc.balance_not_monotonic: lambda t: _set(t, "balance", "balance", 0.35, model="llama-3.1-70b-instruct"),
    ccc.faithfulness_higher_on_summarization: lambda t: _set(
        t, "faithfulness", "faithfulness", lambda r: 1 - r["faithfulness"], model="gpt-5"
    ),
    ccc.most_types_separable: lambda t: _set(t, f"mechanistic_probes_{L8}", "probe_auc", 0.6),
    ccc.awareness_order: lambda t: _set(
        t, f"mechanistic_probes_{L8}", "probe_auc", lambda r: 0.6 if r["layer"] < 10 else 0.9, conflict_type="temporal"
    ),
    ccc.granularity_u_perspective_peak: lambda t: _set(
        t, f"mechanistic_probes_{L8}", "probe_auc", 0.9, conflict_type="granularity"
    ),
    ccc.delta_er_signs: lambda t: _set(t, f"mechanistic_spectral_{L8}", "delta_er", -0.05, conflict_type="temporal"),
    ccc.delta_er_reasoning_near_zero: lambda t: _set(
        t, f"mechanistic_spectral_{L8}", "delta_er", 0.3, conflict_type="inferential"
    ),
    ccc.perspective_layer_dependence: lambda t: _set(
        t, f"mechanistic_spectral_{L8}", "delta_er", 0.0, conflict_type="perspective"
    ),
    ccc.projection_toward_first: lambda t: _set(t, f"mechanistic_projection_{L8}", "mean_b", -0.5, position=1, layer=3),
    ccc.first_evidence_shares: lambda t: _set(
        t, "position_shares", "mean_share", 0.1, model=L8, position=1, conflict_type="granularity"
    ),
    ccc.first_evidence_all_models: lambda t: _set(t, "position_shares", "mean_share", 0.1, model="gpt-5", position=1),
    ccc.first_evidence_after_shuffling: lambda t: _set(t, f"shuffled_positions_{G20}", "mean_share", 0.1, position=1),
    ccc.causal_intervention: lambda t: _set(t, "table3", "p_high_vs_low", 0.2, model=G20),
    ccc.both_models_gain: lambda t: _set(
        t, "table4", "value", 0.3, model=G20, variant="all_tokens-a1", metric="accuracy"
    ),
    ccc.llama_balance_and_accuracy: lambda t: _set(
        t, "table4", "value", 0.6, model=L8, variant="all_tokens-a1", metric="balance"
    ),
    ccc.wins_five_of_six: lambda t: _set(t, "table4", "value", 0.9, variant="cas-a1", metric="accuracy", model=L8),
    ccc.cas_exception: lambda t: _set(t, "table4", "value", 0.3, variant="cas-a1", model=G20, conflict_type="temporal"),
    ccc.all_tokens_largest_gain: lambda t: _set(t, "table4", "value", 0.9, variant="first_generated-a1", model=L8),
    ccc.minor_faithfulness_decrease: lambda t: _set(
        t, "table4", "value", 0.6, variant="all_tokens-a1", metric="faithfulness", model=G20
    ),
    ccc.alpha_improves: lambda t: _set(
        t, "table4", "value", 0.3, variant="all_tokens-a1.5", model=L8, conflict_type="misinformation"
    ),
    ccc.temporal_largest_alpha_gain: lambda t: _set(
        t, "table4", "value", 0.95, variant="first_generated-a2", model=L8, conflict_type="inferential"
    ),
    ccc.gemini_best_ambiguity: lambda t: _set(
        t, "table6", "balance[gemma-2b]", 0.9, model="gemini-2.5-pro", conflict_type="ambiguity"
    ),
    ccc.llama_highest_balance: lambda t: _set(
        t, "table6", "balance[llama-3.1-8b]", 0.1, model=L8, conflict_type="perspective"
    ),
    ccc.rankings_across_scorers: lambda t: _set(t, "table6_agreement", "kendall_tau", 0.5, scorer_b="gemma-2b"),
    ccc.explicit_inferential_higher: lambda t: _set(
        t, f"mechanistic_subset_probes_{L8}", "probe_auc", 0.99, subset="folio"
    ),
    ccc.perspectrum_vs_allsides: lambda t: _set(
        t, f"mechanistic_subset_probes_{L8}", "probe_auc", 0.9, subset="allsides"
    ),
    ccc.gpt_oss_awareness: lambda t: _set(
        t, f"mechanistic_probes_{G20}", "probe_auc", 0.6, conflict_type="perspective"
    ),
}


# --------------------------------------------------------------------------
# Constructed tables: ConflictBank

CB_MODELS = {name: name.lower() for name in cbc.TWELVE}  # config names the paper's names match
SIZE = {name: i for names in cbc.SERIES.values() for i, name in enumerate(names)}
TRAINED = {"Qwen1.5-4B": "qwen1.5-4b", "Mistral-7B": "mistral-7b", "LLaMA3-8B": "llama3-8b"}


def _mr_settings(size: int) -> dict[str, float]:
    alone = {"misinformation": 30, "temporal": 25, "semantic": 20}
    mr = {kind: v - size for kind, v in alone.items()}
    mr |= {f"correct_{kind}": 70 - size for kind in cbc.KINDS}
    mr |= {f"correct_{kind}_reversed": 80 - size for kind in cbc.KINDS}
    mr |= {f"{kind}_description": mr[kind] - 5 for kind in cbc.DESCRIBED}
    mr |= {f"correct_{kind}_description": mr[f"correct_{kind}"] - 5 for kind in cbc.DESCRIBED}
    return mr


def _embedded_rows(model: str) -> list[dict]:
    rows = []
    for ratio, oar in (("base", 1.0), ("1:0", 0.9), ("2:1", 0.6), ("1:1", 0.5), ("2:3", 0.4)):
        trained = ratio in cbc.CONFLICT_RATIOS
        mr = {kind: 40 for kind in cbc.KINDS} | {f"{k}_description": 35 for k in cbc.DESCRIBED}
        mr |= {f"correct_{k}": 55 if trained else 60 for k in cbc.KINDS} | {
            f"correct_{k}_description": 50 for k in cbc.DESCRIBED
        }
        mr |= {f"correct_{k}_reversed": 75 if trained else 65 for k in cbc.KINDS}
        common = {"model": model, "ratio": ratio, "scored_on": "scored subset", "n_scored": 50, "n_mr": 50}
        rows.append({**common, "setting": "default", "oar": oar, "mr": None})
        rows.append({**common, "setting": "correct", "oar": 0.99, "mr": None})
        rows += [{**common, "setting": s, "oar": None, "mr": v / 100} for s, v in mr.items()]
    return rows


def conflictbank_tables():
    return {
        "conflictbank_mr": [
            {"model": ours, "setting": s, "mr": v / 100, "n_mr": 50}
            for name, ours in CB_MODELS.items()
            for s, v in _mr_settings(SIZE[name]).items()
        ],
        "conflictbank_embedded": [r for ours in TRAINED.values() for r in _embedded_rows(ours)],
    }


CB_LISTS = {"conflictbank.models": [*CB_MODELS.values(), *TRAINED.values()]}
CB_BREAKS = {
    cbc.below_and_above_half: lambda t: _set(
        t, "conflictbank_mr", "mr", 0.6, model="llama2-7b", setting="misinformation"
    ),
    cbc.lower_for_temporal_and_semantic: lambda t: _set(t, "conflictbank_mr", "mr", 0.4, setting="semantic"),
    cbc.falls_with_size_in_llama2: lambda t: _set(
        t, "conflictbank_mr", "mr", 0.75, model="llama2-70b", setting=cbc.FIGURE5_SETTING
    ),
    cbc.larger_models_lower: lambda t: _set(t, "conflictbank_mr", "mr", 0.45, model="gemma-7b"),
    cbc.later_evidence_favoured: lambda t: _set(t, "conflictbank_mr", "mr", 0.5, setting="correct_semantic_reversed"),
    cbc.descriptions_lower_mr: lambda t: _set(t, "conflictbank_mr", "mr", 0.45, setting="temporal_description"),
    cbc.descriptions_lower_mr_with_internal_conflicts: lambda t: _set(
        t, "conflictbank_embedded", "mr", 0.6, ratio="2:1", setting="correct_semantic_description"
    ),
    cbc.conflicting_data_lowers_oar: lambda t: _set(
        t, "conflictbank_embedded", "oar", 0.95, ratio="2:3", setting="default", model="mistral-7b"
    ),
    cbc.default_evidence_retained: lambda t: _set(
        t, "conflictbank_embedded", "oar", 0.8, ratio="1:1", setting="correct", model="llama3-8b"
    ),
    cbc.qwen_follows_later_external: lambda t: [
        _set(
            t, "conflictbank_embedded", "mr", 0.55, model="qwen1.5-4b", ratio="2:1", setting=f"correct_{kind}_reversed"
        )
        for kind in cbc.KINDS
    ],
}

CASES = [(check, brk, contextconflict_tables, CC_LISTS) for check, brk in CC_BREAKS.items()] + [
    (check, brk, conflictbank_tables, CB_LISTS) for check, brk in CB_BREAKS.items()
]


def test_every_check_of_both_papers_has_a_case():
    checks = {c.check for registry in REGISTRIES for c in registry.claims if c.check is not None}
    assert checks == set(CC_BREAKS) | set(CB_BREAKS)


@pytest.mark.parametrize("check, brk, make, lists", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_a_check_holds_on_tables_that_satisfy_it_and_fails_when_its_statement_is_broken(check, brk, make, lists):
    tables = make()
    held = check(_ctx(tables, lists))
    assert held.status == R.HOLDS, held.why
    assert held.numbers and all(v is not None for v in held.numbers.values())
    broken = copy.deepcopy(tables)
    brk(broken)
    failed = check(_ctx(broken, lists))
    assert failed.status == R.FAILS and failed.why, failed


@pytest.mark.parametrize("check, brk, make, lists", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_a_check_is_not_comparable_without_its_tables_or_its_models(check, brk, make, lists):
    no_tables = check(_ctx({}, lists))
    assert no_tables.status == NOT_COMPARABLE and (
        "results/tables/" in no_tables.why or "not made" in no_tables.why or "mechanistic" in no_tables.why
    ), no_tables.why
    if check is ccc.rankings_across_scorers:
        return  # it reads scorers, not a model list: test_a_scorer_the_paper_did_not_use_gives_not_comparable
    no_models = check(_ctx(make(), {key: [] for key in lists}))
    assert no_models.status == NOT_COMPARABLE and "none" in no_models.why, no_models.why


def test_a_check_names_the_missing_column_or_row_rather_than_raising():
    tables = contextconflict_tables()
    for row in tables["accuracy"]:
        del row["accuracy"]
    result = ccc.difficulty_hierarchy(_ctx(tables, CC_LISTS))
    assert result.status == NOT_COMPARABLE and "no column accuracy" in result.why
    tables = conflictbank_tables()
    tables["conflictbank_mr"] = [r for r in tables["conflictbank_mr"] if r["setting"] != "semantic"]
    result = cbc.lower_for_temporal_and_semantic(_ctx(tables, CB_LISTS))
    assert result.status == NOT_COMPARABLE and "setting = semantic" in result.why


def test_a_scorer_the_paper_did_not_use_gives_not_comparable():
    tables = contextconflict_tables()
    for row in tables["balance"]:
        row["scorer"] = "some-other-scorer"
    result = ccc.balance_not_monotonic(_ctx(tables, CC_LISTS))
    assert result.status == NOT_COMPARABLE and "Llama-3.2-1B" in result.why
    for row in tables["table6_agreement"]:
        row["scorer_b"] = "some-other-scorer"
    result = ccc.rankings_across_scorers(_ctx(tables, CC_LISTS))
    assert result.status == NOT_COMPARABLE and "Llama-3.1-8B" in result.why

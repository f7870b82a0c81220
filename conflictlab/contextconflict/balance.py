"""From coalition values to Shapley values, shares, Balance and its tables.

Per sample: exact Shapley values when every coalition was scored, the
antithetic permutation estimate (with standard errors) otherwise; shares and
Balance as defined in :func:`conflictlab.stats.balance`. Aggregates carry bootstrap
95% CIs; samples whose shares are undefined (every φ_i <= 0) are excluded
from means and counted.

Position shares: the mean share at each *input position* (evidence 1, 2, ...)
per type and number of pieces n, against the chance line 1/n. The paper's
code sorted shares by size before averaging, which measures concentration,
not position; here shares stay in input order.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.shapley import exact_shapley, sampled_shapley
from conflictlab.rank_tests import rank_agreement, stratified_kendall
from conflictlab.stats import balance, bootstrap_mean_ci, wilson_interval

ATTRIBUTION_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("subset", pa.string(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("method", pa.string(), nullable=False),  # exact | sampled
        pa.field("phi", pa.list_(pa.float64()), nullable=False),
        pa.field("phi_se", pa.list_(pa.float64())),
        pa.field("shares", pa.list_(pa.float64())),
        pa.field("balance", pa.float64()),
        pa.field("gini", pa.float64()),
        pa.field("undefined", pa.bool_(), nullable=False),
        pa.field("v_empty", pa.float64(), nullable=False),
        pa.field("v_full", pa.float64(), nullable=False),
    ]
)


def attributions(values: pa.Table, samples: pa.Table, *, model: str) -> pa.Table:
    """One row per scored (sample, response): φ, shares, Balance.

    ``values`` is a :data:`conflictlab.contextconflict.scoring.VALUE_SCHEMA`
    table; a game with all ``2**n`` masks is solved exactly, otherwise with
    the permutations stored on its empty-coalition row (the orders its masks
    were scored for).
    """
    meta = {row["sample_id"]: row for row in samples.select(["sample_id", "conflict_type", "subset"]).to_pylist()}
    games: dict[str, dict[int, float]] = defaultdict(dict)
    info, stored = {}, {}
    for row in values.to_pylist():
        games[row["sample_id"]][row["mask"]] = row["value"]
        info[row["sample_id"]] = row
        if row.get("permutations"):
            stored[row["sample_id"]] = np.array(row["permutations"], dtype=np.int64)
    rows = []
    for sample_id in sorted(games):
        game = games[sample_id]
        n = info[sample_id]["n_evidence"]
        if len(game) == 1 << n:
            phi, se, method = exact_shapley(np.array([game[m] for m in range(1 << n)])), None, "exact"
        else:
            if sample_id not in stored:
                raise ValueError(f"values of {sample_id}: {len(game)} of {1 << n} coalitions and no stored permutations")
            phi, se = sampled_shapley(game, stored[sample_id])
            method = "sampled"
        result = balance(phi)
        rows.append(
            {
                "sample_id": sample_id,
                "model": model,
                "scorer": info[sample_id]["scorer"],
                "conflict_type": meta[sample_id]["conflict_type"],
                "subset": meta[sample_id]["subset"],
                "n_evidence": n,
                "method": method,
                "phi": phi.tolist(),
                "phi_se": None if se is None else se.tolist(),
                "shares": None if result.undefined else result.shares.tolist(),
                "balance": None if result.undefined else result.balance,
                "gini": None if result.undefined else result.gini,
                "undefined": result.undefined,
                "v_empty": game[0],
                "v_full": game[(1 << n) - 1],
            }
        )
    return pa.Table.from_pylist(rows, schema=ATTRIBUTION_SCHEMA)


BALANCE_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("group", pa.string(), nullable=False),  # "all" or a subset
        pa.field("n_scored", pa.int64(), nullable=False),
        pa.field("n_undefined", pa.int64(), nullable=False),
        pa.field("n", pa.int64()),  # the defined samples behind the mean: n_scored - n_undefined
        pa.field("balance", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("gini_paper_code", pa.float64()),
    ]
)


def summarize_balance(attr: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Mean Balance (×1, in [0, 1]) per (model, scorer, type) and per subset."""
    data = attr.to_pylist()
    rows = []
    for key in sorted({(r["model"], r["scorer"], r["conflict_type"]) for r in data}):
        members = [r for r in data if (r["model"], r["scorer"], r["conflict_type"]) == key]
        groups = [("all", members)] + [
            (subset, [r for r in members if r["subset"] == subset]) for subset in dict.fromkeys(r["subset"] for r in members)
        ]
        for group, rs in groups:
            defined = [r for r in rs if not r["undefined"]]
            mean, low, high = bootstrap_mean_ci(np.array([r["balance"] for r in defined]), n_resamples=n_resamples, seed=seed)
            gini = float(np.mean([r["gini"] for r in defined])) if defined else math.nan
            rows.append(
                {
                    "model": key[0],
                    "scorer": key[1],
                    "conflict_type": key[2],
                    "group": group,
                    "n_scored": len(rs),
                    "n_undefined": len(rs) - len(defined),
                    "n": len(defined),
                    "balance": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "gini_paper_code": gini,
                }
            )
    return pa.Table.from_pylist(rows, schema=BALANCE_SUMMARY_SCHEMA)


POSITION_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("position", pa.int32(), nullable=False),  # 1-based input position
        pa.field("n_samples", pa.int64(), nullable=False),
        pa.field("mean_share", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("chance", pa.float64(), nullable=False),
    ]
)


def position_shares(attr: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Mean share by input position, per (model, scorer, type, n)."""
    data = [r for r in attr.to_pylist() if not r["undefined"]]
    rows = []
    for key in sorted({(r["model"], r["scorer"], r["conflict_type"], r["n_evidence"]) for r in data}):
        members = [r for r in data if (r["model"], r["scorer"], r["conflict_type"], r["n_evidence"]) == key]
        shares = np.array([r["shares"] for r in members])  # (samples, n)
        for position in range(key[3]):
            mean, low, high = bootstrap_mean_ci(shares[:, position], n_resamples=n_resamples, seed=seed)
            rows.append(
                {
                    "model": key[0],
                    "scorer": key[1],
                    "conflict_type": key[2],
                    "n_evidence": key[3],
                    "position": position + 1,
                    "n_samples": len(members),
                    "mean_share": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "chance": 1.0 / key[3],
                }
            )
    return pa.Table.from_pylist(rows, schema=POSITION_SCHEMA)


AGREEMENT_SCHEMA = pa.schema(
    [
        ("scorer_a", pa.string()),
        ("scorer_b", pa.string()),
        # "within types" (headline: pairs of responses of one type), a conflict
        # type (its responses), or "generator x type cells" (secondary)
        ("level", pa.string()),
        ("n", pa.int64()),
        ("kendall_tau", pa.float64()),
        ("kendall_p", pa.float64()),
        ("spearman_rho", pa.float64()),
        ("spearman_p", pa.float64()),
        ("p_method", pa.string()),  # exact | asymptotic | permutation within types
        ("p_floor", pa.float64()),  # the smallest p-value this n (or permutation count) can give
    ]
)
WITHIN_TYPES, CELLS = "within types", "generator x type cells"


def scorer_robustness(attr: pa.Table, *, n_permutations: int = 4999, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """Table 6: does Balance hold across scorers?

    ``attr``: attribution rows (:data:`ATTRIBUTION_SCHEMA`) of every scorer.
    Returns (cells, agreement). ``cells``: one row per (generator, type) with
    the mean Balance of its defined samples under each scorer
    (``balance[<scorer>]``) and their count (``n[<scorer>]``), as the paper's
    table shows them. ``agreement``, per scorer pair: first the headline,
    Kendall's τ over pairs of responses of the same type
    (:func:`conflictlab.stats.stratified_kendall`), since the claim is that
    scorers rank responses alike within a type; then τ and ρ per type; last
    τ and ρ over the (generator × type) cell means, which a difference
    between types alone can make large (secondary). p-values exact up to
    n = 10 (:func:`conflictlab.stats.rank_agreement`); NaN below 3 pairs.
    """
    rows = [r for r in attr.to_pylist() if not r["undefined"]]
    scorers = sorted({r["scorer"] for r in rows})
    keys = sorted({(r["model"], r["conflict_type"]) for r in rows})
    per_sample = {(r["scorer"], r["model"], r["conflict_type"], r["sample_id"]): r["balance"] for r in rows}
    means, counts = {}, {}
    for scorer in scorers:
        for model, conflict_type in keys:
            values = [v for (s, m, t, _), v in per_sample.items() if (s, m, t) == (scorer, model, conflict_type)]
            means[(scorer, model, conflict_type)] = float(np.mean(values)) if values else math.nan
            counts[(scorer, model, conflict_type)] = len(values)
    cells = pa.table(
        {
            "model": [m for m, _ in keys],
            "conflict_type": [t for _, t in keys],
            **{f"balance[{s}]": [means[(s, m, t)] for m, t in keys] for s in scorers},
            **{f"n[{s}]": [counts[(s, m, t)] for m, t in keys] for s in scorers},
        }
    )
    agreement = []
    for i, a in enumerate(scorers):
        for b in scorers[i + 1 :]:
            shared = sorted((t, m, sid) for (s, m, t, sid) in per_sample if s == a and (b, m, t, sid) in per_sample)
            x = [per_sample[(a, m, t, sid)] for t, m, sid in shared]
            y = [per_sample[(b, m, t, sid)] for t, m, sid in shared]
            within = stratified_kendall(x, y, [t for t, _, _ in shared], n_permutations=n_permutations, seed=seed)
            agreement.append({"scorer_a": a, "scorer_b": b, "level": WITHIN_TYPES, "n": within["n"],
                              "kendall_tau": within["tau"], "kendall_p": within["p"], "spearman_rho": math.nan,
                              "spearman_p": math.nan, "p_method": "permutation within types", "p_floor": within["p_floor"]})
            for conflict_type in sorted({t for _, t in keys}):
                members = [j for j, (t, _, _) in enumerate(shared) if t == conflict_type]
                agreement.append({"scorer_a": a, "scorer_b": b, "level": conflict_type, "n": len(members),
                                  **rank_agreement([x[j] for j in members], [y[j] for j in members])})
            both = [k for k in keys if not (math.isnan(means[(a, *k)]) or math.isnan(means[(b, *k)]))]
            agreement.append({"scorer_a": a, "scorer_b": b, "level": CELLS, "n": len(both),
                              **rank_agreement([means[(a, *k)] for k in both], [means[(b, *k)] for k in both])})
    return cells, pa.Table.from_pylist(agreement, schema=AGREEMENT_SCHEMA)


def summarize_causal(causal: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> pa.Table:
    """Table 3: mean Δ_high and Δ_low with bootstrap CIs, and the share of
    responses with Δ_high > Δ_low with its Wilson interval (none at n < 2)."""
    data = causal.to_pylist()
    rows = []
    for key in sorted({(r["model"], r["conflict_type"]) for r in data}) + sorted({(r["model"], "all") for r in data}):
        members = [r for r in data if r["model"] == key[0] and key[1] in ("all", r["conflict_type"])]
        high = bootstrap_mean_ci(np.array([r["delta_high"] for r in members]), n_resamples=n_resamples, seed=seed)
        low = bootstrap_mean_ci(np.array([r["delta_low"] for r in members]), n_resamples=n_resamples, seed=seed)
        rows.append(
            {
                "model": key[0],
                "conflict_type": key[1],
                "n": len(members),
                "delta_high": high[0],
                "delta_high_ci_low": high[1],
                "delta_high_ci_high": high[2],
                "delta_low": low[0],
                "delta_low_ci_low": low[1],
                "delta_low_ci_high": low[2],
                **dict(zip(("frac_high_gt_low", "frac_ci_low", "frac_ci_high"),
                           wilson_interval(sum(r["delta_high"] > r["delta_low"] for r in members), len(members)))),
            }
        )
    return pa.Table.from_pylist(rows)


def shuffled_shares(attr: pa.Table, samples: pa.Table, *, n_resamples: int = 2000, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """Tables 9-10: shares of a shuffled run by *presented* position and by
    *original* piece, per (model, scorer, type, n), with bootstrap CIs.

    ``attr`` holds shares in presented order (what the scorer saw);
    ``samples`` the shuffled samples with ``extras["shuffle_permutation"]``.
    """
    import json

    perms = {r["sample_id"]: json.loads(r["extras"])["shuffle_permutation"] for r in samples.select(["sample_id", "extras"]).to_pylist()}
    presented = position_shares(attr, n_resamples=n_resamples, seed=seed)
    rows = []
    for r in attr.to_pylist():
        if r["undefined"]:
            continue
        original = [0.0] * r["n_evidence"]
        for position, piece in enumerate(perms[r["sample_id"]]):
            original[piece] = r["shares"][position]
        rows.append({**r, "shares": original})
    by_original = position_shares(pa.Table.from_pylist(rows, schema=ATTRIBUTION_SCHEMA), n_resamples=n_resamples, seed=seed)
    return presented, by_original.rename_columns(["original_piece" if c == "position" else c for c in by_original.column_names])

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
import polars as pl
import pyarrow as pa

from conflictlab import metrics
from conflictlab.contextconflict.shapley import exact_shapley, sampled_shapley
from conflictlab.paired import sign_flip_p
from conflictlab.rank_tests import rank_agreement, stratified_kendall
from conflictlab.stats import balance, proportion_interval
from conflictlab.studentized import (
    CALIBRATED_CONFIDENCE,
    MIN_N_BOOTSTRAP_T,
    paired_skewed_difference,
    skewed_mean_interval,
)

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
    meta = pl.from_arrow(samples.select(["sample_id", "conflict_type", "subset"])).unique("sample_id", keep="last")
    # one row per game: its masks and values (a mask scored twice: the last value), the last
    # row's scorer and n, the last stored permutations (a group keeps the table's row order)
    games = (
        pl.from_arrow(values.select(["sample_id", "mask", "value", "n_evidence", "scorer", "permutations"]))
        .group_by("sample_id")
        .agg(
            pl.col("scorer").last(),
            pl.col("n_evidence").last(),
            pl.col("permutations").filter(pl.col("permutations").list.len() > 0).last(),
            pl.struct("mask", "value").alias("coalitions"),
        )
        .join(meta, on="sample_id", how="left")
        .sort("sample_id")
    )
    if games["conflict_type"].null_count():
        raise KeyError(games.filter(pl.col("conflict_type").is_null())["sample_id"][0])
    rows = []
    for info in games.iter_rows(named=True):  # one per game: its Shapley values are its own computation
        sample_id, n = info["sample_id"], info["n_evidence"]
        game = {coalition["mask"]: coalition["value"] for coalition in info["coalitions"]}
        if len(game) == 1 << n:
            phi, se, method = exact_shapley(np.array([game[m] for m in range(1 << n)])), None, "exact"
        else:
            if info["permutations"] is None:
                raise ValueError(
                    f"values of {sample_id}: {len(game)} of {1 << n} coalitions and no stored permutations"
                )
            phi, se = sampled_shapley(game, np.array(info["permutations"], dtype=np.int64))
            method = "sampled"
        result = balance(phi)
        rows.append(
            {
                "sample_id": sample_id,
                "model": model,
                "scorer": info["scorer"],
                "conflict_type": info["conflict_type"],
                "subset": info["subset"],
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


def _groups(frame: pl.DataFrame, keys: list[str]) -> list[tuple[tuple, np.ndarray]]:
    """(key values, row indices of ``frame`` in its order), one per distinct
    ``keys``, sorted by key: the rows a per-group estimate reads, in the
    order its bootstrap draws depend on."""
    grouped = frame.select(keys).with_row_index("row").group_by(keys).agg(pl.col("row"))
    return sorted((tuple(key), np.asarray(rows, dtype=np.int64)) for *key, rows in grouped.iter_rows())


def _defined(attr: pa.Table) -> pl.DataFrame:
    """``attr``'s rows with defined shares, as a polars frame."""
    return pl.from_arrow(attr).filter(~pl.col("undefined"))


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
    """Mean Balance (×1, in [0, 1]) per (model, scorer, type) and per subset, with
    the interval the metric registry gives Balance (:func:`conflictlab.metrics.estimate`:
    the betting interval over [0, 1], none below its minimum n). ``n_resamples``/``seed`` are unused since
    the t interval replaced the bootstrap (issue 50); kept until config drops
    ``bootstrap_resamples``."""
    frame = pl.from_arrow(attr.select(["model", "scorer", "conflict_type", "subset", "undefined", "balance", "gini"]))
    undefined, values, gini = frame["undefined"].to_numpy(), frame["balance"].to_numpy(), frame["gini"].to_numpy()
    by_subset: dict[tuple, list[tuple[int, str, np.ndarray]]] = defaultdict(list)
    for (*key, subset), members in _groups(frame, ["model", "scorer", "conflict_type", "subset"]):
        by_subset[tuple(key)].append((members[0], subset, members))
    rows = []
    for key, members in _groups(frame, ["model", "scorer", "conflict_type"]):  # one per (model, scorer, type)
        # subsets in order of first appearance
        groups = [("all", members)] + [
            (subset, rs) for _, subset, rs in sorted(by_subset[key], key=lambda group: group[0])
        ]
        for group, rs in groups:
            defined = rs[~undefined[rs]]
            mean, low, high = metrics.estimate(metrics.get("balance"), values[defined], bounds=(0.0, 1.0))
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
                    "gini_paper_code": float(np.mean(gini[defined])) if defined.size else math.nan,
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
    """Mean share by input position, per (model, scorer, type, n), with its
    Student-t interval; ``n_resamples``/``seed`` unused (see :func:`summarize_balance`)."""
    frame = _defined(attr.select(["model", "scorer", "conflict_type", "n_evidence", "undefined", "shares"]))
    rows = []
    for key, members in _groups(
        frame, ["model", "scorer", "conflict_type", "n_evidence"]
    ):  # one per (model, scorer, type, n)
        shares = frame["shares"].gather(members).list.to_array(key[3]).to_numpy()  # (samples, n)
        for position in range(key[3]):
            mean, low, high = metrics.estimate(metrics.get("position_share"), shares[:, position], bounds=(0.0, 1.0))
            rows.append(
                {
                    "model": key[0],
                    "scorer": key[1],
                    "conflict_type": key[2],
                    "n_evidence": key[3],
                    "position": position + 1,
                    "n_samples": members.size,
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
        # "within generator x type" (headline: pairs of responses of one
        # generator and type), "within types" (beside it: pairs of one type,
        # across generators), a conflict type (its responses), or
        # "generator x type cells" (secondary)
        ("level", pa.string()),
        ("n", pa.int64()),
        ("kendall_tau", pa.float64()),
        ("kendall_p", pa.float64()),
        ("spearman_rho", pa.float64()),
        ("spearman_p", pa.float64()),
        (
            "p_method",
            pa.string(),
        ),  # exact | permutation (m ...) | asymptotic | permutation within strata | undefined (why)
        ("p_floor", pa.float64()),  # the smallest p-value this n (or permutation count) can give
    ]
)
WITHIN_CELLS, WITHIN_TYPES, CELLS = "within generator x type", "within types", "generator x type cells"


def scorer_robustness(attr: pa.Table, *, n_permutations: int = 4999, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """Table 6: does Balance hold across scorers?

    ``attr``: attribution rows (:data:`ATTRIBUTION_SCHEMA`) of every scorer.
    Returns (cells, agreement). ``cells``: one row per (generator, type) with
    the mean Balance of its defined samples under each scorer
    (``balance[<scorer>]``) and their count (``n[<scorer>]``), as the paper's
    table shows them. ``agreement``, per scorer pair: first the headline,
    Kendall's τ over pairs of responses of the same generator and type
    (:func:`conflictlab.rank_tests.stratified_kendall`), since the claim is
    that scorers rank responses alike and neither a type's nor a generator's
    level should count as agreement (pooled over generators, a generator
    effect leaks in: issue 50 measured 0.132 there against −0.01 within
    cells); beside it the same within types only; then τ and ρ per type;
    last τ and ρ over the (generator × type) cell means, which a difference
    between types alone can make large (secondary). p-values exact up to
    n = 10, by permutation up to 50 (:func:`conflictlab.rank_tests.rank_agreement`);
    undefined below 3 pairs or on constant input, with ``p_method`` saying so.
    """
    frame = _defined(attr.select(["scorer", "model", "conflict_type", "sample_id", "undefined", "balance"]))
    scorers = sorted(frame["scorer"].unique().to_list())
    keys = sorted(frame.select("model", "conflict_type").unique().iter_rows())
    values = frame["balance"].to_numpy()
    groups = dict(_groups(frame, ["scorer", "model", "conflict_type"]))
    means, counts = {}, {}
    for scorer in scorers:
        for model, conflict_type in keys:
            members = groups.get((scorer, model, conflict_type), np.empty(0, dtype=np.int64))
            means[(scorer, model, conflict_type)] = float(np.mean(values[members])) if members.size else math.nan
            counts[(scorer, model, conflict_type)] = members.size
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
            # the responses both scored, by (type, model, sample)
            shared = (
                frame.filter(pl.col("scorer") == a)
                .join(frame.filter(pl.col("scorer") == b), on=["model", "conflict_type", "sample_id"], suffix="_b")
                .sort("conflict_type", "model", "sample_id")
            )
            strata = {
                WITHIN_CELLS: list(zip(shared["model"].to_list(), shared["conflict_type"].to_list())),
                WITHIN_TYPES: shared["conflict_type"].to_list(),
            }
            for level, labels in strata.items():  # the headline first, the other stratification beside it
                within = stratified_kendall(
                    shared["balance"].to_list(),
                    shared["balance_b"].to_list(),
                    labels,
                    n_permutations=n_permutations,
                    seed=seed,
                )
                how = within["undefined"] or f"permutation within strata ({n_permutations} permutations)"
                agreement.append(
                    {
                        "scorer_a": a,
                        "scorer_b": b,
                        "level": level,
                        "n": within["n"],
                        "kendall_tau": within["tau"],
                        "kendall_p": within["p"],
                        "spearman_rho": math.nan,
                        "spearman_p": math.nan,
                        "p_method": how,
                        "p_floor": within["p_floor"],
                    }
                )
            for conflict_type in sorted({t for _, t in keys}):
                mine = shared.filter(pl.col("conflict_type") == conflict_type)
                agreement.append(
                    {
                        "scorer_a": a,
                        "scorer_b": b,
                        "level": conflict_type,
                        "n": mine.height,
                        **rank_agreement(mine["balance"].to_list(), mine["balance_b"].to_list()),
                    }
                )
            both = [k for k in keys if not (math.isnan(means[(a, *k)]) or math.isnan(means[(b, *k)]))]
            agreement.append(
                {
                    "scorer_a": a,
                    "scorer_b": b,
                    "level": CELLS,
                    "n": len(both),
                    **rank_agreement([means[(a, *k)] for k in both], [means[(b, *k)] for k in both]),
                }
            )
    return cells, pa.Table.from_pylist(agreement, schema=AGREEMENT_SCHEMA)


TABLE3_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),  # a type, or "all"
        pa.field("n", pa.int64(), nullable=False),
    ]
    + [
        pa.field(f"{name}{suffix}", pa.float64())
        for name in ("delta_high", "delta_low", "high_minus_low")
        for suffix in ("", "_ci_low", "_ci_high")
    ]
    + [pa.field("p_high_vs_low", pa.float64())]  # sign-flip p of mean(delta_high - delta_low) = 0
    + [pa.field(name, pa.float64()) for name in ("frac_high_gt_low", "frac_ci_low", "frac_ci_high")]
)


def table3_caption() -> str:
    """Table 3's caption; its interval names are those of the functions :func:`summarize_causal` calls."""
    skewed, share = metrics.method_label(skewed_mean_interval), metrics.method_label(proportion_interval)
    return (
        "Table 3: removing the piece of highest vs lowest Shapley value phi (argmax / argmin phi; a share would tie "
        "pieces whose phi <= 0). delta = l_full - l_without, the generating model's own length-normalised "
        f"log-likelihood of its response (the scorer), mean [95% CI: {skewed} at {CALIBRATED_CONFIDENCE:.0%} "
        "nominal, the level that covers 95% intended at >= 93% on skewed shapes (docs/statistics.md); none at "
        f"n < {MIN_N_BOOTSTRAP_T} or without spread]; high_minus_low: the mean of delta_high - delta_low per "
        f"response, with the same CI and p_high_vs_low, the {metrics.method_label(sign_flip_p)} p of that mean "
        "being 0 (exact up to 16 responses); frac_high_gt_low: share of responses with delta_high > delta_low "
        f"[{share} 95% CI; none at n < 2]."
    )


def summarize_causal(causal: pa.Table, *, n_resamples: int = 1999, seed: int = 0) -> pa.Table:
    """Table 3, one row per (model, type) and per model (type "all"): mean
    Δ_high and Δ_low, each with its bootstrap-t interval calibrated on skewed
    shapes (:func:`conflictlab.studentized.skewed_mean_interval`, ``n_resamples``
    resamples; Student's t undercovers these skewed log-likelihood
    differences); the per-sample comparison Δ_high − Δ_low
    (:func:`conflictlab.studentized.paired_skewed_difference`: its mean,
    bootstrap-t interval and sign-flip p, the test of the causal claim); and
    the share of responses with Δ_high > Δ_low with its Clopper-Pearson
    interval (none at n < 2)."""
    frame = pl.from_arrow(causal.select(["model", "conflict_type", "delta_high", "delta_low"]))
    delta_high, delta_low = frame["delta_high"].to_numpy(), frame["delta_low"].to_numpy()
    by_model = [((model, "all"), members) for (model,), members in _groups(frame, ["model"])]
    rows = []
    for key, members in _groups(frame, ["model", "conflict_type"]) + by_model:  # one per (model, type), then per model
        high, low = delta_high[members], delta_low[members]
        row = {"model": key[0], "conflict_type": key[1], "n": members.size}
        for name, values in (("delta_high", high), ("delta_low", low)):
            estimate = skewed_mean_interval(values, n_resamples=n_resamples, seed=seed)
            row.update(zip((name, f"{name}_ci_low", f"{name}_ci_high"), estimate))
        paired = paired_skewed_difference(high, low, n_resamples=n_resamples, seed=seed)
        row.update(
            high_minus_low=paired["difference"],
            high_minus_low_ci_low=paired["difference_low"],
            high_minus_low_ci_high=paired["difference_high"],
            p_high_vs_low=paired["p"],
        )
        share = proportion_interval(int((high > low).sum()), members.size)
        row.update(zip(("frac_high_gt_low", "frac_ci_low", "frac_ci_high"), share))
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=TABLE3_SCHEMA)


def shuffled_shares(
    attr: pa.Table, samples: pa.Table, *, n_resamples: int = 2000, seed: int = 0
) -> tuple[pa.Table, pa.Table]:
    """Tables 9-10: shares of a shuffled run by *presented* position and by
    *original* piece, per (model, scorer, type, n), with bootstrap CIs.

    ``attr`` holds shares in presented order (what the scorer saw);
    ``samples`` the shuffled samples with ``extras["shuffle_permutation"]``.
    """
    permutation = pl.Struct({"shuffle_permutation": pl.List(pl.Int64)})
    perms = pl.from_arrow(samples.select(["sample_id", "extras"])).select(
        "sample_id",
        pl.col("extras").str.json_decode(permutation).struct.field("shuffle_permutation").alias("permutation"),
    )
    presented = position_shares(attr, n_resamples=n_resamples, seed=seed)
    defined = _defined(attr).with_row_index("row").join(perms, on="sample_id", how="left")
    if defined["permutation"].null_count():
        raise KeyError(f"no shuffle permutation for {defined.filter(pl.col('permutation').is_null())['sample_id'][0]}")
    parts = []
    for (n,), members in _groups(defined, ["n_evidence"]):  # one per number of pieces
        mine = defined[members]
        shares = mine["shares"].list.to_array(n).to_numpy()  # (samples, n), in presented order
        original = np.zeros_like(shares)
        np.put_along_axis(
            original, mine["permutation"].list.to_array(n).to_numpy(), shares, axis=1
        )  # original[piece] = presented share
        parts.append(mine.with_columns(pl.Series("shares", original).cast(pl.List(pl.Float64))))
    rows = pl.concat(parts).sort("row").drop("row", "permutation") if parts else _defined(attr).clear()
    by_original = position_shares(rows.to_arrow().cast(ATTRIBUTION_SCHEMA), n_resamples=n_resamples, seed=seed)
    return presented, by_original.rename_columns(
        ["original_piece" if c == "position" else c for c in by_original.column_names]
    )

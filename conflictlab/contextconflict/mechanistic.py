"""Inside the model: probes, spectral energy and directional projections
(the paper's Section 4 and Appendix D) over stored activations.

All functions take plain arrays: activations ``H`` of shape
(n_prompts, n_layers, d) from :func:`conflictlab.lm.hidden.hidden_states`,
read for the prompts of :mod:`conflictlab.contextconflict.pairs`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


def grouped_folds(
    labels: np.ndarray, groups: np.ndarray, n_splits: int = 5, seed: int = 0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified folds that never split a group (both members of a pair
    stay in the same fold). Fewer groups than ``n_splits`` -> one fold per group."""
    from sklearn.model_selection import StratifiedGroupKFold

    n_groups = len(np.unique(groups))
    splitter = StratifiedGroupKFold(n_splits=min(n_splits, n_groups), shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(labels)), labels, groups))


def probe_auc(features: np.ndarray, labels: np.ndarray, folds) -> tuple[float, float]:
    """Cross-validated AUC (mean, std over folds) of a standardised logistic
    regression (C=1.0, max_iter=1000). ``features``: (n, f)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scores = []
    for train, test in folds:
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
        clf.fit(features[train], labels[train])
        scores.append(roc_auc_score(labels[test], clf.decision_function(features[test])))
    return float(np.mean(scores)), float(np.std(scores))


def mean_difference_auc(features: np.ndarray, labels: np.ndarray, folds) -> tuple[float, float]:
    """AUC of projecting onto the training folds' difference of class means
    (the direction the paper's code used)."""
    from sklearn.metrics import roc_auc_score

    scores = []
    for train, test in folds:
        direction = features[train][labels[train] == 1].mean(0) - features[train][labels[train] == 0].mean(0)
        scores.append(roc_auc_score(labels[test], features[test] @ direction))
    return float(np.mean(scores)), float(np.std(scores))


# --------------------------------------------------------------------------
# Spectral energy (Figure 4).


def energy_ratio(h: np.ndarray, k: int = 10, *, method: str = "exact", seed: int = 0) -> float:
    """ER = Σ_{i<=k} σ_i² / ‖H̃‖_F² of the column-centred ``h`` (n × d).

    ``method="lowrank"`` uses ``torch.svd_lowrank`` (the paper's choice; with
    its default oversampling it can underestimate σ_i and hence ER). The exact
    SVD is numpy's (LAPACK), so the mechanistic report imports no torch.
    """
    centred = np.asarray(h, dtype=np.float64)
    centred = centred - centred.mean(axis=0, keepdims=True)
    total = float((centred**2).sum())
    if total == 0.0:
        return float("nan")
    if method == "exact":
        sigma = np.linalg.svd(centred, compute_uv=False)
    elif method == "lowrank":
        import torch

        torch.manual_seed(seed)
        _, sigma, _ = torch.svd_lowrank(torch.from_numpy(centred), q=min(k, *centred.shape))
        sigma = sigma.numpy()
    else:
        raise ValueError(f"unknown SVD method {method!r}; expected 'exact' or 'lowrank'")
    return float((sigma[:k] ** 2).sum() / total)


class DeltaER(NamedTuple):
    """:func:`delta_er`'s result. ``ci_low``/``ci_high`` are NaN exactly when
    ``ci_reason`` is non-empty; ``p`` is NaN when ΔER is 0 by construction."""

    estimate: float
    ci_low: float
    ci_high: float
    p: float
    ci_reason: str


_Z95 = 1.959963984540054


def _rank_bound(n: int, d: int) -> int:
    """The largest possible rank of a column-centred n × d matrix."""
    return max(min(n - 1, d), 0)


def delta_er_trivial(n: int, k: int, d: int) -> bool:
    """True when k >= min(n − 1, d): every centred n × d matrix then has at most
    k nonzero singular values, so both ERs are 1 and ΔER = 0 whatever the data."""
    return k >= _rank_bound(n, d)


def delta_er_interval_reason(n: int, k: int, d: int) -> str:
    """Why :func:`delta_er` gives no interval for n pairs of d-dimensional
    rows and top-k energy; "" when it gives one.

    The jackknife needs the leave-one-out ΔERs to vary: an (n − 1)-row matrix
    has rank at most min(n − 2, d), so at k >= n − 2 every replicate ER is 1
    and the jackknife standard error is 0 (a zero-width interval). At
    n = k + 3 the replicates are pinned to rank k + 1 and the interval covered
    the truth in only 90–93% of simulated data sets (94–96% at n = k + 4),
    so the minimum is n = k + 4.
    """
    if delta_er_trivial(n, k, d):
        return f"trivial: k >= min(n-1, d), every ER is 1 (n={n}, k={k})"
    if k >= n - 2:
        return f"rank-deficient: k >= n-2, every leave-one-out ER is 1 (n={n}, k={k})"
    if n < k + 4:
        return f"n < k+4: too few pairs for the jackknife (n={n}, k={k})"
    return ""


class _GramStatistic:
    """ΔER (exact SVD) of the pairs with a chosen subset of them swapped,
    from the Gram matrix of all 2n rows, computed once.

    The squared singular values of a centred (m, d) matrix are the
    eigenvalues of its centred (m, m) Gram matrix, and every matrix the
    jackknife and the permutation test need is a selection of the 2n rows:
    its Gram matrix is a sub-matrix of the one (2n, 2n) Gram matrix. Each
    replicate is then an m x m eigenvalue problem, batched, instead of an
    SVD of an m x d matrix (d is the model's width, in the thousands), which
    pays while n < d (:func:`delta_er` takes the per-matrix SVD otherwise;
    docs/performance.md has the figures). The rows are centred on their
    pooled mean first (which leaves every sub-matrix's centred Gram matrix
    unchanged), so that the large common component of a model's activations
    does not cost precision. A matrix whose centred energy is at most 1e-12
    of the rows' is taken as constant (its ER NaN): float64 cannot tell it
    from one, where :func:`energy_ratio` asks for exactly zero energy.
    """

    def __init__(self, h_conf: np.ndarray, h_cons: np.ndarray, k: int):
        rows = np.concatenate([h_conf, h_cons]).astype(np.float64)
        rows -= rows.mean(axis=0)
        self.gram = rows @ rows.T  # (2n, 2n)
        self.n, self.k = len(h_conf), k
        self.floor = 1e-12 * max(float(np.trace(self.gram)), np.finfo(np.float64).tiny)
        # replicates per batched call: 2^24 float64 entries (128 MB) per stacked (block, n, n) array,
        # a few times that at the peak (the centred copy, the eigenvalue solver's workspace)
        self.block = max(1, (1 << 24) // (self.n * self.n))

    def _energy_ratios(self, index: np.ndarray) -> np.ndarray:
        """ER of the matrices whose rows are ``index`` (B, m) into the 2n rows: (B,)."""
        gram = self.gram[index[:, :, None], index[:, None, :]]
        centred = gram - gram.mean(axis=1, keepdims=True) - gram.mean(axis=2, keepdims=True)
        centred += gram.mean(axis=(1, 2), keepdims=True)
        energy = np.linalg.eigvalsh(centred)[:, ::-1]  # descending
        total = np.trace(centred, axis1=1, axis2=2)
        top = energy[:, : self.k].sum(axis=1)
        varies = total > self.floor
        return np.where(varies, top / np.where(varies, total, 1.0), np.nan)

    def __call__(self, swap: np.ndarray) -> np.ndarray:
        """ΔER with pair i's rows swapped where ``swap[b, i]``; ``swap`` (B, n) bool, returns (B,)."""
        pair = np.arange(self.n)
        conflict = np.where(swap, pair + self.n, pair)
        consistent = np.where(swap, pair, pair + self.n)
        return self._energy_ratios(conflict) - self._energy_ratios(consistent)

    def leave_one_out(self) -> np.ndarray:
        """ΔER without pair i, for each i: (n,), in blocks of :attr:`block` replicates."""
        kept = np.broadcast_to(np.arange(self.n), (self.n, self.n))[~np.eye(self.n, dtype=bool)]
        kept = kept.reshape(self.n, self.n - 1)
        return np.concatenate(
            [
                self._energy_ratios(rows) - self._energy_ratios(rows + self.n)
                for rows in np.split(kept, range(self.block, self.n, self.block))
            ]
        )


class _MatrixStatistic:
    """:class:`_GramStatistic`'s interface, one :func:`energy_ratio` per matrix
    (for ``method="lowrank"``, the paper's randomised SVD, and for n >= d)."""

    block = 1

    def __init__(self, h_conf: np.ndarray, h_cons: np.ndarray, k: int, method: str):
        self.h_conf, self.h_cons, self.k, self.method = h_conf, h_cons, k, method

    def _delta(self, a: np.ndarray, b: np.ndarray) -> float:
        return energy_ratio(a, self.k, method=self.method) - energy_ratio(b, self.k, method=self.method)

    def __call__(self, swap: np.ndarray) -> np.ndarray:
        return np.array(
            [
                self._delta(
                    np.where(row[:, None], self.h_cons, self.h_conf), np.where(row[:, None], self.h_conf, self.h_cons)
                )
                for row in swap
            ]
        )

    def leave_one_out(self) -> np.ndarray:
        keep = ~np.eye(len(self.h_conf), dtype=bool)
        return np.array([self._delta(self.h_conf[row], self.h_cons[row]) for row in keep])


def delta_er(
    h_conf: np.ndarray,
    h_cons: np.ndarray,
    *,
    k: int = 10,
    method: str = "exact",
    n_permutations: int = 1000,
    seed: int = 0,
) -> DeltaER:
    """ΔER = ER(conflict) − ER(consistent) (Eq. 4, Section 4.2 of the paper),
    a 95% interval and a permutation p-value.

    ``h_conf`` and ``h_cons``: (n pairs, d), row i of each from the same pair.

    What it estimates: ER of a sample depends on n when n < d (an n-row
    centred matrix has rank <= n − 1, so its top-k share grows as n falls),
    and the paper's activations have d in the thousands. The estimand is
    therefore θ_n = E[ΔER of n pairs], the expected value of Eq. 4 at the
    study's number of pairs (both ERs at the same n, so the comparison is
    fair); not the n → ∞ ΔER of the two covariance matrices, which a sample
    with n < d cannot estimate without a model of the spectrum (in
    simulation the former interval, around the jackknife bias-corrected
    estimate, covered it in 41–90% of data sets and θ_n in 54–81%).
    ΔER is reported as Eq. 4 computes it, and the interval
    is centred on it: ΔER ± 1.96 · SE, SE the delete-one-pair jackknife
    standard error (pairs kept together, so within-pair dependence is kept).
    By the Efron–Stein inequality the jackknife variance overstates the
    variance of a nonlinear statistic, so the interval is conservative
    (94–98% on simulated spectra for n >= k + 4; tested). Not the bootstrap:
    a resample repeats rows, which lowers the rank and inflates each ER.

    No interval (NaN, reason in ``ci_reason``; :func:`delta_er_interval_reason`)
    when k >= n − 2 (every leave-one-out ER is 1), when n < k + 4, or when
    every leave-one-out ΔER is equal. ``p``: permutation test of H0 "the
    conflict and consistent labels are exchangeable within pairs"; each
    permutation swaps the two rows of a random subset of pairs; two-sided,
    (1 + #{|ΔER*| >= |ΔER|}) / (1 + n_permutations); NaN when ΔER is 0 by
    construction.
    """

    n, d = h_conf.shape
    if method == "exact" and n < d:
        statistic = _GramStatistic(h_conf, h_cons, k)
    else:
        statistic = _MatrixStatistic(h_conf, h_cons, k, method)
    point = float(statistic(np.zeros((1, n), dtype=bool))[0])
    if not np.isfinite(point):
        return DeltaER(point, math.nan, math.nan, math.nan, "ER undefined: a matrix has no variance")
    reason = delta_er_interval_reason(n, k, d)
    if delta_er_trivial(n, k, d):
        return DeltaER(point, math.nan, math.nan, math.nan, reason)
    low = high = math.nan
    if not reason:
        leave_one_out = statistic.leave_one_out()
        se = float(np.sqrt((n - 1) / n * ((leave_one_out - leave_one_out.mean()) ** 2).sum()))
        # ER lies in [0, 1]; a spread at rounding level means the rows repeat a lower-rank pattern.
        if se <= 1e-10:
            reason = "degenerate: every leave-one-out ΔER is equal"
        else:
            low, high = point - _Z95 * se, point + _Z95 * se

    # The same draws, in the same order, as one `rng.random(n)` per permutation.
    swaps = np.random.default_rng(seed).random((n_permutations, n)) < 0.5
    extreme = 0
    for start in range(0, n_permutations, statistic.block):
        extreme += int((np.abs(statistic(swaps[start : start + statistic.block])) >= abs(point) - 1e-12).sum())
    p = (1 + extreme) / (1 + n_permutations)
    return DeltaER(point, float(low), float(high), p, reason)


# --------------------------------------------------------------------------
# Directional projection (Figure 3, Eq. 5).


def directional_bias(
    c: np.ndarray, a: np.ndarray, eps: float = 1e-8, degenerate: float = 1e-12
) -> tuple[np.ndarray, int]:
    """b_i = (c−μ)·(a_i−μ) / ((‖c−μ‖+ε)(‖a_i−μ‖+ε)) with μ = mean_i a_i.

    ``c``: (d,) combined-prompt activation; ``a``: (K, d) single-evidence
    activations. A norm below ``degenerate`` gives b_i = 0; the second value
    returned counts those skips. With K = 2, a_1 − μ = −(a_2 − μ), so
    b_1 = −b_2 by construction.
    """
    mu = a.mean(axis=0)
    dc = c - mu
    da = a - mu
    norm_c = np.linalg.norm(dc)
    norm_a = np.linalg.norm(da, axis=1)
    b = np.zeros(len(a))
    skips = 0
    for i in range(len(a)):
        if norm_c < degenerate or norm_a[i] < degenerate:
            skips += 1
            continue
        b[i] = float(dc @ da[i]) / ((norm_c + eps) * (norm_a[i] + eps))
    return b, skips


# --------------------------------------------------------------------------
# Prompt sets for the activation rule.


# --------------------------------------------------------------------------
# Analyses over stored activations.


def probe_rows(
    h: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    lengths: np.ndarray,
    n_evidence: np.ndarray,
    *,
    n_splits: int = 5,
    seed: int = 0,
) -> tuple[list[dict], dict]:
    """Per layer: logistic-probe AUC and difference-of-means AUC; plus the
    length-only baseline (prompt tokens, evidence count) and fold sizes."""
    folds = grouped_folds(labels, groups, n_splits=n_splits, seed=seed)
    baseline = probe_auc(np.column_stack([lengths, n_evidence]).astype(float), labels, folds)
    rows = []
    for layer in range(h.shape[1]):
        x = h[:, layer].astype(np.float64)
        auc, auc_sd = probe_auc(x, labels, folds)
        dom, dom_sd = mean_difference_auc(x, labels, folds)
        rows.append(
            {
                "layer": layer + 1,
                "probe_auc": auc,
                "probe_auc_std": auc_sd,
                "mean_diff_auc": dom,
                "mean_diff_auc_std": dom_sd,
                "length_only_auc": baseline[0],
                "length_only_auc_std": baseline[1],
            }
        )
    info = {
        "n_pairs": int(len(np.unique(groups))),
        "n_folds": len(folds),
        "test_fold_sizes": [int(len(test)) for _, test in folds],
    }
    return rows, info


def spectral_rows(
    h_conf: np.ndarray, h_cons: np.ndarray, *, k: int, method: str, n_resamples: int, seed: int
) -> list[dict]:
    """ΔER per layer with its jackknife interval, the reason where there is
    none, and the permutation p-value (:func:`delta_er`, ``n_resamples``
    permutations); inputs (n pairs, layers, d).

    ``trivial`` marks k >= min(n − 1, d) (:func:`delta_er_trivial`): both ERs
    are 1 and ΔER is 0 whatever the model does. ``ci_reason`` is "" where the
    interval exists.
    """
    n, _, d = h_conf.shape
    rows = []
    for layer in range(h_conf.shape[1]):
        conf, cons = h_conf[:, layer].astype(np.float64), h_cons[:, layer].astype(np.float64)
        result = delta_er(conf, cons, k=k, method=method, n_permutations=n_resamples, seed=seed)
        rows.append(
            {
                "layer": layer + 1,
                "er_conflict": energy_ratio(conf, k, method=method),
                "er_consistent": energy_ratio(cons, k, method=method),
                "delta_er": result.estimate,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "ci_reason": result.ci_reason,
                "p_permutation": result.p,
                "k": k,
                "n_pairs": int(n),
                "trivial": delta_er_trivial(n, k, d),
            }
        )
    return rows


def projection_rows(combined: np.ndarray, singles: list[np.ndarray]) -> tuple[list[dict], int]:
    """b_i per sample, layer and position. ``combined``: (samples, layers, d);
    ``singles[s]``: (K_s, layers, d). Returns rows and the count of
    degenerate (zeroed) b_i."""
    rows, skipped = [], 0
    for s, (c, a) in enumerate(zip(combined, singles)):
        for layer in range(c.shape[0]):
            b, skips = directional_bias(c[layer].astype(np.float64), a[:, layer].astype(np.float64))
            skipped += skips
            for i, value in enumerate(b):
                rows.append(
                    {"sample": s, "n_evidence": len(a), "layer": layer + 1, "position": i + 1, "b": float(value)}
                )
    return rows, skipped


# --------------------------------------------------------------------------
# The per-type analyses of the report.


def _pairs(index: list[dict]) -> tuple[list[str], dict[str, dict], dict[str, dict]]:
    """(sorted sample ids, conflict index row by id, consistent index row by id)."""
    conflict = {r["sample_id"]: r for r in index if r["variant"] == "conflict"}
    consistent = {r["sample_id"]: r for r in index if r["variant"] == "consistent"}
    ids = sorted(conflict)
    missing = [i for i in ids if i not in consistent]
    if missing:
        raise ValueError(f"pairs index: sample {missing[0]!r} has a conflict prompt but no consistent one")
    return ids, conflict, consistent


def _probe_inputs(index: list[dict], ids: list[str], conflict: dict, consistent: dict):
    """The 2·len(ids) states rows of ``ids``' conflict prompts then their
    consistent ones, and arrays of that length: labels (1 = conflict), pair
    groups, prompt lengths and evidence counts."""
    rows = [conflict[i]["row"] for i in ids] + [consistent[i]["row"] for i in ids]
    by_row = {r["row"]: r for r in index}
    return (
        rows,
        np.array([1] * len(ids) + [0] * len(ids)),
        np.array(list(range(len(ids))) * 2),
        np.array([by_row[r]["n_prompt_tokens"] for r in rows]),
        np.array([by_row[r]["n_evidence"] for r in rows]),
    )


def pair_analysis(
    states: np.ndarray,
    index: list[dict],
    *,
    cv_folds: int,
    energy_k: int,
    svd: str,
    bootstrap_resamples: int,
    seed: int,
) -> tuple[list[dict], dict, list[dict]]:
    """Probes, Table 8's row and ΔER of one type's conflict/consistent pairs.

    ``states``: (prompts, layers, d) from the ``pairs`` prompts; ``index``:
    their :data:`INDEX_SCHEMA` rows. Returns (probe rows, Table 8 row without
    the type, spectral rows).
    """
    ids, conflict, consistent = _pairs(index)
    rows, labels, groups, lengths, n_evidence = _probe_inputs(index, ids, conflict, consistent)
    probes, info = probe_rows(states[rows], labels, groups, lengths, n_evidence, n_splits=cv_folds, seed=seed)
    rules = Counter(conflict[i]["rule"] for i in ids)
    table8 = {
        "n_pairs": info["n_pairs"],
        "n_ambiguous": sum(conflict[i]["ambiguous"] for i in ids),
        "rules": ", ".join(f"{k} ({v})" for k, v in sorted(rules.items())),
        "n_folds": info["n_folds"],
        "test_fold_sizes": " ".join(map(str, info["test_fold_sizes"])),
        "mean_tokens_conflict": float(lengths[labels == 1].mean()),
        "mean_tokens_consistent": float(lengths[labels == 0].mean()),
    }
    spectral = spectral_rows(
        states[[conflict[i]["row"] for i in ids]],
        states[[consistent[i]["row"] for i in ids]],
        k=energy_k,
        method=svd,
        n_resamples=bootstrap_resamples,
        seed=seed,
    )
    return probes, table8, spectral


def subset_probe_analysis(
    states: np.ndarray,
    index: list[dict],
    subset_of: dict[str, tuple[str, bool]],
    subsets: Sequence[str],
    *,
    cv_folds: int,
    seed: int,
) -> tuple[list[dict], dict[str, int]]:
    """Probes fit and tested on each subset's pairs alone (Appendix D.2,
    Figures 20–21: EntailmentBank vs FOLIO, Perspectrum vs AllSides).

    ``states``/``index`` as in :func:`pair_analysis`; ``subset_of``: sample
    id -> (subset, implicit); ``subsets``: the subsets to probe. Returns the
    :func:`probe_rows` rows of every one of them with at least 2 pairs (one
    per layer, with ``subset``, ``implicit``, ``n_pairs`` and ``n_folds``)
    and the pair count of each left out for having fewer (cross-validation
    needs a pair to train on and one to test), 0 where it has none.
    """
    ids, conflict, consistent = _pairs(index)
    rows, skipped = [], {}
    for subset in subsets:
        mine = [i for i in ids if subset_of[i][0] == subset]
        if len(mine) < 2:
            skipped[subset] = len(mine)
            continue
        prompt_rows, labels, groups, lengths, n_evidence = _probe_inputs(index, mine, conflict, consistent)
        probes, info = probe_rows(
            states[prompt_rows], labels, groups, lengths, n_evidence, n_splits=cv_folds, seed=seed
        )
        head = {
            "subset": subset,
            "implicit": subset_of[mine[0]][1],
            "n_pairs": info["n_pairs"],
            "n_folds": info["n_folds"],
        }
        rows += [{**head, **r} for r in probes]
    return rows, skipped


def projection_analysis(states: np.ndarray, index: list[dict]) -> tuple[list[dict], int]:
    """Mean and spread of b_i per (evidence count, layer, position) for one
    type's ``projection`` prompts; and the count of degenerate (zeroed) b_i."""
    by_sample: dict[str, dict[str, int]] = {}
    for r in index:
        by_sample.setdefault(r["sample_id"], {})[r["variant"]] = r["row"]
    samples = sorted(by_sample)
    combined = states[[by_sample[s]["combined"] for s in samples]]
    singles = [states[[by_sample[s][f"single_{i}"] for i in range(1, len(by_sample[s]))]] for s in samples]
    rows_b, skipped = projection_rows(combined, singles)
    groups: dict[tuple, list[float]] = {}
    for r in rows_b:
        groups.setdefault((r["n_evidence"], r["layer"], r["position"]), []).append(r["b"])
    rows = [
        {
            "n_evidence": k,
            "layer": layer,
            "position": pos,
            "n_samples": len(v),
            "mean_b": float(np.mean(v)),
            "std_b": float(np.std(v)),
            "n_degenerate": skipped,
        }
        for (k, layer, pos), v in sorted(groups.items())
    ]
    return rows, skipped

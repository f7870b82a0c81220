"""Inside the model: conflict/consistent pairs, probes, spectral energy and
directional projections (the paper's Section 4 and Appendix D).

All functions take plain arrays: activations ``H`` of shape
(n_prompts, n_layers, d) from :func:`conflictlab.activations.last_token_states`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

# --------------------------------------------------------------------------
# Conflict / consistent pairs (Appendix D.1).

_DATE = re.compile(r"\b(1[5-9]\d{2}|20\d{2}|21\d{2})\b")


@dataclass(frozen=True)
class PairRule:
    """How the consistent counterpart of a sample was made."""

    keep: tuple[int, ...]  # 0-based indices of the evidence kept
    rule: str
    ambiguous: bool


def consistent_counterpart(sample: dict, *, drop_last: int = 1) -> PairRule:
    """The evidence a consistent counterpart keeps, and the rule used.

    - misinformation, inferential/medical_qa: the pieces whose
      ``accuracy_labels`` are true (``labels_true``);
    - inferential folio / entailment_bank: the release does not mark the
      appended conflicting statements, so the last ``drop_last`` pieces are
      dropped (``drop_last_k``); the paper added one or two statements, so a
      pair is *ambiguous* when that many more could also be conflicting,
      i.e. always for ``drop_last=1``, and when fewer than two pieces remain;
    - temporal: the pieces whose latest year equals the latest year in the
      sample (``latest_anchor``); without years, the last piece
      (``fallback_last``, ambiguous);
    - granularity, perspective, ambiguity: the release has no specificity,
      stance or entity labels; the first piece alone (``first_piece``): one
      level, one stance, one entity. Always marked ambiguous for perspective
      and granularity, where a later piece may share the first one's view.
    """
    n = sample["n_evidence"]
    kind, subset = sample["conflict_type"], sample["subset"]
    labels = sample.get("accuracy_labels")
    if kind == "misinformation" or (kind == "inferential" and subset == "medical_qa"):
        if labels and any(labels) and not all(labels):
            return PairRule(tuple(i for i, ok in enumerate(labels) if ok), "labels_true", False)
        return PairRule((0,), "fallback_first", True)
    if kind == "inferential":
        keep = tuple(range(max(1, n - drop_last)))
        return PairRule(keep, f"drop_last_{drop_last}", drop_last < 2 or len(keep) < 2)
    if kind == "temporal":
        years = [max((int(y) for y in _DATE.findall(text)), default=None) for text in sample["evidence"]]
        known = [y for y in years if y is not None]
        if known:
            anchor = max(known)
            keep = tuple(i for i, y in enumerate(years) if y == anchor)
            if len(keep) < n:
                return PairRule(keep, "latest_anchor", False)
        return PairRule((n - 1,), "fallback_last", True)
    return PairRule((0,), "first_piece", kind in ("perspective", "granularity"))


# --------------------------------------------------------------------------
# Probes (Figure 2, Table 8).


def grouped_folds(labels: np.ndarray, groups: np.ndarray, n_splits: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
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
    its default oversampling it can underestimate σ_i and hence ER).
    """
    import torch

    centred = torch.as_tensor(h - h.mean(axis=0, keepdims=True), dtype=torch.float64)
    total = float((centred**2).sum())
    if total == 0.0:
        return float("nan")
    if method == "exact":
        sigma = torch.linalg.svdvals(centred)
    elif method == "lowrank":
        torch.manual_seed(seed)
        _, sigma, _ = torch.svd_lowrank(centred, q=min(k, *centred.shape))
    else:
        raise ValueError(f"unknown SVD method {method!r}; expected 'exact' or 'lowrank'")
    return float((sigma[:k] ** 2).sum() / total)


def delta_er(
    h_conf: np.ndarray,
    h_cons: np.ndarray,
    *,
    k: int = 10,
    method: str = "exact",
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """ΔER = ER(conflict) − ER(consistent) with a paired bootstrap 95% CI
    (pairs resampled together). ``h_conf`` and ``h_cons``: (pairs, d), row i
    of each from the same pair. Returns (ΔER, low, high)."""
    point = energy_ratio(h_conf, k, method=method) - energy_ratio(h_cons, k, method=method)
    rng = np.random.default_rng(seed)
    n = len(h_conf)
    boots = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        boots.append(energy_ratio(h_conf[idx], k, method=method) - energy_ratio(h_cons[idx], k, method=method))
    low, high = np.nanquantile(boots, [0.025, 0.975])
    return point, float(low), float(high)


# --------------------------------------------------------------------------
# Directional projection (Figure 3, Eq. 5).


def directional_bias(c: np.ndarray, a: np.ndarray, eps: float = 1e-8, degenerate: float = 1e-12) -> tuple[np.ndarray, int]:
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


def pair_prompts(tokenizer, samples: list[dict], templates: dict[str, str], *, drop_last: int = 1) -> list[dict]:
    """Two prompts per sample, same template: all evidence (``conflict``) and
    the consistent counterpart's evidence (``consistent``)."""
    from conflictlab.prompts import build_messages, encode_messages

    rows = []
    for sample in samples:
        pair = consistent_counterpart(sample, drop_last=drop_last)
        template = templates[sample["task_family"]]
        kept = [sample["evidence"][i] for i in pair.keep]
        for variant, evidence in (("conflict", sample["evidence"]), ("consistent", kept)):
            _, ids = encode_messages(tokenizer, build_messages(template, sample["question"], evidence))
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "variant": variant,
                    "ids": ids,
                    "n_evidence": len(evidence),
                    "rule": pair.rule,
                    "ambiguous": pair.ambiguous,
                }
            )
    return rows


SINGLE_TEMPLATE = {"reasoning_combined": "reasoning_single", "summarization_simple": "summarization_single",
                   "summarization_neutral": "summarization_single"}


def projection_prompts(tokenizer, samples: list[dict], templates: dict[str, str], *, matched: bool = False) -> list[dict]:
    """Per sample the combined prompt (``combined``) and one single-evidence
    prompt per piece (``single_1`` ...). With ``matched=True`` the combined
    prompt takes the single template's system message, so that a system
    prompt offset cannot explain the projections."""
    from conflictlab.prompts import build_messages, encode_messages, get_template

    rows = []
    for sample in samples:
        combined = templates[sample["task_family"]]
        single = SINGLE_TEMPLATE[combined]
        messages = build_messages(combined, sample["question"], sample["evidence"])
        if matched:
            messages[0] = {"role": "system", "content": get_template(single).system}
        variants = [("combined", messages)] + [
            (f"single_{i + 1}", build_messages(single, sample["question"], [piece])) for i, piece in enumerate(sample["evidence"])
        ]
        for variant, msgs in variants:
            rows.append({"sample_id": sample["sample_id"], "variant": variant, "ids": encode_messages(tokenizer, msgs)[1],
                         "n_evidence": sample["n_evidence"], "rule": "", "ambiguous": False})
    return rows


# --------------------------------------------------------------------------
# Analyses over stored activations.


def probe_rows(h: np.ndarray, labels: np.ndarray, groups: np.ndarray, lengths: np.ndarray, n_evidence: np.ndarray,
               *, n_splits: int = 5, seed: int = 0) -> tuple[list[dict], dict]:
    """Per layer: logistic-probe AUC and difference-of-means AUC; plus the
    length-only baseline (prompt tokens, evidence count) and fold sizes."""
    folds = grouped_folds(labels, groups, n_splits=n_splits, seed=seed)
    baseline = probe_auc(np.column_stack([lengths, n_evidence]).astype(float), labels, folds)
    rows = []
    for layer in range(h.shape[1]):
        x = h[:, layer].astype(np.float64)
        auc, auc_sd = probe_auc(x, labels, folds)
        dom, dom_sd = mean_difference_auc(x, labels, folds)
        rows.append({"layer": layer + 1, "probe_auc": auc, "probe_auc_std": auc_sd,
                     "mean_diff_auc": dom, "mean_diff_auc_std": dom_sd,
                     "length_only_auc": baseline[0], "length_only_auc_std": baseline[1]})
    info = {"n_pairs": int(len(np.unique(groups))), "n_folds": len(folds),
            "test_fold_sizes": [int(len(test)) for _, test in folds]}
    return rows, info


def spectral_rows(h_conf: np.ndarray, h_cons: np.ndarray, *, k: int, method: str, n_resamples: int, seed: int) -> list[dict]:
    """ΔER per layer with its paired bootstrap CI; inputs (pairs, layers, d).

    ``trivial`` marks k >= n − 1 (n pairs): a centred n × d matrix has rank
    at most n − 1, so both ERs are 1 and ΔER is 0 whatever the model does.
    """
    trivial = k >= min(h_conf.shape[0] - 1, h_conf.shape[2])
    rows = []
    for layer in range(h_conf.shape[1]):
        conf, cons = h_conf[:, layer].astype(np.float64), h_cons[:, layer].astype(np.float64)
        point, low, high = delta_er(conf, cons, k=k, method=method, n_resamples=n_resamples, seed=seed)
        rows.append({"layer": layer + 1, "er_conflict": energy_ratio(conf, k, method=method),
                     "er_consistent": energy_ratio(cons, k, method=method), "delta_er": point, "ci_low": low, "ci_high": high,
                     "k": k, "n_pairs": int(h_conf.shape[0]), "trivial": bool(trivial)})
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
                rows.append({"sample": s, "n_evidence": len(a), "layer": layer + 1, "position": i + 1, "b": float(value)})
    return rows, skipped

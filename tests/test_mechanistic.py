import numpy as np
import pytest
import torch

from conflictlab.contextconflict.mechanistic import (
    _GramStatistic,
    _MatrixStatistic,
    delta_er,
    directional_bias,
    energy_ratio,
    grouped_folds,
    mean_difference_auc,
    probe_auc,
)
from conflictlab.contextconflict.pairs import consistent_counterpart
from conflictlab.lm.hidden import hidden_states, last_token_index


def test_last_token_index_left_and_right_padding():
    left = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1]])
    right = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]])
    assert last_token_index(left).tolist() == [3, 3, 3]
    assert last_token_index(right).tolist() == [1, 3, 0]


def test_directional_bias_hand_made():
    a = np.array([[1.0, 0.0], [-1.0, 0.0]])  # μ = 0
    b, skips = directional_bias(np.array([2.0, 0.0]), a)
    assert b == pytest.approx([1.0, -1.0], abs=1e-6) and skips == 0
    b, _ = directional_bias(np.array([0.0, 3.0]), a)  # orthogonal to both
    assert b == pytest.approx([0.0, 0.0])
    three = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    b, _ = directional_bias(three[0] * 2, three)
    # μ = (1,1,1)/3; c − μ = (5,−1,−1)/3, a_1 − μ = (2,−1,−1)/3, a_2 − μ = (−1,2,−1)/3
    assert b == pytest.approx([12 / np.sqrt(27 * 6), -6 / np.sqrt(27 * 6), -6 / np.sqrt(27 * 6)], abs=1e-6)


def test_directional_bias_degenerate_cases_are_counted():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b, skips = directional_bias(a.mean(axis=0), a)  # c == μ
    assert b.tolist() == [0.0, 0.0] and skips == 2
    same = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 5.0]])
    b, skips = directional_bias(np.array([4.0, 4.0]), same)
    # μ = (2/3, 7/3): c − μ = (10/3, 5/3); a_1 − μ = a_2 − μ = (1/3, −4/3); a_3 − μ = (−2/3, 8/3)
    first = (10 / 3 * 1 / 3 - 5 / 3 * 4 / 3) / (np.hypot(10 / 3, 5 / 3) * np.hypot(1 / 3, 4 / 3))
    assert skips == 0 and b == pytest.approx([first, first, -first], abs=1e-6)


def test_energy_ratio_low_rank_vs_isotropic():
    rng = np.random.default_rng(0)
    n, d = 200, 64
    low_rank = rng.normal(size=(n, 3)) @ rng.normal(size=(3, d)) + 0.01 * rng.normal(size=(n, d))
    isotropic = rng.normal(size=(n, d))
    assert energy_ratio(low_rank, k=10) > 0.99
    assert energy_ratio(isotropic, k=10) < 0.35
    point, low, high, p, reason = delta_er(low_rank[:60], isotropic[:60], k=10, n_permutations=99)
    assert (
        point > 0 and 0 < low < point < high and p == pytest.approx(0.01) and reason == ""
    )  # no permutation as extreme
    point, _, high, _, _ = delta_er(isotropic[:60], low_rank[:60], k=10, n_permutations=0)
    assert point < 0 and high < 0


def _simulated_pairs(seed, n, *, same=False):
    """Conflict and consistent rows with known spectra: top-2 energy 10/20 vs 5/15."""
    d = 12
    lam_conflict = np.array([6.0, 4.0] + [1.0] * (d - 2))
    lam_consistent = lam_conflict if same else np.array([3.0, 2.0] + [1.0] * (d - 2))
    rng = np.random.default_rng(seed)
    truth = lam_conflict[:2].sum() / lam_conflict.sum() - lam_consistent[:2].sum() / lam_consistent.sum()
    return rng.normal(size=(n, d)) * np.sqrt(lam_conflict), rng.normal(size=(n, d)) * np.sqrt(lam_consistent), truth


def _numpy_energy_ratios(h, k):
    """ER of each (n, d) matrix in ``h`` (..., n, d), by numpy's SVD (independent of the torch path)."""
    centred = h - h.mean(axis=-2, keepdims=True)
    energy = np.linalg.svd(centred, compute_uv=False) ** 2
    return energy[..., :k].sum(-1) / energy.sum(-1)


def _correlated_pairs(rng, draws, n, lam_conflict, lam_consistent, rho):
    """(draws, n, d) conflict and consistent rows; row i of each shares a
    latent draw (correlation ``rho`` per coordinate), as a pair's two prompts do."""
    shared = rng.normal(size=(draws, n, len(lam_conflict)))
    own = rng.normal(size=shared.shape)
    return shared * np.sqrt(lam_conflict), (rho * shared + np.sqrt(1 - rho**2) * own) * np.sqrt(lam_consistent)


# (n pairs, k, within-pair correlation, same spectrum for both): n >= k + 4 throughout.
_COVERAGE_SETTINGS = [
    (6, 2, 0.0, False),
    (8, 1, 0.5, False),
    (8, 3, 0.0, False),
    (12, 2, 0.5, True),
    (20, 4, 0.0, False),
]


def test_delta_er_interval_covers_the_expected_delta_er_at_its_n():
    # 5 settings x 420 data sets = 2,100. The truth is θ_n = E[ΔER of n pairs]:
    # 0 exactly where both sides share a spectrum, otherwise the mean over
    # 40,000 independent draws (Monte Carlo error about 0.0005, against
    # standard errors of 0.03-0.1). The jackknife interval is conservative
    # (Efron-Stein): 94.5-97.6% per setting here. The old one, centred on the
    # bias-corrected estimate, covered 54-81%.
    d, draws = 8, 420
    pooled = []
    for n, k, rho, same in _COVERAGE_SETTINGS:
        lam_conflict = 5 * 0.6 ** np.arange(d)
        lam_consistent = lam_conflict if same else 5 * 0.8 ** np.arange(d)
        truth = 0.0
        if not same:
            a, b = _correlated_pairs(np.random.default_rng(1), 40_000, n, lam_conflict, lam_consistent, rho)
            truth = float(np.mean(_numpy_energy_ratios(a, k) - _numpy_energy_ratios(b, k)))
        conflict, consistent = _correlated_pairs(np.random.default_rng(2), draws, n, lam_conflict, lam_consistent, rho)
        covered = []
        for a, b in zip(conflict, consistent):
            result = delta_er(a, b, k=k, n_permutations=0)
            assert result.ci_reason == "" and result.ci_low <= result.estimate <= result.ci_high
            covered.append(result.ci_low <= truth <= result.ci_high)
        assert 0.92 <= np.mean(covered) <= 0.99, (n, k, rho, np.mean(covered))
        pooled += covered
    assert len(pooled) >= 2000 and abs(np.mean(pooled) - 0.95) <= 0.03, np.mean(pooled)


def test_delta_er_gives_no_interval_where_the_jackknife_degenerates():
    rng = np.random.default_rng(4)
    d = 16
    # n = 4, k = 2: each leave-one-out matrix (3 rows) has rank 2 = k, so every
    # replicate ΔER is 0 and the old code gave a zero-width interval at 4·ΔER.
    a, b = rng.normal(size=(4, d)) * np.linspace(3, 1, d), rng.normal(size=(4, d))
    result = delta_er(a, b, k=2, n_permutations=20)
    assert abs(result.estimate) > 1e-6 and np.isfinite(result.p)
    assert (
        np.isnan(result.ci_low) and np.isnan(result.ci_high) and result.ci_reason.startswith("rank-deficient: k >= n-2")
    )
    five = delta_er(rng.normal(size=(5, d)), rng.normal(size=(5, d)), k=2, n_permutations=0)
    assert np.isnan(five.ci_low) and five.ci_reason.startswith("n < k+4")
    six = delta_er(rng.normal(size=(6, d)), rng.normal(size=(6, d)), k=2, n_permutations=0)
    assert six.ci_reason == "" and six.ci_low < six.estimate < six.ci_high
    # k >= n - 1: both ERs are 1, ΔER is 0 by construction, no p-value either
    trivial = delta_er(rng.normal(size=(3, d)), rng.normal(size=(3, d)), k=2, n_permutations=20)
    assert abs(trivial.estimate) < 1e-12 and np.isnan(trivial.p) and trivial.ci_reason.startswith("trivial")
    # rows that repeat a rank-2 pattern: the rank bound allows an interval, the data do not
    basis = rng.normal(size=(2, d))
    flat = np.tile(rng.normal(size=(3, 2)) @ basis, (3, 1))  # 9 rows, rank 2 after centring
    degenerate = delta_er(flat, flat[::-1].copy(), k=2, n_permutations=0)
    assert np.isnan(degenerate.ci_low) and degenerate.ci_reason.startswith("degenerate")
    one = delta_er(rng.normal(size=(1, d)), rng.normal(size=(1, d)), k=2, n_permutations=0)
    assert np.isnan(one.estimate) and np.isnan(one.ci_low) and one.ci_reason


def test_delta_er_reports_the_estimate_its_interval_is_centred_on():
    # The old interval was centred on the bias-corrected n·ΔER − (n−1)·mean(ΔER_(i))
    # while ΔER itself was reported, which then lay outside its own interval.
    outside = 0
    for seed in range(10):
        conflict, consistent, _ = _simulated_pairs(seed, 10)
        point, low, high, _, reason = delta_er(conflict, consistent, k=2, n_permutations=0)
        assert reason == "" and (low + high) / 2 == pytest.approx(point, abs=1e-12)
        assert point == pytest.approx(
            _numpy_energy_ratios(conflict, 2) - _numpy_energy_ratios(consistent, 2), abs=1e-10
        )
        outside += not low <= point <= high
    assert outside == 0


def test_delta_er_interval_reason_follows_the_rank_bound():
    from conflictlab.contextconflict.mechanistic import delta_er_interval_reason, delta_er_trivial

    assert [delta_er_trivial(n, 2, 100) for n in (2, 3, 4)] == [True, True, False]
    assert delta_er_trivial(50, 8, 8) and not delta_er_trivial(50, 7, 8)  # rank <= d too
    reasons = {n: delta_er_interval_reason(n, 2, 100).split(":")[0] for n in range(1, 8)}
    assert reasons == {1: "trivial", 2: "trivial", 3: "trivial", 4: "rank-deficient", 5: "n < k+4", 6: "", 7: ""}


def test_delta_er_permutation_p_value_is_calibrated_under_the_null():
    null = [
        delta_er(*_simulated_pairs(seed, 30, same=True)[:2], k=2, n_permutations=49, seed=seed).p for seed in range(60)
    ]
    assert np.mean(np.array(null) <= 0.05) <= 0.15  # about 5% false positives
    effect = [delta_er(*_simulated_pairs(seed, 30)[:2], k=2, n_permutations=49, seed=seed).p for seed in range(10)]
    assert np.median(effect) <= 0.05


def test_lowrank_svd_is_close_to_exact_on_a_decaying_spectrum():
    rng = np.random.default_rng(1)
    h = rng.normal(size=(80, 40)) @ np.diag(np.geomspace(3, 0.01, 40))
    exact, lowrank = energy_ratio(h, k=5), energy_ratio(h, k=5, method="lowrank")
    # the paper's q = k randomised SVD underestimates a slowly decaying spectrum (here by 0.043) ...
    assert 0.5 < exact < 1.0 and exact - 0.06 < lowrank <= exact + 1e-9
    # ... and is exact to 1e-3 when the top k directions stand out
    signal = rng.normal(size=(80, 5)) @ rng.normal(size=(5, 40)) * 3 + 0.05 * rng.normal(size=(80, 40))
    assert energy_ratio(signal, k=5, method="lowrank") == pytest.approx(energy_ratio(signal, k=5), abs=1e-3)


@pytest.mark.parametrize(("n", "d", "k"), [(9, 40, 2), (12, 200, 3)])
def test_the_gram_matrix_path_gives_every_replicate_the_per_matrix_svd_gives(n, d, k):
    """ΔER's jackknife and permutation replicates from the one Gram matrix equal one SVD per matrix,
    on rows with a large common component (as a model's activations have), in blocks smaller than n."""
    rng = np.random.default_rng(n)
    common = 50 * rng.normal(size=d)
    conflict = common + rng.normal(size=(n, d)) * np.linspace(3, 0.5, d)
    consistent = common + rng.normal(size=(n, d))
    gram, matrix = _GramStatistic(conflict, consistent, k), _MatrixStatistic(conflict, consistent, k, "exact")
    gram.block = 4
    swaps = rng.random((30, n)) < 0.5
    assert np.allclose(gram(swaps), matrix(swaps), rtol=0, atol=1e-10)
    assert np.allclose(gram.leave_one_out(), matrix.leave_one_out(), rtol=0, atol=1e-10)


def test_delta_er_takes_one_svd_per_matrix_at_least_as_many_pairs_as_dimensions_and_with_the_lowrank_svd():
    conflict, consistent, _ = _simulated_pairs(3, 30)  # 30 pairs of 12 dimensions: n >= d
    exact = delta_er(conflict, consistent, k=2, n_permutations=19)
    by_hand = _MatrixStatistic(conflict, consistent, 2, "exact")
    assert exact.estimate == pytest.approx(float(by_hand(np.zeros((1, 30), dtype=bool))[0]), abs=1e-12)
    assert exact.ci_reason == "" and exact.ci_low < exact.estimate < exact.ci_high
    rng = np.random.default_rng(2)
    signal = rng.normal(size=(40, 2)) @ rng.normal(size=(2, 60)) * 3 + 0.05 * rng.normal(size=(40, 60))
    isotropic = rng.normal(size=(40, 60))
    lowrank = delta_er(signal, isotropic, k=2, method="lowrank", n_permutations=19)
    reference = delta_er(signal, isotropic, k=2, n_permutations=19)
    assert lowrank.estimate == pytest.approx(reference.estimate, abs=0.05) and lowrank.p == pytest.approx(0.05)


def test_grouped_folds_never_split_a_pair():
    pairs = np.repeat(np.arange(23), 2)
    labels = np.tile([1, 0], 23)
    folds = grouped_folds(labels, pairs, n_splits=5)
    assert len(folds) == 5
    seen = set()
    for train, test in folds:
        assert not set(pairs[train]) & set(pairs[test])
        assert set(labels[test]) == {0, 1}
        seen |= set(test)
    assert seen == set(range(46))


def test_probes_find_a_planted_direction():
    rng = np.random.default_rng(2)
    pairs = np.repeat(np.arange(30), 2)
    labels = np.tile([1, 0], 30)
    x = rng.normal(size=(60, 20))
    x[:, 3] += 3.0 * labels
    folds = grouped_folds(labels, pairs)
    assert probe_auc(x, labels, folds)[0] > 0.9
    assert mean_difference_auc(x, labels, folds)[0] > 0.9
    noise = rng.normal(size=(60, 20))
    assert probe_auc(noise, labels, folds)[0] < 0.8


def _sample(kind, subset, evidence, labels=None):
    return {
        "conflict_type": kind,
        "subset": subset,
        "evidence": evidence,
        "n_evidence": len(evidence),
        "accuracy_labels": labels,
    }


def test_consistent_counterpart_rules():
    assert consistent_counterpart(_sample("misinformation", "sci_data", ["a", "b", "c"], [True, False, True])).keep == (
        0,
        2,
    )
    rule = consistent_counterpart(_sample("inferential", "folio", list("abcde")))
    assert (rule.keep, rule.rule, rule.ambiguous) == ((0, 1, 2, 3), "drop_last_1", True)
    temporal = _sample("temporal", "root", ["[2019-06-02] A", "[2024-09-01] B", "[2021-11-15] C", "[2024-05-30] D"])
    assert consistent_counterpart(temporal).keep == (1, 3)
    assert consistent_counterpart(_sample("temporal", "root", ["no date", "none"])).rule == "fallback_last"
    assert consistent_counterpart(_sample("ambiguity", "root", ["x", "y"])).keep == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("padding_side", ["left", "right"])
def test_one_pass_states_equal_per_layer_hooks(tiny_llama_dir, padding_side):
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")
    model, tokenizer = lm.model, lm.tokenizer
    prompts = [
        tokenizer(t)["input_ids"]
        for t in (
            "Short one.",
            "A noticeably longer prompt, so that padding is needed here.",
            "Mid length prompt text.",
        )
    ]
    got = hidden_states(lm, prompts, batch_size=3, padding_side=padding_side)
    layers = model.model.layers
    assert got.shape == (3, len(layers), model.config.hidden_size)
    for i, prompt in enumerate(prompts):
        captured = {}
        hooks = [
            layer.register_forward_hook(
                lambda mod, inp, out, j=j, captured=captured: captured.__setitem__(
                    j, (out[0] if isinstance(out, tuple) else out)[0, -1]
                )
            )
            for j, layer in enumerate(layers)
        ]
        try:
            with torch.inference_mode():
                model(input_ids=torch.tensor([prompt]))
        finally:
            for h in hooks:
                h.remove()
        expected = torch.stack([captured[j] for j in range(len(layers))]).numpy()
        assert np.allclose(got[i], expected, atol=1e-3), np.abs(got[i] - expected).max()
        # Independent of hooks: output_hidden_states agrees on every layer but
        # the last, which transformers returns after the final norm.
        with torch.inference_mode():
            hidden = model(input_ids=torch.tensor([prompt]), output_hidden_states=True).hidden_states
        recorded = torch.stack([h[0, -1] for h in hidden[1:-1]]).numpy()
        assert np.allclose(got[i][:-1], recorded, atol=1e-3)


@pytest.mark.slow
def test_shared_prompts_are_forwarded_once_and_give_each_set_its_states(tiny_llama_dir):
    from conflictlab.lm.hidden import ExtractionStats, hidden_states_of_sets
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")
    a, b, c = (
        lm.tokenizer(t)["input_ids"]
        for t in ("Shared prompt.", "Only in the first set, and longer.", "Only in the second.")
    )
    stats = ExtractionStats()
    first, second = hidden_states_of_sets(lm, [[a, b], [c, a, a]], batch_size=2, stats=stats)
    assert stats.prompts == 3  # a, b, c: the repeats of a are not forwarded again
    assert first.shape == (2, lm.n_layers, lm.hidden_size) and second.shape == (3, lm.n_layers, lm.hidden_size)
    alone = hidden_states(lm, [a, b, c], batch_size=1)
    for got, want in (
        (first[0], alone[0]),
        (first[1], alone[1]),
        (second[0], alone[2]),
        (second[1], alone[0]),
        (second[2], alone[0]),
    ):
        assert np.allclose(got, want, atol=1e-4), np.abs(got - want).max()


def test_spectral_rows_flag_rank_limited_k():
    from conflictlab.contextconflict.mechanistic import spectral_rows

    rng = np.random.default_rng(3)
    few = rng.normal(size=(6, 2, 16))
    rows = spectral_rows(few, rng.normal(size=(6, 2, 16)), k=10, method="exact", n_resamples=20, seed=0)
    assert all(r["trivial"] for r in rows)
    assert all(abs(r["delta_er"]) < 1e-9 and abs(r["er_conflict"] - 1) < 1e-9 for r in rows)
    assert all(np.isnan(r["ci_low"]) and r["ci_reason"].startswith("trivial") for r in rows)
    rows = spectral_rows(few, rng.normal(size=(6, 2, 16)), k=2, method="exact", n_resamples=20, seed=0)
    assert not any(r["trivial"] for r in rows)
    assert all(
        r["ci_reason"] == "" and r["ci_low"] <= r["delta_er"] <= r["ci_high"] and r["n_pairs"] == 6 for r in rows
    )
    assert all(r["delta_er"] == pytest.approx(r["er_conflict"] - r["er_consistent"]) for r in rows)


def test_spectral_figure_notes_types_without_an_interval():
    import pyarrow as pa

    from conflictlab.contextconflict.figures import spectral_curves
    from conflictlab.contextconflict.mechanistic import spectral_rows

    rng = np.random.default_rng(5)
    rows = []
    for kind, n in (("six", 6), ("four", 4), ("two", 2)):
        rows += [
            {"conflict_type": kind, **r}
            for r in spectral_rows(
                rng.normal(size=(n, 3, 16)), rng.normal(size=(n, 3, 16)), k=2, method="exact", n_resamples=0, seed=0
            )
        ]
    assert {r["conflict_type"]: r["ci_reason"].split(":")[0] for r in rows} == {
        "six": "",
        "four": "rank-deficient",
        "two": "trivial",
    }
    fig = spectral_curves(pa.Table.from_pylist(rows), title="t")
    text = " ".join(t.get_text() for t in fig.axes[0].texts).replace("\n", " ")
    assert "no interval (rank-deficient): four" in text and "not shown, k >= n − 1 (ER ≡ 1): two" in text
    assert fig.axes[0].get_legend_handles_labels()[1] == ["four (n=4)", "six (n=6)"]


def _index(rows):
    return [
        {"sample_id": s, "variant": v, "row": i, "n_prompt_tokens": n, "n_evidence": k, "rule": "r", "ambiguous": False}
        for i, (s, v, n, k) in enumerate(rows)
    ]


def test_pair_analysis_pairs_rows_by_sample_and_counts_table8():
    from conflictlab.contextconflict.mechanistic import pair_analysis

    rng = np.random.default_rng(0)
    ids = [f"t/s/{i}" for i in range(6)]
    # Interleaved and out of order: conflict prompts are longer (10 tokens) than consistent ones (6).
    rows = [(s, "consistent", 6, 1) for s in reversed(ids)] + [(s, "conflict", 10, 2) for s in ids]
    states = rng.normal(size=(len(rows), 2, 8))
    for i, (_, variant, _, _) in enumerate(rows):
        states[i] += 3.0 if variant == "conflict" else 0.0  # separable at every layer
    probes, table8, spectral = pair_analysis(
        states, _index(rows), cv_folds=3, energy_k=1, svd="exact", bootstrap_resamples=20, seed=0
    )
    assert table8["n_pairs"] == 6 and table8["rules"] == "r (6)" and table8["n_folds"] == 3
    assert table8["mean_tokens_conflict"] == 10 and table8["mean_tokens_consistent"] == 6
    assert [r["layer"] for r in probes] == [1, 2] and all(r["probe_auc"] == 1.0 for r in probes)
    assert all(r["length_only_auc"] == 1.0 for r in probes)  # length alone separates them here, and the table says so
    assert [r["n_pairs"] for r in spectral] == [6, 6]
    with pytest.raises(ValueError, match="no consistent"):
        pair_analysis(states[6:], _index(rows[6:]), cv_folds=3, energy_k=1, svd="exact", bootstrap_resamples=20, seed=0)


def test_projection_analysis_groups_b_by_evidence_count_layer_and_position():
    from conflictlab.contextconflict.mechanistic import projection_analysis

    # Sample a: 2 pieces; combined = single_1 exactly, so b_1 = 1 and b_2 = -1 (K = 2: b_1 = -b_2).
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    rows = [("a", "combined", 5, 2), ("a", "single_1", 3, 2), ("a", "single_2", 3, 2)]
    states = np.stack([np.stack([e1, e1]), np.stack([e1, e1]), np.stack([e2, e2])])
    out, skipped = projection_analysis(states, _index(rows))
    assert skipped == 0
    assert [(r["n_evidence"], r["layer"], r["position"]) for r in out] == [(2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2)]
    by_position = {r["position"]: r["mean_b"] for r in out if r["layer"] == 1}
    assert by_position[1] == pytest.approx(-by_position[2]) and by_position[1] > 0


def test_probe_rows_separate_a_planted_layer_from_noise():
    from conflictlab.contextconflict.mechanistic import probe_rows

    rng = np.random.default_rng(0)
    pairs = 20
    labels, groups = np.tile([1, 0], pairs), np.repeat(np.arange(pairs), 2)
    h = rng.normal(size=(2 * pairs, 2, 8))
    h[:, 1, 0] += 4.0 * labels  # layer 2 carries the label along one axis, layer 1 does not
    lengths = rng.integers(100, 200, size=2 * pairs)
    rows, info = probe_rows(h, labels, groups, lengths, np.full(2 * pairs, 3), n_splits=5)
    assert [r["layer"] for r in rows] == [1, 2]
    assert rows[1]["probe_auc"] > 0.95 and rows[1]["mean_diff_auc"] > 0.95
    assert 0.2 < rows[0]["probe_auc"] < 0.8  # chance-level on noise
    assert info == {"n_pairs": pairs, "n_folds": 5, "test_fold_sizes": [8] * 5}


def test_projection_rows_per_sample_layer_and_position():
    from conflictlab.contextconflict.mechanistic import projection_rows

    singles = [
        np.stack([np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[-1.0, 0.0], [0.0, 0.0]])])
    ]  # (K=2, layers=2, d=2)
    combined = np.array([[[2.0, 0.0], [0.0, 0.0]]])  # layer 2: c == μ, degenerate
    rows, skipped = projection_rows(combined, singles)
    assert [(r["layer"], r["position"], round(r["b"], 6)) for r in rows] == [
        (1, 1, 1.0),
        (1, 2, -1.0),
        (2, 1, 0.0),
        (2, 2, 0.0),
    ]
    assert skipped == 2 and all(r["n_evidence"] == 2 and r["sample"] == 0 for r in rows)


def _subset_pairs(rng, spec):
    """States (prompts, 2 layers, 6) and index of pairs per subset: ``spec``
    is subset -> (pairs, shift of the conflict prompts on feature 0, the only
    one that varies)."""
    rows, states = [], []
    for subset, (pairs, shift) in spec.items():
        for p in range(pairs):
            for variant, offset in (("conflict", shift), ("consistent", 0.0)):
                state = np.zeros((2, 6))
                state[:, 0] = offset + rng.normal(scale=0.1, size=2)
                states.append(state)
                rows.append((f"t/{subset}/{p}", variant, 10 if variant == "conflict" else 6, 2))
    return np.array(states), _index(rows)


def test_subset_probes_are_fit_on_each_subsets_pairs_alone():
    from conflictlab.contextconflict.mechanistic import subset_probe_analysis

    rng = np.random.default_rng(0)
    # Opposite directions: pooled, the two subsets would cancel; apart, each separates perfectly.
    states, index = _subset_pairs(rng, {"a": (4, 3.0), "b": (3, -3.0), "c": (1, 3.0)})
    subset_of = {r["sample_id"]: (r["sample_id"].split("/")[1], r["sample_id"].split("/")[1] == "b") for r in index}
    rows, skipped = subset_probe_analysis(states, index, subset_of, ["a", "b", "c", "d"], cv_folds=3, seed=0)
    assert skipped == {"c": 1, "d": 0}  # one pair cannot be cross-validated; d has none
    by = {(r["subset"], r["layer"]): r for r in rows}
    assert sorted(by) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert [(by[s, 1]["n_pairs"], by[s, 1]["n_folds"], by[s, 1]["implicit"]) for s in ("a", "b")] == [
        (4, 3, False),
        (3, 3, True),
    ]
    assert all(r["probe_auc"] == 1.0 and r["mean_diff_auc"] == 1.0 for r in rows)
    pooled = mean_difference_auc(
        states[:, 0], np.array([1, 0] * 8), grouped_folds(np.array([1, 0] * 8), np.repeat(np.arange(8), 2), 3)
    )
    assert pooled[0] < 1.0  # what probing the subsets together would have shown


def test_subset_probe_figure_draws_each_subset_with_its_n_and_names_the_left_out():
    import matplotlib.pyplot as plt
    import pyarrow as pa

    from conflictlab.contextconflict.figures import subset_probe_curves

    rows = [
        {
            "conflict_type": "perspective",
            "subset": s,
            "implicit": s == "allsides",
            "n_pairs": n,
            "n_folds": folds,
            "layer": layer,
            "probe_auc": auc + 0.1 * layer,
            "probe_auc_std": 0.05,
        }
        for s, n, folds, auc in (("perspectrum", 5, 5, 0.6), ("allsides", 3, 3, 0.3))
        for layer in (1, 2)
    ]
    fig = subset_probe_curves(pa.Table.from_pylist(rows), skipped={"inferential": {"folio": 1}}, title="t")
    inferential, perspective = [ax for ax in fig.axes if ax.get_visible()]
    assert inferential.get_title() == "inferential (Figure 20)" and perspective.get_title() == "perspective (Figure 21)"
    assert "folio (n=1)" in inferential.texts[0].get_text()
    lines = {line.get_label(): line for line in perspective.get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == {"perspectrum (explicit, n=5 pairs, 5 folds)", "allsides (implicit, n=3 pairs, 3 folds)"}
    np.testing.assert_allclose(lines["perspectrum (explicit, n=5 pairs, 5 folds)"].get_ydata(), [0.7, 0.8])
    np.testing.assert_allclose(lines["allsides (implicit, n=3 pairs, 3 folds)"].get_ydata(), [0.4, 0.5])
    assert lines["allsides (implicit, n=3 pairs, 3 folds)"].get_linestyle() == "--"
    plt.close(fig)


def test_table8_says_how_each_rule_stands_against_appendix_d1():
    from conflictlab.contextconflict.pairs import appendix_d1

    def index(rules):
        return [
            {"sample_id": str(i), "variant": v, "rule": rule}
            for i, rule in enumerate(rules)
            for v in ("conflict", "consistent")
        ]

    inferential = appendix_d1("inferential", index(["drop_last_1", "labels_true", "drop_last_1"]))
    assert inferential.startswith("drop_last_1: deviates (the appended branch is not marked")
    assert "; labels_true: follows in spirit" in inferential and inferential.count("drop_last_1") == 1
    assert (
        appendix_d1("perspective", index(["first_piece"])) == "first_piece: deviates (no stance labels in the release)"
    )
    assert (
        appendix_d1("granularity", index(["first_piece"]))
        == "first_piece: deviates (no specificity labels in the release)"
    )
    assert appendix_d1("temporal", index(["latest_anchor"])).endswith("follows (one timestamp, the latest)")
    assert appendix_d1("ambiguity", index(["labels_true"])) == "labels_true: not in Appendix D.1"

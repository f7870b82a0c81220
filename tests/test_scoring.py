import numpy as np
import pyarrow as pa
import pytest

from conflictlab.contextconflict.balance import attributions
from conflictlab.contextconflict.dataset import load_released
from conflictlab.contextconflict.scoring import VALUE_SCHEMA, build_game, coalitions
from conflictlab.contextconflict.shapley import exact_shapley
from conflictlab.lm.subsets import SubsetScorer, reference_values

from .conftest import DEMO

RESPONSE = (
    "The sources disagree: some stress the benefits and others the costs, so a balanced answer "
    "weighs evidence on both sides before concluding."
)


class CharTokenizer:
    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": ([1] if add_special_tokens else []) + [ord(c) % 200 + 2 for c in text]}


def test_game_rendering_shares_prefix_and_response_tokens():
    game = build_game(CharTokenizer(), "Q?", ["alpha", "beta", "gamma"], "resp")
    full, only_third = game.sequence(0b111), game.sequence(0b100)
    assert full[: len(game.prefix)] == only_third[: len(game.prefix)] == game.prefix
    assert full[-len(game.response) :] == only_third[-len(game.response) :] == game.response
    assert full.count(1) == 1  # special token exactly once
    # renumbered: the third piece is "[Evidence 1]" when alone, "[Evidence 3]" in the full set
    assert game.piece(2, 1) != game.piece(2, 3)
    kept = build_game(CharTokenizer(), "Q?", ["alpha", "beta", "gamma"], "resp", renumber=False)
    assert kept.piece(2, 1) == kept.piece(2, 3)
    assert game.naive_tokens([0, 0b111]) == len(game.sequence(0)) + len(full)


def test_coalitions_exact_then_sampled():
    masks, perms = coalitions(4, exact_max_n=10, n_permutations=8, seed=0, sample_id="a")
    assert masks == list(range(16)) and perms is None
    masks, perms = coalitions(12, exact_max_n=10, n_permutations=8, seed=0, sample_id="a")
    assert perms.shape == (8, 12) and 0 in masks and (1 << 12) - 1 in masks and len(masks) <= 8 * 12 + 1


def _values_table(values_by_sample, permutations=None):
    rows = []
    for sample_id, (n, values) in values_by_sample.items():
        for mask, value in values.items():
            stored = (permutations or {}).get(sample_id)
            rows.append(
                {
                    "sample_id": sample_id,
                    "response_sha256": "x",
                    "mask": mask,
                    "n_evidence": n,
                    "value": value,
                    "n_response_tokens": 5,
                    "scorer": "s",
                    "permutations": stored.tolist() if stored is not None and mask == 0 else None,
                }
            )
    return pa.Table.from_pylist(rows, schema=VALUE_SCHEMA)


def test_attributions_exact_and_sampled_paths():
    samples = pa.table(
        {"sample_id": ["a/root/1", "a/root/2"], "conflict_type": ["ambiguity"] * 2, "subset": ["root"] * 2}
    )
    w = np.array([0.5, 0.25, 0.25])
    exact = {m: float(sum(w[i] for i in range(3) if m >> i & 1)) for m in range(8)}
    n = 12
    masks, perms = coalitions(n, exact_max_n=10, n_permutations=16, seed=3, sample_id="a/root/2")
    additive = {m: float(bin(m).count("1")) for m in masks}
    table = attributions(
        _values_table({"a/root/1": (3, exact), "a/root/2": (n, additive)}, {"a/root/2": perms}), samples, model="m"
    ).to_pylist()
    first, second = table
    assert first["method"] == "exact" and np.allclose(first["phi"], w) and np.allclose(first["shares"], w)
    # sorted shares .25, .25, .5: (1/n)·Σ(2i-n-1)p_[i] = (−.5 + 0 + 1)/3, times n/(n-1) = 1.5
    assert first["balance"] == pytest.approx(0.25)
    assert second["method"] == "sampled" and np.allclose(second["phi"], 1.0) and second["balance"] == pytest.approx(0.0)


def test_each_sample_draws_its_own_permutations():
    _, first = coalitions(12, exact_max_n=10, n_permutations=8, seed=0, sample_id="a/root/1")
    _, again = coalitions(12, exact_max_n=10, n_permutations=8, seed=0, sample_id="a/root/1")
    _, other = coalitions(12, exact_max_n=10, n_permutations=8, seed=0, sample_id="a/root/2")
    assert (first == again).all() and not (first == other).all()


def test_attributions_use_the_stored_permutations_and_refuse_without_them():
    samples = pa.table({"sample_id": ["a/root/1"], "conflict_type": ["ambiguity"], "subset": ["root"]})
    n = 12
    masks, perms = coalitions(n, exact_max_n=10, n_permutations=4, seed=0, sample_id="a/root/1")
    weights = np.arange(1, n + 1, dtype=float)
    squared = {m: float(sum(weights[i] for i in range(n) if m >> i & 1)) ** 2 for m in masks}
    row = attributions(_values_table({"a/root/1": (n, squared)}, {"a/root/1": perms}), samples, model="m").to_pylist()[
        0
    ]
    expected = np.zeros(n)
    for order in perms:  # the estimate from exactly these orders
        mask = 0
        for i in order:
            expected[i] += squared[mask | 1 << int(i)] - squared[mask]
            mask |= 1 << int(i)
    assert np.allclose(row["phi"], expected / len(perms))
    with pytest.raises(ValueError, match="no stored permutations"):
        attributions(_values_table({"a/root/1": (n, squared)}), samples, model="m")


def test_sampled_shapley_on_a_non_additive_game_covers_the_exact_values():
    from conflictlab.contextconflict.shapley import (
        antithetic_permutations,
        permutation_masks,
        sample_seed,
        sampled_shapley,
    )

    n = 10
    weights = np.linspace(0.2, 2.0, n)
    # concave in the coalition's weight (a squared sum would be exact under
    # antithetic pairs, which leaves nothing to cover)
    game = np.array([np.sqrt(sum(weights[i] for i in range(n) if m >> i & 1)) for m in range(1 << n)])
    exact = exact_shapley(game)
    assert not np.allclose(exact / exact.sum(), weights / weights.sum())  # not proportional: a non-additive game
    covered, errors = [], []
    for sample in range(40):
        perms = antithetic_permutations(n, 32, sample_seed(0, f"s{sample}"))
        phi, se = sampled_shapley({m: float(game[m]) for m in permutation_masks(perms)}, perms)
        covered += list(np.abs(phi - exact) <= 1.96 * se)
        errors.append(np.abs(phi - exact).max())
    assert 0.85 <= np.mean(covered) <= 1.0  # standard errors of about the right size
    assert np.median(errors) < 0.2 * exact.max()  # 32 orders of 10 pieces: about 12% here


@pytest.mark.slow
@pytest.mark.parametrize("model_fixture", ["tiny_llama_dir", "tiny_gemma_dir"])
def test_prefix_sharing_scorer_equals_plain_forward(request, model_fixture):
    import torch

    from conflictlab.lm.loading import load
    from conflictlab.lm.packed_linear import PackedLinear

    # The scorer as the workflow runs it (linear layers packed on CPU)
    # against the paper code's way as it runs (plain transformers model).
    lm = load(request.getfixturevalue(model_fixture), dtype="float32", pack=True)
    model, tokenizer = lm.model, lm.tokenizer
    plain = load(request.getfixturevalue(model_fixture), dtype="float32", pack=False).model
    assert isinstance(model.get_output_embeddings(), PackedLinear)
    torch.manual_seed(0)
    samples = [s for s in load_released(DEMO, "perspective").tables()[0].to_pylist() if s["n_evidence"] >= 4][:1]
    samples += [load_released(DEMO, "ambiguity").tables()[0].to_pylist()[1]]
    for sample in samples:
        game = build_game(tokenizer, sample["question"], sample["evidence"], RESPONSE)
        scorer = SubsetScorer(model, token_budget=600)  # small budget: several chunks per node
        fast = scorer.values(game)
        slow = reference_values(plain, game)
        assert fast.keys() == slow.keys() == set(range(1 << game.n))
        assert max(abs(fast[m] - slow[m]) for m in slow) <= 1e-4
        assert scorer.stats.tokens_forwarded < scorer.stats.naive_tokens
        # Exact Shapley values from either set of values agree too.
        assert np.allclose(
            exact_shapley(np.array([fast[m] for m in range(1 << game.n)])),
            exact_shapley(np.array([slow[m] for m in range(1 << game.n)])),
            atol=1e-4,
        )
        # A sparse request (what permutation sampling asks for) scores only those masks.
        wanted = {0, 0b1, 0b101, (1 << game.n) - 1}
        sparse = SubsetScorer(model).values(game, wanted)
        assert sparse.keys() == wanted and max(abs(sparse[m] - slow[m]) for m in wanted) <= 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("model_fixture", ["tiny_llama_dir", "tiny_gemma_dir"])
def test_shared_context_values_equal_one_game_at_a_time(request, model_fixture):
    """Several responses to one sample (steering variants): pieces forwarded
    once for all of them give each game's own values; sparse requests too;
    games that differ in more than their response are refused."""
    from conflictlab.contextconflict.scoring import score_response_sets
    from conflictlab.lm.loading import load

    lm = load(request.getfixturevalue(model_fixture), dtype="float32")
    sample = [s for s in load_released(DEMO, "perspective").tables()[0].to_pylist() if s["n_evidence"] >= 4][0]
    texts = [RESPONSE, "Both sides have a point.", "The first source is right: it cites the study."]
    games = [build_game(lm.tokenizer, sample["question"], sample["evidence"], t) for t in texts]
    for wanted in (None, {0, 0b1, 0b101, (1 << games[0].n) - 1}):
        shared = SubsetScorer(lm.model, token_budget=600)
        together = shared.values_shared(games, wanted)
        alone = SubsetScorer(lm.model, token_budget=600)
        for game, values in zip(games, together):
            expected = alone.values(game, wanted)
            assert values.keys() == expected.keys()
            assert max(abs(values[m] - expected[m]) for m in expected) <= 1e-4
        assert shared.stats.tokens_forwarded < alone.stats.tokens_forwarded
    other = build_game(lm.tokenizer, sample["question"], sample["evidence"][::-1], RESPONSE)
    with pytest.raises(ValueError, match="differ in more than their response"):
        SubsetScorer(lm.model).values_shared([games[0], other])
    # Per response table: a repeated response is scored once and written to each table.
    rows = [{"sample_id": sample["sample_id"], "response": t, "status": "ok"} for t in (texts[1], texts[1], texts[2])]
    tables = [pa.Table.from_pylist([r]) for r in rows]
    results = score_response_sets(
        SubsetScorer(lm.model), lm.tokenizer, pa.Table.from_pylist([sample]), tables, scorer_name="s"
    )
    assert results[0][0].equals(results[1][0]) and not results[0][0].equals(results[2][0])
    assert results[0][0].num_rows == 1 << games[0].n and not any(skipped for _, skipped in results)


class _Head:
    """The two things token_logprobs reads from a model: its config and LM head."""

    def __init__(self, config, head):
        self.config, self._head = config, head

    def get_output_embeddings(self):
        return self._head


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("cap", [None, 3.0])
def test_token_logprobs_tiles_equal_full_log_softmax(cap, packed):
    import types

    import torch

    from conflictlab.lm.likelihood import token_logprobs
    from conflictlab.lm.packed_linear import PackedLinear

    torch.manual_seed(0)
    head = torch.nn.Linear(16, 1000, bias=True)
    # A packed head brings its own vocabulary blocks (300: not a divisor of 1000).
    model = _Head(types.SimpleNamespace(final_logit_softcapping=cap), PackedLinear(head, 300) if packed else head)
    hidden, targets = torch.randn(37, 16) * 4, torch.randint(0, 1000, (37,))
    with torch.no_grad():
        logits = head(hidden)
        if cap is not None:
            logits = torch.tanh(logits / cap) * cap
        expected = torch.log_softmax(logits, dim=-1)[torch.arange(37), targets]
    # Tiles that divide neither the rows nor the vocabulary, and one tile of everything.
    for rows, vocab in [(5, 96), (64, 4096)]:
        got = token_logprobs(model, hidden, targets, row_tile=rows, vocab_tile=vocab)
        assert got.shape == (37,) and torch.allclose(got, expected, atol=1e-5)


def test_token_logprobs_refuses_unknown_logit_rescaling():
    import types

    import torch

    from conflictlab.lm.likelihood import token_logprobs

    model = _Head(types.SimpleNamespace(logit_scale=0.0625), torch.nn.Linear(4, 10))
    with pytest.raises(ValueError, match="logit_scale"):
        token_logprobs(model, torch.zeros(2, 4), torch.zeros(2, dtype=torch.long))

"""The packed scorer (conflictlab/lm/packed_subsets.py), forced on the CPU:
the code path a GPU takes, against the paper code's way in float32."""

import numpy as np
import pytest

from conflictlab.lm.subsets import Game, SubsetScorer, kv_bytes_per_token, reference_values


def tiny_model(kind: str):
    """A random 3-layer model built from a config (no download): Llama-style, or
    Gemma-3-style with a sliding window of 6 tokens before a global layer and a
    soft-capped head, so that the packed mask's window matters."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    common = dict(
        vocab_size=300,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        initializer_range=0.2,
        max_position_embeddings=512,
    )
    if kind == "llama":
        model = LlamaForCausalLM(LlamaConfig(**common, attn_implementation="sdpa"))
    else:
        config = Gemma3TextConfig(
            **common,
            sliding_window=6,
            layer_types=["sliding_attention"] * 2 + ["full_attention"],
            final_logit_softcapping=5.0,
            attn_implementation="sdpa",
        )
        model = Gemma3ForCausalLM(config)
    return model.float().eval()


def random_game(
    rng, n: int, *, piece_len: tuple[int, int], response_len: int, suffix_len: int = 3, prefix_len: int = 5
) -> Game:
    ids = lambda k: rng.integers(3, 300, size=k).tolist()  # noqa: E731
    # renumbered pieces: each piece has a rendering per rank in its subset
    pieces = [[ids(int(rng.integers(*piece_len))) for _ in range(n)] for _ in range(n)]
    return Game(prefix=[1] + ids(prefix_len), pieces=pieces, suffix=ids(suffix_len), response=ids(response_len))


@pytest.fixture(scope="module", params=["llama", "gemma"])
def model(request):
    return tiny_model(request.param)


@pytest.mark.parametrize("align", [1, 8])
def test_packed_equals_reference_across_games_of_different_n_and_lengths(model, align, monkeypatch):
    from conflictlab.lm import packed_subsets

    # align 8: the GPU's rounding of row widths (padding queries and context slots)
    monkeypatch.setattr(packed_subsets, "ALIGN", {False: align, True: align})
    rng = np.random.default_rng(0)
    games = [
        random_game(rng, 2, piece_len=(3, 9), response_len=7),
        random_game(rng, 4, piece_len=(2, 12), response_len=11),
        random_game(rng, 3, piece_len=(5, 7), response_len=4, suffix_len=0),
    ]  # empty suffix: piece predicts response[0]
    masks = [None, {0, 0b0101, 0b1000, 0b1111}, None]  # a sparse request, as permutation sampling makes
    # narrow rows and a small budget: several units per row, several rows and forwards per level
    scorer = SubsetScorer(model, token_budget=256, mode="packed", row_width=96)
    got = scorer.score([([g], m) for g, m in zip(games, masks)])
    for game, wanted, (values,) in zip(games, masks, got):
        expected = reference_values(model, game, wanted)
        assert values.keys() == expected.keys()
        assert max(abs(values[m] - expected[m]) for m in expected) <= 1e-4
    stats = scorer.stats
    assert stats.tokens_forwarded < stats.naive_tokens  # the shared-prefix saving is kept
    # games of different jobs shared forwards: fewer forwards than levels x jobs
    assert stats.forwards < sum(g.n + 1 for g in games)
    # padding only where a level's last row is short, not per sequence
    assert stats.tokens_padded < 0.5 * stats.tokens_forwarded


def test_packed_shared_responses_and_groups_equal_the_walk(model):
    rng = np.random.default_rng(1)
    base = random_game(rng, 3, piece_len=(3, 8), response_len=6)
    variants = [base] + [
        Game(base.prefix, base.pieces, base.suffix, rng.integers(3, 300, size=k).tolist()) for k in (3, 9)
    ]
    other = random_game(rng, 2, piece_len=(4, 6), response_len=5)
    walk = SubsetScorer(model, mode="walk")
    expected = [walk.values_shared(variants), [walk.values(other)]]
    # A store of two jobs' pieces and of one job's: the jobs in one group, or each in its own
    # (the store rebuilt per group); one too small for either job: both walked.
    from conflictlab.lm.packed_subsets import make_job
    from conflictlab.lm.subsets import _walk_plan

    per_token = kv_bytes_per_token(model)
    stored = [make_job(games, None, _walk_plan).stored_tokens() for games in (variants, [other])]
    for kv_bytes in (per_token * sum(stored), per_token * max(stored), per_token):
        packed = SubsetScorer(model, mode="packed", row_width=64, kv_bytes=kv_bytes)
        got = packed.score([(variants, None), ([other], None)])
        for job_got, job_expected in zip(got, expected):
            for values, ref in zip(job_got, job_expected):
                assert values.keys() == ref.keys() and max(abs(values[m] - ref[m]) for m in ref) <= 1e-4
        # the same tokens as the walk (each piece once for the three responses), in fewer forwards
        assert packed.stats.tokens_forwarded == walk.stats.tokens_forwarded
        assert (packed.stats.forwards < walk.stats.forwards) == (kv_bytes > per_token)
    with pytest.raises(ValueError, match="differ in more than their response"):
        SubsetScorer(model, mode="packed").values_shared([base, other])


def test_modes():
    import torch

    from conflictlab.lm.subsets import resolve_mode

    assert resolve_mode("auto") == "walk" and resolve_mode("walk") == "walk" and resolve_mode("packed") == "packed"
    assert (
        resolve_mode("auto", torch.device("cuda")) == "packed" and resolve_mode("auto", torch.device("cpu")) == "walk"
    )
    with pytest.raises(ValueError, match="mode"):
        resolve_mode("fast")


def test_walk_workers_score_jobs_at_once_with_the_serial_values(model):
    """workers=2 (a CPU's jobs on two single-threaded streams) gives the
    serial walk's values to the bit and the same token counts, restores
    torch's thread count, and re-raises a job's error."""
    import torch

    rng = np.random.default_rng(2)
    base = random_game(rng, 2, piece_len=(3, 8), response_len=5)
    shared = [base, Game(base.prefix, base.pieces, base.suffix, rng.integers(3, 300, size=7).tolist())]
    jobs = [([random_game(rng, n, piece_len=(2, 9), response_len=6)], None) for n in (1, 3, 4, 2)]
    jobs.insert(2, (shared, None))
    jobs.append(([random_game(rng, 3, piece_len=(2, 5), response_len=4)], {0, 0b101}))
    serial = SubsetScorer(model, mode="walk", workers=1)
    parallel = SubsetScorer(model, mode="walk", workers=2)
    threads = torch.get_num_threads()
    assert parallel.score(jobs) == serial.score(jobs)
    assert vars(parallel.stats) == vars(serial.stats) and serial.stats.forwards > len(jobs)
    assert torch.get_num_threads() == threads
    broken = Game(base.prefix, base.pieces, base.suffix, [])
    with pytest.raises(ValueError, match="empty response"):
        parallel.score(jobs + [([broken], None)])
    assert torch.get_num_threads() == threads

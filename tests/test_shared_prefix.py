"""Prompts sharing a prefix: batched together, the prefix forwarded once, the
same greedy tokens as the padded batch (:mod:`conflictlab.lm.shared_prefix`)."""

import pytest
import torch

from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.shared_prefix import shared_prefill, shared_prefix_order, shared_tokens

from . import test_methods

PAD = test_methods.PAD
tiny_lm = test_methods.tiny_lm  # the fixture: a random float64 Llama of 2 layers, hidden size 32

HEAD = [1, 5, 9, 12, 7, 3, 22, 8, 14, 2]  # a shared head (instructions, search results) ...
# ... under several tails, one prompt that is the head itself, one nested deeper, one sharing nothing, one token alone.
PROMPTS = [
    HEAD + [30, 4, 17],
    [1, 17, 17, 2, 26, 11],
    HEAD + [6],
    HEAD,
    HEAD + [30, 4, 25, 25, 33, 10],
    [3],
    HEAD + [11, 35, 14, 2, 19],
]


def test_prompts_sharing_a_prefix_are_neighbours_and_the_rest_longest_first():
    prompts = [[1, 2, 3, 5], [7, 7, 7, 7, 7], [1, 2, 3, 4, 8, 8], [9, 1]]
    # 0 and 2 share three tokens: neighbours, in token order, ahead of the shorter 1; 3 shares nothing and comes last.
    assert shared_prefix_order(prompts, min_shared=3) == [2, 0, 1, 3]
    assert shared_prefix_order(prompts, min_shared=4) == [2, 1, 0, 3]  # sharing too little: longest first
    same_length = [[5, 1], [4, 2], [3, 3]]
    assert shared_prefix_order(same_length, min_shared=1) == [0, 1, 2]  # ties in input order, as batches() has them
    assert shared_tokens([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 9]]) == 3 + 2


def test_shared_prefill_holds_the_padded_batch_keys_and_values(tiny_lm):
    from conflictlab.lm.batching import pad_batch

    cache = shared_prefill(tiny_lm, PROMPTS, min_shared=4, forward_cost=0)
    ids, mask = pad_batch([p[:-1] for p in PROMPTS], PAD, side="left")
    from transformers import DynamicCache

    plain = DynamicCache(config=tiny_lm.model.config)
    with torch.inference_mode():
        tiny_lm.model.get_decoder()(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).masked_fill(mask == 0, 0),
            past_key_values=plain,
            use_cache=True,
        )
    assert cache.get_seq_length() == plain.get_seq_length() == max(len(p) for p in PROMPTS) - 1
    real = mask.bool()[:, None, :, None]
    for shared_layer, plain_layer in zip(cache.layers, plain.layers):
        for got, want in ((shared_layer.keys, plain_layer.keys), (shared_layer.values, plain_layer.values)):
            assert torch.allclose(got * real, want * real, atol=1e-10)
            assert not got.masked_select(~real).any()  # zeros under the padding
    assert shared_prefill(tiny_lm, PROMPTS, min_shared=10_000) is None  # too little shared: the padded batch
    assert shared_prefill(tiny_lm, PROMPTS, min_shared=4, forward_cost=100) is None  # too many forwards for it


def test_a_prefix_tree_is_forwarded_only_where_it_costs_less_than_the_padded_batch():
    from conflictlab.lm.shared_prefix import prefix_tree, prefix_tree_pays

    rows = [[1, 2, 3, 4, 5], [1, 2, 3, 6], [1, 2, 3], [7, 8]]
    nodes, ends_at = prefix_tree(rows)
    # the shared run, each tail on top of it (the third row ends at the shared node), the unrelated row alone
    assert sorted((start, end) for _, start, end, _ in nodes) == [(0, 2), (0, 3), (3, 4), (3, 5)]
    assert [nodes[n][2] for n in ends_at] == [5, 4, 3, 2]
    assert all(parent < index for index, (*_, parent) in enumerate(nodes))  # parents first
    # 4 rows x 5 = 20 padded tokens; the tree forwards 3 + 2 + 1 + 2 = 8 in 4 forwards, then the last column:
    # 12 tokens fewer against 4 forwards more
    assert prefix_tree_pays(rows, min_shared=1, forward_cost=2)
    assert not prefix_tree_pays(rows, min_shared=1, forward_cost=3)
    assert not prefix_tree_pays(rows, min_shared=7, forward_cost=0)  # rows sharing 3 + 3 tokens, less than min_shared


def test_generate_with_shared_prefixes_equals_the_padded_batch_and_one_by_one(tiny_lm):
    params = DecodingParams(max_new_tokens=10)
    shared = HFBackend(tiny_lm, batch_size=4, min_shared=4, forward_cost=0).generate(PROMPTS, params)
    padded = HFBackend(tiny_lm, batch_size=4, min_shared=10_000).generate(PROMPTS, params)
    alone = HFBackend(tiny_lm, batch_size=1).generate(PROMPTS, params)
    assert [c.token_ids for c in shared] == [c.token_ids for c in padded] == [c.token_ids for c in alone]
    assert len({tuple(c.token_ids) for c in shared}) > 3  # the prompts lead to different completions


def test_generate_variants_with_shared_prefixes_equal_the_padded_batch(tiny_lm):
    import numpy as np

    from conflictlab.lm.steering import Steering

    direction = np.random.default_rng(0).normal(size=(2, 32)).astype(np.float64)
    variants = [[None] * len(PROMPTS), [Steering(direction, 4.0, "first_generated")] * len(PROMPTS)]
    params = DecodingParams(max_new_tokens=8)
    shared = HFBackend(tiny_lm, batch_size=4, min_shared=4, forward_cost=0).generate_variants(PROMPTS, variants, params)
    padded = HFBackend(tiny_lm, batch_size=4, min_shared=10_000).generate_variants(PROMPTS, variants, params)
    tokens = [[c.token_ids for c in variant] for variant in shared]
    assert tokens == [[c.token_ids for c in variant] for variant in padded]
    assert tokens[0] != tokens[1]  # the steering changes tokens


def test_option_scores_of_prompts_fed_one_after_another_equal_fresh_ones(tiny_lm):
    import numpy as np

    from conflictlab.lm.choices import option_loglikelihoods
    from conflictlab.lm.shared_prefix import FedTokens

    options = [[30, 4], [30, 6, 6], [11]]
    fed = FedTokens(None, across_requests=True)
    for prompt in sorted(PROMPTS):
        together = option_loglikelihoods(tiny_lm, prompt, options, fed=fed)
        assert np.allclose(together, option_loglikelihoods(tiny_lm, prompt, options), rtol=0, atol=1e-10)
    assert fed.tokens_fed == sum(map(len, PROMPTS)) - shared_tokens(PROMPTS)  # each shared run forwarded once


# A head longer than MIN_SHARED_TOKENS, so that the read-outs' default threshold shares it.
LONG_HEAD = [1] + [(7 * i) % 37 + 2 for i in range(80)]
READ_OUT_PROMPTS = (
    [LONG_HEAD + tail for tail in ([30, 4, 17], [6], [11, 35, 14, 2, 19], [])]
    + [
        [1, 17, 17, 2, 26, 11],  # sharing nothing: left-padded beside the others
        LONG_HEAD[:70] + [3, 3],  # sharing 70 of the head
    ]
)


def _tokens_embedded(lm, read_out):
    """(result of ``read_out()``, how many token positions the model embedded while running it)."""
    seen = []
    handle = lm.model.get_input_embeddings().register_forward_hook(lambda m, i, o: seen.append(i[0].numel()))
    try:
        return read_out(), sum(seen)
    finally:
        handle.remove()


def test_choice_read_outs_forward_a_shared_prefix_once_and_equal_one_by_one(tiny_lm):
    import numpy as np

    from conflictlab.lm.choices import choice_logits, choice_logits_under

    options = [5, 6, 7]
    together, embedded = _tokens_embedded(tiny_lm, lambda: choice_logits(tiny_lm, READ_OUT_PROMPTS, options))
    alone = np.concatenate([choice_logits(tiny_lm, [p], options, batch_size=1) for p in READ_OUT_PROMPTS])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-5)  # choice_logits reads float32 logits
    assert len({tuple(np.round(row, 4)) for row in alone}) == len(READ_OUT_PROMPTS)  # the prompts read differently
    # Batch order puts the four long prompts and the one sharing 70 tokens in one batch of 8: each position of
    # their prefix tree is forwarded once, then each row's last token; the unrelated prompt rides in the same batch.
    heads = [p[:-1] for p in READ_OUT_PROMPTS]
    assert embedded == sum(map(len, heads)) - shared_tokens(heads) + len(READ_OUT_PROMPTS)
    greedy, cad = choice_logits_under(
        tiny_lm, READ_OUT_PROMPTS, [p[-3:] for p in READ_OUT_PROMPTS], options, ["greedy", "cad-a1"]
    )
    np.testing.assert_allclose(greedy, alone, rtol=0, atol=1e-5)
    assert not np.allclose(cad, greedy)


@pytest.mark.parametrize("window, shared", [(128, True), (64, False)])
def test_a_sliding_window_model_shares_prefixes_only_while_every_row_fits_its_window(tiny_lm, window, shared):
    """Gemma 3's local layers keep a window of positions: rows within it leave those layers the whole
    prefix, so the tree's read-out equals one prompt at a time; longer rows take the padded batch."""
    import dataclasses

    import numpy as np
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from conflictlab.lm.choices import choice_logits

    config = Gemma3TextConfig(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        sliding_window=window,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=256,
        pad_token_id=PAD,
    )
    torch.manual_seed(0)
    gemma = dataclasses.replace(tiny_lm, model=Gemma3ForCausalLM(config).to(torch.float64).eval())
    options = [5, 6, 7]
    together, embedded = _tokens_embedded(gemma, lambda: choice_logits(gemma, READ_OUT_PROMPTS, options))
    alone = np.concatenate([choice_logits(gemma, [p], options, batch_size=1) for p in READ_OUT_PROMPTS])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-5)
    heads = [p[:-1] for p in READ_OUT_PROMPTS]
    padded = len(READ_OUT_PROMPTS) * max(map(len, READ_OUT_PROMPTS))
    assert embedded == (sum(map(len, heads)) - shared_tokens(heads) + len(READ_OUT_PROMPTS) if shared else padded)

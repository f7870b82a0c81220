import pytest
import torch

from conflictlab.lm.packed_linear import (
    FewRowsPackedLinear,
    PackedLinear,
    can_pack,
    pack_few_row_calls,
    pack_linear_layers,
)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("block", [None, 300])
def test_packed_linear_equals_linear(bias, block):
    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 1000, bias=bias)
    packed = PackedLinear(linear, block)
    x = torch.randn(2, 7, 48)
    with torch.inference_mode():
        expected, got = linear(x), packed(x)
        blocks = list(packed.block_outputs(x[0]))
    assert got.shape == (2, 7, 1000) and torch.allclose(got, expected, rtol=1e-5, atol=1e-5)
    starts = [0] if block is None else [0, 300, 600, 900]
    assert [s for s, _ in blocks] == starts
    assert [y.shape[1] for _, y in blocks] == ([1000] if block is None else [300, 300, 300, 100])
    assert torch.allclose(torch.cat([y for _, y in blocks], dim=1), expected[0], rtol=1e-5, atol=1e-5)


def _tiny_llama(dtype):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=500,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config).to(dtype).eval()


def test_pack_linear_layers_replaces_every_linear_and_keeps_the_outputs():
    model = _tiny_llama(torch.float32)
    linears = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    ids = torch.randint(0, 500, (2, 9))
    with torch.inference_mode():
        before = model(ids).logits
    assert pack_linear_layers(model, head_block=128) == linears == 2 * 7 + 1
    assert not any(isinstance(m, torch.nn.Linear) for m in model.modules())
    assert len(model.get_output_embeddings().blocks) == 4  # 500 vocabulary rows in blocks of 128
    with torch.inference_mode():
        after = model(ids).logits
    assert torch.allclose(after, before, rtol=1e-5, atol=1e-5)
    # The tied input embedding stays a dense parameter.
    assert model.get_input_embeddings().weight.layout == torch.strided


def test_pack_linear_layers_leaves_other_precisions_alone():
    model = _tiny_llama(torch.bfloat16)
    assert not can_pack(model)
    assert pack_linear_layers(model) == 0
    assert isinstance(model.get_output_embeddings(), torch.nn.Linear)


@pytest.mark.parametrize("bias", [False, True])
def test_few_rows_packed_linear_packs_for_few_rows_only_and_keeps_the_outputs(bias):
    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 300, bias=bias)
    layer = FewRowsPackedLinear(linear, max_rows=6)
    assert layer.weight is linear.weight and layer.bias is linear.bias
    many, few, one = torch.randn(2, 4, 48), torch.randn(2, 3, 48), torch.randn(1, 1, 48)  # 8 rows, 6, 1
    with torch.inference_mode():
        assert torch.equal(layer(many), linear(many))  # the dense kernel itself
        assert torch.equal(layer(one), linear(one))  # MKL's matrix-vector product
    assert layer.packed_weight is None
    with torch.inference_mode():
        got, expected = layer(few), linear(few)
    assert layer.packed_weight is not None and not layer.packed_weight.is_inference()
    assert got.shape == (2, 3, 300) and torch.allclose(got, expected, rtol=1e-5, atol=1e-5)
    with torch.no_grad():  # the copy made under inference_mode serves no_grad calls too
        assert torch.allclose(layer(few), expected, rtol=1e-5, atol=1e-5)


def test_few_rows_packed_linear_keeps_gradients():
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 8)
    layer = FewRowsPackedLinear(linear, max_rows=4)
    x = torch.randn(2, 16, requires_grad=True)
    layer(x).sum().backward()  # two rows, but with gradients on: the dense kernel, which has a backward
    assert x.grad is not None and linear.weight.grad is not None and layer.packed_weight is None


def test_pack_few_row_calls_replaces_every_linear_and_keeps_the_outputs():
    model = _tiny_llama(torch.float32)
    linears = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    embedding = model.get_input_embeddings().weight
    ids = torch.randint(0, 500, (2, 9))
    with torch.inference_mode():
        before_long, before_step = model(ids).logits, model(ids[:, :1]).logits  # 18 rows, 2 rows
    assert pack_few_row_calls(model, max_rows=4) == linears == 2 * 7 + 1
    assert all(type(m) is not torch.nn.Linear for m in model.modules())
    assert model.get_output_embeddings().weight is embedding  # still tied
    with torch.inference_mode():
        after_long, after_step = model(ids).logits, model(ids[:, :1]).logits
    assert torch.equal(after_long, before_long)  # 18 rows: MKL's kernel as before
    assert torch.allclose(after_step, before_step, rtol=1e-5, atol=1e-5)  # 2 rows: oneDNN's
    assert model.get_output_embeddings().packed_weight is not None
    assert pack_few_row_calls(_tiny_llama(torch.bfloat16)) == 0

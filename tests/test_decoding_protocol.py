"""One decoding protocol for the baseline and every method (issue 50, item 8):
the model's own generation_config is not consulted, the contrastive loop at
α = 0 is greedy ``generate`` token for token, and a left-padded read-out
gives each row the logits it has alone."""

import json

import pytest
import torch

from conflictlab.lm.choices import _last_position_logits
from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import LoadedModel, load, plain_generation_config
from conflictlab.lm.methods import cad_logits


def cad_at_zero(with_context, without_context):
    return cad_logits(with_context, without_context, 0.0)


def test_plain_generation_config_keeps_only_the_special_tokens():
    from transformers import GenerationConfig

    own = GenerationConfig(
        bos_token_id=1,
        eos_token_id=[2, 3],
        pad_token_id=0,
        repetition_penalty=1.05,
        temperature=0.7,
        top_p=0.8,
        top_k=20,
        do_sample=True,
    )
    plain, dropped = plain_generation_config(own)
    assert (plain.bos_token_id, plain.eos_token_id, plain.pad_token_id) == (1, [2, 3], 0)
    assert set(plain.to_diff_dict()) - {"transformers_version"} == {"bos_token_id", "eos_token_id", "pad_token_id"}
    assert dropped == {"do_sample": True, "temperature": 0.7, "top_p": 0.8, "top_k": 20, "repetition_penalty": 1.05}


def test_decoding_params_refuse_a_penalty_that_is_not_positive():
    with pytest.raises(ValueError, match="repetition_penalty must be > 0"):
        DecodingParams(repetition_penalty=0.0)


@pytest.fixture(scope="module")
def penalised_smollm2(smollm2_dir, tmp_path_factory):
    """SmolLM2 whose generation_config asks for a repetition penalty of 1.3, as
    Qwen2.5's asks for 1.05: every file linked, the generation config rewritten."""
    folder = tmp_path_factory.mktemp("penalised")
    for path in smollm2_dir.iterdir():
        if path.name != "generation_config.json":
            (folder / path.name).symlink_to(path)
    own = json.loads((smollm2_dir / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(json.dumps({**own, "repetition_penalty": 1.3}))
    return folder


PROMPTS_TEXT = ["The capital of France is", "List three colours, then list them again:", "1, 2, 3, 1, 2, 3, 1,"]


def test_baseline_and_the_method_loop_at_zero_decode_alike(penalised_smollm2):
    lm = load(penalised_smollm2, dtype="float32", device="cpu")
    assert lm.model.generation_config.repetition_penalty in (None, 1.0)  # the model's 1.3 is not used
    prompts = [lm.tokenizer(text)["input_ids"] for text in PROMPTS_TEXT]
    backend = HFBackend(lm, batch_size=8)
    greedy = {}
    for penalty in (1.0, 1.3):
        params = DecodingParams(max_new_tokens=12, repetition_penalty=penalty)
        greedy[penalty] = [c.token_ids for c in backend.generate(prompts, params)]
        looped = backend.generate_contrastive(prompts, prompts, params, cad_at_zero)
        assert [c.token_ids for c in looped] == greedy[penalty], penalty
    assert greedy[1.0] != greedy[1.3]  # the penalty, when a config asks for it, changes the output


def test_a_left_padded_read_out_equals_each_prompt_alone():
    """GPT-2's absolute position embeddings shift a padded row unless its
    positions count from its first real token."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=40, n_positions=64, n_embd=32, n_layer=2, n_head=4, pad_token_id=0)
    model = GPT2LMHeadModel(config).to(torch.float64).eval()
    lm = LoadedModel(model, None, "tiny-gpt2", "cpu", "float64", 0, frozenset({39}), False)
    prompts = [[5, 9, 12, 7, 3, 22, 8], [30, 4], [17, 17, 2, 26]]
    batched = _last_position_logits(lm, prompts)
    for row, prompt in zip(batched, prompts):
        with torch.inference_mode():
            alone = model(input_ids=torch.tensor([prompt])).logits[0, -1]
        assert torch.allclose(row, alone, rtol=0, atol=1e-10)
    # without the positions the padded rows read something else: the check has teeth
    with torch.inference_mode():
        ids = torch.tensor([[0] * 5 + [30, 4]])
        unpositioned = model(input_ids=ids, attention_mask=(ids != 0).long()).logits[0, -1]
    assert not torch.allclose(unpositioned, batched[1], atol=1e-6)

"""The model layer on an encoder-decoder model (FLAN-T5's architecture): a tiny random T5 built here, no download.

The prompt goes to the encoder, the continuation is generated or scored by the decoder; CAD's two passes are two
encoder inputs whose decoders step together. Each operation is checked against a direct computation with the
transformers model: full forwards without cache, one prompt at a time.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from conflictlab.lm.contrastive_likelihood import continuation_logprobs_under  # noqa: E402
from conflictlab.lm.generation import DecodingParams, HFBackend  # noqa: E402
from conflictlab.lm.loading import DecoderOnlyOperation, load  # noqa: E402
from conflictlab.lm.methods import cad_logits  # noqa: E402

WORDS = "the heart grows fonder absence makes write a quote that ends in word heavy light . : quickly slow".split()
PAD, EOS, UNK = 0, 1, 2

# Three prompts of different lengths (padding differs with the batch) and their context-free versions.
PROMPTS = ["write a quote that ends in the word heavy : absence makes the heart grows", "the heart", "a quote : slow"]
FREE = ["absence makes the heart grows", "heart", "slow"]


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory):
    """A random T5 (d_model 32, two layers each side) with a word-level tokenizer over :data:`WORDS`."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    folder = tmp_path_factory.mktemp("tiny-t5")
    vocab = {"<pad>": PAD, "</s>": EOS, "<unk>": UNK, **{w: i + 3 for i, w in enumerate(dict.fromkeys(WORDS))}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # T5's encoder input ends with </s>, as its own tokenizer writes it.
    backend.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=len(vocab),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        pad_token_id=PAD,
        eos_token_id=EOS,
        decoder_start_token_id=PAD,
    )
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def t5(t5_dir):
    return load(t5_dir, dtype="float32", device="cpu")


def encode(lm, texts):
    return [lm.tokenizer(text)["input_ids"] for text in texts]


def direct_logits(lm, prompt, decoded):
    """The decoder's next-token logits after ``decoded`` (tokens past the start token), prompt alone, no cache."""
    with torch.inference_mode():
        return lm.model(
            input_ids=torch.tensor([prompt]), decoder_input_ids=torch.tensor([[lm.decoder_start_id, *decoded]])
        ).logits[0]


def test_load_takes_the_seq2seq_class(t5):
    assert t5.is_encoder_decoder and t5.decoder_start_id == PAD
    assert type(t5.model).__name__ == "T5ForConditionalGeneration"
    assert t5.eos_ids == frozenset({EOS})


def test_greedy_generation_is_the_decoders_argmax(t5):
    prompts = encode(t5, PROMPTS)
    completions = HFBackend(t5, batch_size=3).generate(prompts, DecodingParams(max_new_tokens=5))
    for prompt, completion in zip(prompts, completions):
        tokens = []
        for _ in range(5):
            token = int(direct_logits(t5, prompt, tokens)[-1].argmax())
            if token == EOS:
                break
            tokens.append(token)
        assert completion.token_ids == tokens
        assert completion.finish_reason == ("stop" if len(tokens) < 5 else "length")


def test_cad_at_alpha_zero_is_greedy(t5):
    prompts, free = encode(t5, PROMPTS), encode(t5, FREE)
    backend, params = HFBackend(t5, batch_size=6), DecodingParams(max_new_tokens=6)
    greedy = backend.generate(prompts, params)
    at_zero = backend.generate_contrastive(prompts, free, params, lambda c, f: cad_logits(c, f, 0.0))
    assert [c.token_ids for c in at_zero] == [c.token_ids for c in greedy]


def test_cad_step_is_the_formula_on_the_two_passes(t5):
    """Every CAD (α = 1) token is the argmax of 2 ℓ(y | c, x, y<t) − ℓ(y | x, y<t), each pass a full forward of
    its own encoder input; and the logits the loop hands the contrast are those two passes'."""
    prompts, free = encode(t5, PROMPTS), encode(t5, FREE)
    seen = []

    def contrast(with_context, without_context):
        seen.append((with_context.clone(), without_context.clone()))
        return cad_logits(with_context, without_context, 1.0)

    completions = HFBackend(t5, batch_size=6).generate_contrastive(
        prompts, free, DecodingParams(max_new_tokens=4), "cad-a1"
    )
    first = HFBackend(t5, batch_size=6).generate_contrastive(prompts, free, DecodingParams(max_new_tokens=1), contrast)
    for i, (prompt, context_free, completion) in enumerate(zip(prompts, free, completions)):
        # The batch holds the pairs longest first: pair i's row is the one whose two passes match its own.
        with_context, without_context = direct_logits(t5, prompt, [])[-1], direct_logits(t5, context_free, [])[-1]
        assert any(
            torch.allclose(c, with_context, atol=1e-5) and torch.allclose(f, without_context, atol=1e-5)
            for c, f in zip(*seen[0])
        )
        assert len(completion.token_ids) >= 1 and completion.token_ids[:1] == first[i].token_ids
        for t, token in enumerate(completion.token_ids):
            decoded = completion.token_ids[:t]
            expected = 2 * direct_logits(t5, prompt, decoded)[-1] - direct_logits(t5, context_free, decoded)[-1]
            assert token == int(expected.argmax())


def test_class_loglikelihood_is_the_sum_of_decoder_token_logprobs(t5):
    prompts, free = encode(t5, PROMPTS), encode(t5, FREE)
    classes = [[t5.tokenizer(c, add_special_tokens=False)["input_ids"] for c in ("heavy .", "fonder")]] * 3
    greedy, cad = continuation_logprobs_under(t5, prompts, free, classes, ["greedy", "cad-a1"], batch_size=3)
    for i, (prompt, context_free) in enumerate(zip(prompts, free)):
        for k, candidate in enumerate(classes[i]):
            with_context = direct_logits(t5, prompt, candidate[:-1]).double()
            without_context = direct_logits(t5, context_free, candidate[:-1]).double()
            rows = range(len(candidate))
            by_hand = sum(float(torch.log_softmax(with_context[t], -1)[candidate[t]]) for t in rows)
            contrasted = 2 * with_context - without_context
            by_hand_cad = sum(float(torch.log_softmax(contrasted[t], -1)[candidate[t]]) for t in rows)
            assert len(greedy[i][k]) == len(candidate)
            assert greedy[i][k].sum() == pytest.approx(by_hand, abs=1e-4)
            assert cad[i][k].sum() == pytest.approx(by_hand_cad, abs=1e-4)


def test_batching_and_padding_change_nothing(t5):
    prompts, free = encode(t5, PROMPTS), encode(t5, FREE)
    params = DecodingParams(max_new_tokens=5)
    classes = [[t5.tokenizer(c, add_special_tokens=False)["input_ids"] for c in ("heavy .", "light")]] * 3
    results = {}
    for size in (1, 3):
        backend = HFBackend(t5, batch_size=size)
        pairs = HFBackend(t5, batch_size=2 * size)  # a contrastive batch of k pairs holds 2k rows
        results[size] = (
            [c.token_ids for c in backend.generate(prompts, params)],
            [c.token_ids for c in pairs.generate_contrastive(prompts, free, params, "cad-a1")],
            continuation_logprobs_under(t5, prompts, free, classes, ["greedy", "cad-a1"], batch_size=size),
        )
    assert results[1][:2] == results[3][:2]
    for alone, batched in zip(results[1][2], results[3][2]):
        for one, many in zip(alone, batched):
            for a, b in zip(one, many):
                assert a == pytest.approx(b, abs=1e-5)


def test_memotrap_scores_a_seq2seq_model(t5):
    from conflictlab.memotrap.dataset import ITEM_SCHEMA
    from conflictlab.memotrap.scoring import score

    items = pa.Table.from_pylist(
        [
            {
                "item_id": f"i{n}",
                "file": "1-proverb-ending",
                "row": n,
                "prompt": prompt,
                "context": "write a quote that ends in the word heavy :",
                "query": query,
                "classes": ["heavy .", "fonder ."],
                "answer_index": 0,
            }
            for n, (prompt, query) in enumerate(zip(PROMPTS, FREE))
        ],
        schema=ITEM_SCHEMA,
    )
    table, alone = score(t5, items, ["cad-a1"], model="tiny-t5", batch_size=4)
    assert alone == 0  # the decoder reads each class apart from the prompt: not counted as a fallback
    assert table.column("method").to_pylist() == ["greedy"] * 3 + ["cad-a1"] * 3
    greedy = HFBackend(t5).generate(encode(t5, PROMPTS), DecodingParams(max_new_tokens=2))
    assert table.column("generated").to_pylist()[:3] == [c.text for c in greedy]
    assert table.column("tokens").to_pylist() == [[2, 2]] * 6


def test_decoder_only_operations_refuse_it(t5):
    import numpy as np

    from conflictlab.lm.choices import choice_logits
    from conflictlab.lm.hidden import hidden_states
    from conflictlab.lm.likelihood import loglikelihoods
    from conflictlab.lm.steering import SCHEDULES, Steering
    from conflictlab.lm.subsets import SubsetScorer

    prompts = encode(t5, PROMPTS[:1])
    refusals = [
        lambda: hidden_states(t5, prompts),
        lambda: loglikelihoods(t5, prompts, [[3]]),
        lambda: choice_logits(t5, prompts, [3, 4]),
        lambda: SubsetScorer(t5.model),
        lambda: HFBackend(t5, steering=Steering(np.zeros((2, 32)), 1.0, SCHEDULES[0])),
    ]
    for refuse in refusals:
        with pytest.raises(DecoderOnlyOperation, match="encoder-decoder model"):
            refuse()


def test_nq_swap_answers_with_a_seq2seq_model(t5):
    """NQ-Swap's answering job on the T5: every run answers, CAD's run is the contrast of the substituted-context
    prompt with the closed-book one, and a steered run is refused."""
    from pathlib import Path

    from conflictlab.nq_swap.dataset import build_items, read_local
    from conflictlab.nq_swap.generation import answer_items, run_names
    from conflictlab.nq_swap.prompts import closed_book_prompt, context_prompt

    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "nq_swap" / "dev.jsonl"
    items = build_items(read_local(demo), source="demo", on_error="fail", max_items=3, seed=0).items
    params, backend = DecodingParams(max_new_tokens=3), HFBackend(t5, batch_size=4)
    common = dict(model="tiny-t5", methods=["cad-a1"], params=params, limit=512, original_methods=["cad-a1"])
    rows = answer_items(t5, backend, items, steering=None, **common).to_pylist()
    assert [r["run"] for r in rows] == [run for run in run_names(["cad-a1"], None, ["cad-a1"]) for _ in items]
    substituted = encode(t5, [context_prompt(item["sub_context"], item["question"]) for item in items])
    closed = encode(t5, [closed_book_prompt(item["question"]) for item in items])
    cad = backend.generate_contrastive(substituted, closed, params, "cad-a1")
    assert [r["text"] for r in rows if r["run"] == "cad-a1"] == [c.text for c in cad]
    steering = {"alpha": 8.0, "layers": None, "schedule": "all_tokens", "folds": 2, "seed": 0, "batch_size": 4}
    with pytest.raises(DecoderOnlyOperation):
        answer_items(t5, backend, items, steering=steering, **common)


def test_prepare_model_writes_a_seq2seq_folder_and_checks_the_configs_mark(t5_dir, tmp_path):
    from conflictlab.lm.registry import check_encoder_decoder, prepare_model

    manifest = prepare_model("tiny-t5", f"path:{t5_dir}", tmp_path / "tiny-t5", dtype="float32")
    assert manifest["architecture"] == "T5ForConditionalGeneration" and manifest["num_hidden_layers"] == 2
    assert load(tmp_path / "tiny-t5", dtype="float32", device="cpu").is_encoder_decoder
    check_encoder_decoder("tiny-t5", tmp_path / "tiny-t5", True)
    with pytest.raises(ValueError, match="set models.tiny-t5.encoder_decoder: true"):
        check_encoder_decoder("tiny-t5", tmp_path / "tiny-t5", False)

"""GPT-OSS's harmony output: only the final channel is the response."""

import pytest

from conflictlab.lm.channels import HarmonyTokens, final_message, separate_final_channel, split_channels

# A toy vocabulary: the five markers, the word "final", and text tokens.
VOCAB = {
    "<|channel|>": 1,
    "<|message|>": 2,
    "<|end|>": 3,
    "<|return|>": 4,
    "<|start|>": 5,
    "final": 6,
    "analysis": 7,
    "assistant": 8,
    "We": 9,
    "think": 10,
    "Paris": 11,
    ".": 12,
    "commentary": 13,
}
WORDS = {i: w for w, i in VOCAB.items()}
TOKENS = HarmonyTokens(channel=1, message=2, end=3, return_=4, start=5, final=(6,))


def render(text: str) -> list[int]:
    """A rendered harmony completion (markers without spaces) -> ids."""
    for marker in ("<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|start|>"):
        text = text.replace(marker, f" {marker} ")
    return [VOCAB[w] for w in text.split()]


def decode(ids):
    return " ".join(WORDS[i] for i in ids if i > 5)


def test_final_channel_after_an_analysis():
    ids = render(
        "<|channel|>analysis<|message|>We think<|end|><|start|>assistant<|channel|>final<|message|>Paris .<|return|>"
    )
    parts = split_channels(ids, TOKENS)
    assert decode(parts.final_ids) == "Paris ." and decode(parts.other_ids) == "analysis We think assistant"


def test_the_last_final_channel_wins_and_end_also_closes_it():
    ids = render(
        "<|channel|>final<|message|>We<|end|><|start|>assistant<|channel|>commentary<|message|>think<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Paris<|end|>"
    )
    assert decode(split_channels(ids, TOKENS).final_ids) == "Paris"


def test_a_completion_cut_inside_the_analysis_has_no_response():
    ids = render("<|channel|>analysis<|message|>We think")
    rows = separate_final_channel(
        [{"response": "analysisWe think", "response_token_ids": ids, "status": "ok", "message": None}], TOKENS, decode
    )
    assert (
        rows[0]["status"] == "no_final_channel"
        and rows[0]["response"] is None
        and rows[0]["reasoning"] == "analysis We think"
    )
    ok = separate_final_channel(
        [
            {
                "response": "x",
                "response_token_ids": render("<|channel|>final<|message|>Paris<|return|>"),
                "status": "ok",
                "message": None,
            }
        ],
        TOKENS,
        decode,
    )
    assert (ok[0]["response"], ok[0]["response_token_ids"], ok[0]["status"]) == ("Paris", [11], "ok")


def test_one_split_gives_text_ids_and_reasoning_for_every_task():
    ids = render(
        "<|channel|>analysis<|message|>We think<|end|><|start|>assistant<|channel|>final<|message|>Paris .<|return|>"
    )
    assert final_message(ids, TOKENS, decode) == ("Paris .", [11, 12], "analysis We think assistant")
    assert final_message(render("<|channel|>analysis<|message|>We"), TOKENS, decode) == (None, None, "analysis We")
    # CONFLICTS splits its replies with the very function ContextConflict's rows go through
    from conflictlab.conflicts import responses
    from conflictlab.lm import channels

    assert responses.final_message is channels.final_message


def test_models_without_markers_are_left_alone():
    class Plain:
        def get_vocab(self):
            return {"a": 0}

    assert HarmonyTokens.of(Plain()) is None


@pytest.mark.slow
def test_harmony_tokens_found_in_a_tokenizer_with_the_markers(smollm2_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    assert HarmonyTokens.of(tokenizer) is None  # SmolLM2 answers directly
    tokenizer.add_special_tokens(
        {"additional_special_tokens": ["<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|start|>"]}
    )
    tokens = HarmonyTokens.of(tokenizer)
    rendered = (
        "<|channel|>analysis<|message|>The capital is "
        "Paris.<|end|><|start|>assistant<|channel|>final<|message|>Paris<|return|>"
    )
    ids = tokenizer(rendered, add_special_tokens=False)["input_ids"]
    parts = split_channels(ids, tokens)
    assert tokenizer.decode(parts.final_ids, skip_special_tokens=True).strip() == "Paris"
    assert "The capital is Paris." in tokenizer.decode(parts.other_ids, skip_special_tokens=True)

import pytest

from conflictlab.contextconflict.prompts import TEMPLATES, build_messages, encode_messages, evidence_text


def test_paper_templates_verbatim():
    assert TEMPLATES["summarization_simple"].system == (
        "You are a helpful assistant that answers questions based on provided evidence. Answer concisely in 2–3 "
        "sentences."
    )
    assert TEMPLATES["summarization_neutral"].system == (
        "You are a neutral information synthesis assistant. Analyze all sources with equal importance and "
        "provide unbiased, balanced answers."
    )
    assert (
        TEMPLATES["reasoning_single"].system
        == TEMPLATES["reasoning_combined"].system
        == ("You are a helpful assistant that provides step-by-step reasoning.")
    )
    messages = build_messages("reasoning_combined", "Who?", ["a", "b"])
    assert messages[1]["content"] == (
        "[Evidence 1]: a\n[Evidence 2]: b\n[Question]: Who?\nAnalyze all evidence above and answer the question. "
        "Think step by step, then provide your final answer inside <answer></answer> tags."
    )
    single = build_messages("summarization_single", "Why?", ["only piece"])
    assert single[1]["content"] == "[Evidence]: only piece\n[Question]: Why?"


def test_evidence_numbering_follows_sample_order():
    pieces = [f"p{i}" for i in range(1, 12)]
    lines = evidence_text(pieces).split("\n")
    assert lines[9] == "[Evidence 10]: p10" and lines[10] == "[Evidence 11]: p11"
    assert evidence_text(["x", "y"], numbers=[2, 5]) == "[Evidence 2]: x\n[Evidence 5]: y"


def test_single_templates_take_one_piece():
    with pytest.raises(ValueError, match="one evidence piece"):
        build_messages("reasoning_single", "q", ["a", "b"])
    with pytest.raises(KeyError, match="unknown prompt template"):
        build_messages("nope", "q", ["a"])


class PlainTokenizer:
    """A base-model tokenizer stand-in: no chat template, adds a BOS id 1."""

    chat_template = None

    def __call__(self, text, add_special_tokens=True):
        ids = [ord(c) for c in text]
        return {"input_ids": ([1] if add_special_tokens else []) + ids}


def test_plain_text_rendering_for_models_without_chat_template():
    text, ids = encode_messages(PlainTokenizer(), build_messages("summarization_simple", "Q?", ["e"]))
    assert text.startswith("You are a helpful assistant")
    assert text.endswith("[Evidence 1]: e\n[Question]: Q?\n\nAnswer:")
    assert ids[0] == 1 and ids.count(1) == 1


@pytest.mark.slow
def test_chat_rendering_has_special_tokens_once(smollm2_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    text, ids = encode_messages(tokenizer, build_messages("reasoning_combined", "Q?", ["a", "b"]))
    assert text.count("<|im_start|>") == 3  # system, user, assistant
    assert ids == tokenizer(text, add_special_tokens=False)["input_ids"]
    assert text.endswith("<|im_start|>assistant\n")


# --------------------------------------------------------------------------
# Conflict-resolution methods: the context-free prompt, the context-faithful ones


def test_context_free_prompt_is_one_closed_book_prompt_that_never_mentions_evidence():
    from conflictlab.contextconflict.prompts import TEMPLATES, context_free_messages

    for name in TEMPLATES:
        messages = context_free_messages(name, "Who?")
        assert messages[0]["content"] == "You are a helpful assistant. Answer the question from your own knowledge."
        assert not any(word in m["content"].lower() for m in messages for word in ("evidence", "source", "provided"))
    assert context_free_messages("reasoning_combined", "Who?")[1]["content"] == (
        "[Question]: Who?\nThink step by step, then provide your final answer inside <answer></answer> tags."
    )
    assert context_free_messages("reasoning_single", "Who?") == context_free_messages("reasoning_combined", "Who?")
    assert context_free_messages("summarization_single", "Why?")[1]["content"] == "[Question]: Why?"
    assert context_free_messages("summarization_neutral", "Why?") == context_free_messages(
        "summarization_simple", "Why?"
    )


def test_context_faithful_prompts_reframe_the_whole_evidence_block():
    from conflictlab.contextconflict.prompts import faithful_messages
    from conflictlab.lm.methods import INSTRUCTION

    plain = build_messages("summarization_simple", "Who won?", ['a "quoted" claim', "b"])
    opinion = faithful_messages("summarization_simple", "Who won?", ['a "quoted" claim', "b"], "opinion")
    assert opinion[0] == plain[0]
    assert (
        opinion[1]["content"]
        == 'Bob said "[Evidence 1]: a quoted claim\n[Evidence 2]: b"\n[Question]: Who won in Bob\'s opinion?'
    )
    instructed = faithful_messages("summarization_simple", "Who won?", ["a", "b"], "instructed")
    assert instructed[1]["content"] == f"{INSTRUCTION}\n\n[Evidence 1]: a\n[Evidence 2]: b\n[Question]: Who won?"
    both = faithful_messages("summarization_simple", "Who won?", ["a", "b"], "opinion_instructed")
    assert (
        both[1]["content"]
        == f"{INSTRUCTION}\n\n"
        + faithful_messages("summarization_simple", "Who won?", ["a", "b"], "opinion")[1]["content"]
    )
    single = faithful_messages("summarization_single", "Why?", ["only"], "opinion")
    assert single[1]["content"] == '[Evidence]: Bob said "only"\n[Question]: Why in Bob\'s opinion?'
    with pytest.raises(ValueError, match="one evidence piece"):
        faithful_messages("summarization_single", "Why?", ["a", "b"], "opinion")
    with pytest.raises(ValueError, match="prompt style"):
        faithful_messages("summarization_simple", "Why?", ["a"], "attributed")

"""Chat templates render with the reasoning mode off (conflictlab.lm.chat_template):
a Qwen3-style template, written here, gets enable_thinking=False from every call site."""

import ast

import pytest

from conflictlab.lm.chat_template import CHAT_TEMPLATE_KWARGS, render_chat

from .conftest import REPO

# The generation-prompt part of Qwen3's template: thinking off opens the reply with an empty think block.
QWEN3_STYLE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)
EMPTY_THINK = "<think>\n\n</think>\n\n"


@pytest.fixture(scope="module")
def qwen3_style():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = [
        "<unk>",
        "<|im_start|>",
        "<|im_end|>",
        "<think>",
        "</think>",
        "user",
        "assistant",
        "Which",
        "is",
        "higher?",
    ]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", chat_template=QWEN3_STYLE)


CONVERSATION = [{"role": "user", "content": "Which is higher?"}]


def test_a_qwen3_style_template_renders_with_thinking_off(qwen3_style):
    assert CHAT_TEMPLATE_KWARGS == {"enable_thinking": False}
    text = render_chat(qwen3_style, CONVERSATION, tokenize=False)
    assert text.endswith("<|im_start|>assistant\n" + EMPTY_THINK)
    # the template's default (thinking on) leaves the block out: the keyword is what turns it off
    assert EMPTY_THINK not in qwen3_style.apply_chat_template(CONVERSATION, tokenize=False, add_generation_prompt=True)
    ids = render_chat(qwen3_style, CONVERSATION, tokenize=True)
    assert isinstance(ids, list) and all(isinstance(i, int) for i in ids)
    vocab = qwen3_style.get_vocab()
    assert ids[-2:] == [vocab["<think>"], vocab["</think>"]]


def test_every_call_site_passes_the_keywords():
    """The package's readers (prompts, judges, guided decoding, CONFLICTS Task 1) all render through render_chat."""
    from conflictlab.arbitration.prompts import encode_arbitration_prompt
    from conflictlab.contextconflict.prompts import encode_messages
    from conflictlab.lm.guided import chat_token_ids

    seen = []

    class Recording:
        chat_template = "set"

        def apply_chat_template(self, conversation, **kwargs):
            seen.append(kwargs)
            return "text" if not kwargs["tokenize"] else [1, 2]

    encode_arbitration_prompt(Recording(), "p")
    encode_messages(Recording(), CONVERSATION)
    chat_token_ids(Recording(), CONVERSATION)
    assert len(seen) == 4 and all(kwargs["enable_thinking"] is False for kwargs in seen)


def test_no_module_calls_the_template_directly():
    """A new apply_chat_template call outside conflictlab/lm/chat_template.py would skip the keywords."""
    calls = []
    for path in (REPO / "conflictlab").rglob("*.py"):
        if path.name == "chat_template.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "apply_chat_template":
                calls.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert calls == []

"""Rendering a conversation with a local model's chat template.

Every ``tokenizer.apply_chat_template`` call of the package goes through
:func:`render_chat`, so that each passes :data:`CHAT_TEMPLATE_KWARGS`: with
``enable_thinking=False`` a Qwen3 template opens the reply with an empty
``<think></think>`` block, the model answers at once, and its first reply
token is the answer the read-outs score (arbitration's A/B, CONFLICTS'
category). The evidence-arbitration paper reads Qwen3's answer from that
first token, so its models ran with thinking off. Templates that do not read
the variable ignore it (Jinja leaves unused variables alone). vLLM's server
renders the template itself: :func:`conflictlab.lm.server.serve_vllm` sends
the same keywords as ``chat_template_kwargs`` with every request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Keywords every chat-template rendering receives (see the module docstring).
CHAT_TEMPLATE_KWARGS: Mapping[str, object] = {"enable_thinking": False}


def render_chat(tokenizer, conversation: Sequence[Mapping[str, str]], *, tokenize: bool) -> str | list[int]:
    """``conversation`` (``[{"role": ..., "content": ...}, ...]``) under
    ``tokenizer``'s chat template, ready for the assistant's reply, with
    :data:`CHAT_TEMPLATE_KWARGS`: the prompt text (``tokenize=False``) or its
    token ids as a list of ints (``tokenize=True``; a tokenizer that returns
    a mapping gives its ``input_ids``)."""
    if not tokenize:
        return tokenizer.apply_chat_template(
            list(conversation), tokenize=False, add_generation_prompt=True, **CHAT_TEMPLATE_KWARGS
        )
    ids = tokenizer.apply_chat_template(
        list(conversation), tokenize=True, add_generation_prompt=True, return_dict=False, **CHAT_TEMPLATE_KWARGS
    )
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)

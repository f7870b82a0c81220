"""Every ContextConflict prompt: the generation templates and the scorer's rendering.

The five templates are the paper's (Appendix E, Figures 32-36), quoted
verbatim: a system message and a user message. ``{evidence_text}`` is the
``[Evidence i]: ...`` list in the sample's order, one piece a line.

Rendering: through the model's chat template when it has one
(``add_generation_prompt=True``, token ids taken from the template, so special
tokens appear exactly once). A model without a chat template (a base model)
gets this documented plain-text rendering, tokenised with the tokenizer's own
special tokens (BOS where the model uses one)::

    {system}

    {user}

    Answer:
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    system: str
    user: str
    single_evidence: bool  # one prompt per evidence piece ({source_content})


_SUMMARY_USER = "{evidence_text}\n[Question]: {question}"
_REASONING_SYSTEM = "You are a helpful assistant that provides step-by-step reasoning."

TEMPLATES: dict[str, PromptTemplate] = {
    t.name: t
    for t in (
        PromptTemplate(
            "summarization_simple",
            "You are a helpful assistant that answers questions based on provided evidence. "
            "Answer concisely in 2–3 sentences.",
            _SUMMARY_USER,
            False,
        ),
        PromptTemplate(
            "summarization_neutral",
            "You are a neutral information synthesis assistant. Analyze all sources with equal "
            "importance and provide unbiased, balanced answers.",
            _SUMMARY_USER,
            False,
        ),
        PromptTemplate(
            "summarization_single",
            "You are a helpful assistant. Answer the question based ONLY on the provided evidence. "
            "Be concise and factual.",
            "[Evidence]: {source_content}\n[Question]: {question}",
            True,
        ),
        PromptTemplate(
            "reasoning_single",
            _REASONING_SYSTEM,
            "[Evidence]: {source_content}\n[Question]: {question}\nBased on the evidence above, think "
            "step by step and provide your final answer inside <answer></answer> tags.",
            True,
        ),
        PromptTemplate(
            "reasoning_combined",
            _REASONING_SYSTEM,
            "{evidence_text}\n[Question]: {question}\nAnalyze all evidence above and answer the "
            "question. Think step by step, then provide your final answer inside <answer></answer> tags.",
            False,
        ),
    )
}

PLAIN_TEXT_FORMAT = "{system}\n\n{user}\n\nAnswer:"


def get_template(name: str) -> PromptTemplate:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise KeyError(f"unknown prompt template {name!r}; known: {sorted(TEMPLATES)}") from None


def evidence_text(evidence: Sequence[str], numbers: Sequence[int] | None = None) -> str:
    """``[Evidence i]: text`` lines; ``numbers`` defaults to 1..n."""
    numbers = range(1, len(evidence) + 1) if numbers is None else numbers
    return "\n".join(f"[Evidence {i}]: {text}" for i, text in zip(numbers, evidence))


def build_messages(
    template: str | PromptTemplate,
    question: str,
    evidence: Sequence[str],
) -> list[dict[str, str]]:
    """System and user messages of ``template`` for one prompt.

    Single-evidence templates take exactly one piece in ``evidence``. A
    multi-evidence template given no evidence renders the question-only prompt
    (the context-free reference of Context-Aware Steering): the same messages
    with the evidence block and its line break left out.
    """
    t = get_template(template) if isinstance(template, str) else template
    if t.single_evidence:
        if len(evidence) != 1:
            raise ValueError(f"template {t.name!r} takes one evidence piece, got {len(evidence)}")
        user = t.user.format(source_content=evidence[0], question=question)
    else:
        user = t.user.format(evidence_text=evidence_text(evidence), question=question)
        if not evidence:
            user = user.removeprefix("\n")
    return [{"role": "system", "content": t.system}, {"role": "user", "content": user}]


def encode_messages(tokenizer, messages: list[dict[str, str]]) -> tuple[str, list[int]]:
    """Render ``messages`` for ``tokenizer``'s model: (prompt text, token ids)."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, return_dict=False)
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        return text, list(ids)
    by_role = {m["role"]: m["content"] for m in messages}
    text = PLAIN_TEXT_FORMAT.format(system=by_role.get("system", ""), user=by_role["user"])
    return text, tokenizer(text, add_special_tokens=True)["input_ids"]


# --------------------------------------------------------------------------
# The Shapley scorer's rendering (plain text, no chat template).
#
# What a reader must know to compare numbers: plain text,
# no chat template, each segment tokenised on its own and the token ids
# concatenated, so every segment has identical tokens in every subset::
#
#     [Question]: {question}\n            <- tokenizer's special tokens (BOS) once, here
#     [Evidence {k}]: {e_i}\n             <- one segment per i in S, in the sample's order
#     [Answer]:\n                         <- suffix
#     {response}                          <- tokenised alone, no special tokens
#
# ``k`` numbers the pieces consecutively within the subset (1..|S|) by
# default; ``renumber=False`` keeps each piece's original number. v(∅) is the
# question, suffix and response alone. The question comes first so that every
# subset of a sample shares one prefix.

SCORER_QUESTION = "[Question]: {question}\n"
SCORER_EVIDENCE = "[Evidence {k}]: {text}\n"
SCORER_SUFFIX = "[Answer]:\n"

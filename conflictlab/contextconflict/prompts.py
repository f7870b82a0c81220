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

from collections.abc import Sequence
from dataclasses import dataclass

from conflictlab.lm.chat_template import render_chat


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


# --------------------------------------------------------------------------
# Conflict-resolution methods (conflictlab.lm.methods): the context-free
# prompt of CAD and AdaCAD, and the context-faithful prompts.


# The one closed-book prompt of ContextConflict (written here, not the
# paper's): what CAD and AdaCAD contrast every template with. It never
# mentions evidence: the templates' own system messages and instructions do
# ("based ONLY on the provided evidence", "Analyze all evidence above"), and
# asked of a prompt that holds none they pull the context-free distribution
# toward the contextual one (AdaCAD's mean weight on SmolLM2 was 0.015 with
# such a prompt and 0.53 with a closed-book one, issue 50).
CLOSED_BOOK_SYSTEM = "You are a helpful assistant. Answer the question from your own knowledge."
CLOSED_BOOK_USER = "[Question]: {question}"
# The reasoning templates' answer format, without their reference to evidence:
# the contrast is between the two passes' answers, so both are asked for the
# same form.
CLOSED_BOOK_ANSWER_FORMAT = "Think step by step, then provide your final answer inside <answer></answer> tags."


def context_free_messages(template: str | PromptTemplate, question: str) -> list[dict[str, str]]:
    """The prompt "without context" that CAD and AdaCAD contrast a sample's
    prompt of ``template`` with: the closed-book prompt
    (:data:`CLOSED_BOOK_SYSTEM`, :data:`CLOSED_BOOK_USER`), one for every
    template, with :data:`CLOSED_BOOK_ANSWER_FORMAT` on its own line where
    the template asks for ``<answer>`` tags (the reasoning templates).

    Why no evidence at all, rather than the evidence pieces ablated one at a
    time: the contrast is between what the model answers from the context
    and what it answers from its parameters (Shi et al.'s ``ℓ(y | x)``, the
    parametric distribution of AdaCAD's JSD), and only the question alone
    holds no context. Ablating each of the n pieces in turn would cost n + 1
    passes per generated token, and would ask how much each piece moves the
    answer, a Shapley-like question that the Balance of the responses
    (:mod:`conflictlab.contextconflict.balance`) already answers, piece by
    piece, for every method alike. (Context-Aware Steering's question-only
    reference is another prompt: :func:`build_messages` with no evidence.)
    """
    t = get_template(template) if isinstance(template, str) else template
    user = CLOSED_BOOK_USER.format(question=question)
    if "<answer></answer>" in t.user:
        user += "\n" + CLOSED_BOOK_ANSWER_FORMAT
    return [{"role": "system", "content": CLOSED_BOOK_SYSTEM}, {"role": "user", "content": user}]


def faithful_messages(
    template: str | PromptTemplate, question: str, evidence: Sequence[str], style: str
) -> list[dict[str, str]]:
    """:func:`build_messages` rewritten as a context-faithful prompt
    (Zhou et al. 2023; ``style`` one of :data:`conflictlab.lm.methods.PROMPT_STYLES`).

    The paper's context is one passage; here the context is the evidence
    block as the template renders it (all ``[Evidence i]:`` lines, or the
    one piece of a single-evidence template), so that one narrator states
    the whole context, as in the paper: opinion-based, the block becomes
    ``Bob said "…"`` and the question ``… in Bob's opinion?``
    (:func:`conflictlab.lm.methods.opinion_context`,
    :func:`~conflictlab.lm.methods.opinion_question`); instructed, the
    paper's instruction and a blank line open the user message. The system
    message and the template's own instructions stay.
    """
    from conflictlab.lm.methods import INSTRUCTION, PROMPT_STYLES, opinion_context, opinion_question

    if style not in PROMPT_STYLES:
        raise ValueError(f"not a context-faithful prompt style: {style!r} (one of {', '.join(PROMPT_STYLES)})")
    t = get_template(template) if isinstance(template, str) else template
    opinion = "opinion" in style
    if opinion:
        question = opinion_question(question)
    if t.single_evidence:
        if len(evidence) != 1:
            raise ValueError(f"template {t.name!r} takes one evidence piece, got {len(evidence)}")
        context = evidence[0]
        user = t.user.format(source_content=opinion_context(context) if opinion else context, question=question)
    else:
        context = evidence_text(evidence)
        user = t.user.format(evidence_text=opinion_context(context) if opinion else context, question=question)
    if "instructed" in style:
        user = f"{INSTRUCTION}\n\n{user}"
    return [{"role": "system", "content": t.system}, {"role": "user", "content": user}]


def encode_messages(tokenizer, messages: list[dict[str, str]]) -> tuple[str, list[int]]:
    """Render ``messages`` for ``tokenizer``'s model: (prompt text, token ids)."""
    if getattr(tokenizer, "chat_template", None):
        return render_chat(tokenizer, messages, tokenize=False), render_chat(tokenizer, messages, tokenize=True)
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

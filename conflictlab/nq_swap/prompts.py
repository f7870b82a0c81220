"""NQ-Swap prompts: plain text, one template per setting, the context-faithful rewrites of the same template.

The with-context prompt is the ``base`` template of Zhou et al. 2023's released
code, as :mod:`conflictlab.lm.methods` quotes it (``'{}\\nQ:{}\\nA:'.format(context,
query, answer)`` with the answer empty), so that a context-faithful prompt
(:func:`conflictlab.lm.methods.faithful_prompt`) differs from the baseline by its
rewrite only. The closed-book prompt is that template without its context line;
it is also the context-free prompt CAD and AdaCAD contrast with. Names are
versioned: a change to a template is a new name.

NQ questions are lower case without a question mark ("who wrote the play romeo
and juliet"); :func:`question_text` adds the mark, which the opinion rewrite
then replaces by " in Bob's opinion?" as the authors' ``query[:-1]`` does.
"""

from __future__ import annotations

from conflictlab.lm.methods import faithful_prompt

CLOSED_BOOK = "closed_book_v1"
WITH_CONTEXT = "zhou_base_v1"
TEMPLATES = {
    CLOSED_BOOK: "Q:{question}\nA:",
    WITH_CONTEXT: "{context}\nQ:{question}\nA:",
}


def question_text(question: str) -> str:
    """The question as the prompts ask it: stripped, ending in one question mark."""
    question = question.strip()
    return question if question.endswith("?") else f"{question}?"


def closed_book_prompt(question: str) -> str:
    return TEMPLATES[CLOSED_BOOK].format(question=question_text(question))


def context_prompt(context: str, question: str, style: str | None = None) -> str:
    """The with-context prompt, or its context-faithful rewrite ``style`` (one of
    :data:`conflictlab.lm.methods.PROMPT_STYLES`; None: the plain template)."""
    if style is None:
        return TEMPLATES[WITH_CONTEXT].format(context=context, question=question_text(question))
    return faithful_prompt(context, question_text(question), style)

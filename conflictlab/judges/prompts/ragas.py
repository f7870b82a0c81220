"""RAGAS Faithfulness's two judge prompts (the paper's Fth columns, §3.1 footnote 3).

The two instructions and the worked examples' contents are RAGAS's, quoted
exactly: ``explodinggradients/ragas`` @ 3e28e9dec93897f47a98065be4c62f6d072a45a7,
``src/ragas/metrics/_faithfulness.py`` (``StatementGeneratorPrompt`` and
``NLIStatementPrompt``). The frame around them is this project's, following
the library's rendering (instruction, output JSON schema, one example as
``Input:``/``Output:``, the new input):

* statement extraction asks for ``{"statements": [...]}`` exactly as RAGAS;
* the verdict step judges all a response's statements in one request, as
  RAGAS does, but reads each verdict as a closed choice
  (``{"statement_1": "0" | "1", ...}``), without RAGAS's free-text
  ``reason`` before it: a small judge cannot then fail to produce a verdict.
  RAGAS's first example (John at XYZ University) is shown with its four
  statements and verdicts.

Two deviations from RAGAS follow, and are stated in the README and in every
Faithfulness caption (:data:`conflictlab.judges.faithfulness.DEVIATIONS`):
the verdicts come without a reason (RAGAS asks for ``reason`` then
``verdict``, so its judge reasons before it decides; ours decides at once),
and RAGAS's second verdict example (a photosynthesis context against
"Albert Einstein was a genius.", verdict 0) is dropped, so the judge sees no
example of a statement unrelated to its context.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from conflictlab.judges.requests import JudgeRequest

STATEMENTS_TEMPLATE = "ragas_statements_v1"
VERDICT_TEMPLATE = "ragas_verdict_v1"

STATEMENTS_INSTRUCTION = (
    "Given a question and an answer, analyze the complexity of each sentence in the answer. Break down each sentence "
    "into one or more fully understandable statements. Ensure that no pronouns are used in any statement. "
    "Format the outputs in JSON."
)
VERDICT_INSTRUCTION = (
    "Your task is to judge the faithfulness of a series of statements based on a given context. For each statement "
    "you must return verdict as 1 if the statement can be directly inferred based on the context or 0 if the "
    "statement can not be directly inferred based on the context."
)

STATEMENTS_SCHEMA = {
    "type": "object",
    "properties": {"statements": {"type": "array", "items": {"type": "string"}}},
    "required": ["statements"],
    "additionalProperties": False,
}

_STATEMENTS_EXAMPLE_INPUT = {
    "question": "Who was Albert Einstein and what is he best known for?",
    "answer": (
        "He was a German-born theoretical physicist, widely acknowledged to be one of the greatest and most "
        "influential physicists of all time. He was best known for developing the theory of relativity, he also made "
        "important contributions to the development of the theory of quantum mechanics."
    ),
}
_STATEMENTS_EXAMPLE_OUTPUT = {
    "statements": [
        "Albert Einstein was a German-born theoretical physicist.",
        "Albert Einstein is recognized as one of the greatest and most influential physicists of all time.",
        "Albert Einstein was best known for developing the theory of relativity.",
        "Albert Einstein also made important contributions to the development of the theory of quantum mechanics.",
    ]
}
_VERDICT_EXAMPLE_CONTEXT = (
    "John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several "
    "courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent "
    "student and spends a significant amount of time studying and completing assignments. He often stays late in "
    "the library to work on his projects."
)
_VERDICT_EXAMPLES = (
    ("John is majoring in Biology.", "0"),
    ("John is taking a course on Artificial Intelligence.", "0"),
    ("John is a dedicated student.", "1"),
    ("John has a part-time job.", "0"),
)


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def statements_request(question: str, answer: str, *, max_new_tokens: int) -> JudgeRequest:
    """Step 1: the answer's statements, ``{"statements": [...]}``."""
    user = (
        f"{STATEMENTS_INSTRUCTION}\n"
        f"Reply with JSON that follows this JSON Schema: {_dumps(STATEMENTS_SCHEMA)}\n\n"
        f"Example\nInput: {_dumps(_STATEMENTS_EXAMPLE_INPUT)}\nOutput: {_dumps(_STATEMENTS_EXAMPLE_OUTPUT)}\n\n"
        "Now perform the same with the following input\nInput: "
        f"{_dumps({'question': question, 'answer': answer})}\nOutput:"
    )
    return JudgeRequest(
        template=STATEMENTS_TEMPLATE,
        messages=(("user", user),),
        reply_schema=_dumps(STATEMENTS_SCHEMA),
        prefix='{"statements": ["',
        max_new_tokens=max_new_tokens,
    )


def verdict_request(context: str, statements: Sequence[str]) -> JudgeRequest:
    """Step 2: every statement's verdict against the joined context, one
    request: ``{"statement_1": "0"|"1", ...}`` (RAGAS judges a response's
    statements in one call too)."""
    example_statements = "\n".join(f"statement_{i}: {s}" for i, (s, _) in enumerate(_VERDICT_EXAMPLES, start=1))
    example_reply = _dumps({f"statement_{i}": v for i, (_, v) in enumerate(_VERDICT_EXAMPLES, start=1)})
    listed = "\n".join(f"statement_{i}: {s}" for i, s in enumerate(statements, start=1))
    user = (
        f"{VERDICT_INSTRUCTION}\n"
        'Reply with JSON giving each statement its verdict, "1" or "0".\n\n'
        f"Example\nContext: {_VERDICT_EXAMPLE_CONTEXT}\n{example_statements}\nOutput: {example_reply}\n\n"
        f"Now perform the same with the following input\nContext: {context}\n{listed}\nOutput:"
    )
    fields = tuple(f"statement_{i}" for i in range(1, len(statements) + 1))
    return JudgeRequest(template=VERDICT_TEMPLATE, messages=(("user", user),), fields=fields, options=("0", "1"))

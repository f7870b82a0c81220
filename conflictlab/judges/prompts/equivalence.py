"""Semantic answer match for long free-text golds (``accuracy.free_text: judge``).

This project's prompt (no published metric defines it): is the candidate's
answer the reference answer, allowing paraphrase and extra detail, refusing a
different or hedged answer. A closed choice ``{"equivalent": "yes"|"no"}``.
"""

from __future__ import annotations

from collections.abc import Sequence

from conflictlab.judges.requests import JudgeRequest

EQUIVALENCE_TEMPLATE = "answer_equivalence_v1"

INSTRUCTION = (
    "You compare a candidate answer with reference answers to the same question. Reply yes when the candidate gives "
    "the same answer as one of the references: paraphrases, different wording and extra correct detail are fine. "
    "Reply no when it gives a different answer, contradicts the references, names several answers without choosing, "
    "or does not answer."
)


def equivalence_request(question: str, references: Sequence[str], candidate: str) -> JudgeRequest:
    listed = "\n".join(f"- {r}" for r in references)
    user = (
        f"{INSTRUCTION}\n\nQuestion: {question}\nReference answers:\n{listed}\nCandidate answer: {candidate}\n\n"
        'Reply with JSON: {"equivalent": "yes"} or {"equivalent": "no"}.'
    )
    return JudgeRequest(
        template=EQUIVALENCE_TEMPLATE, messages=(("user", user),), fields=("equivalent",), options=("yes", "no")
    )

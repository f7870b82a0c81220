"""Claim and question templates per Wikidata relation (written here).

ConflictBank used templates for its 100 most frequent relations (its Table 4,
whose cells the text copy lost); these few serve the demo and the planted
dump. A relation is added by one line. ``{subject}`` and ``{object}`` are
the only placeholders.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RelationTemplate:
    relation: str  # Wikidata property id
    name: str  # the property's English label
    claim: str  # a declarative sentence ending with "."
    question: str  # a WH-question about the subject, answered by the object

    def claim_for(self, subject: str, obj: str) -> str:
        return self.claim.replace("{subject}", subject).replace("{object}", obj)

    def question_for(self, subject: str) -> str:
        return self.question.replace("{subject}", subject)


TEMPLATES: dict[str, RelationTemplate] = {
    t.relation: t
    for t in (
        RelationTemplate(
            "P69", "educated at", "{subject} attended {object}.", "Which educational institution did {subject} attend?"
        ),
        RelationTemplate("P108", "employer", "{subject} worked for {object}.", "Who was {subject}'s employer?"),
        RelationTemplate("P19", "place of birth", "{subject} was born in {object}.", "Where was {subject} born?"),
        RelationTemplate(
            "P27",
            "country of citizenship",
            "{subject} is a citizen of {object}.",
            "Which country is {subject} a citizen of?",
        ),
        RelationTemplate(
            "P166", "award received", "{subject} received the {object}.", "Which award did {subject} receive?"
        ),
        RelationTemplate("P26", "spouse", "{subject} is married to {object}.", "Who is {subject} married to?"),
    )
}


def templates_for(relations: list[str]) -> list[RelationTemplate]:
    """The templates of ``relations``; ValueError naming a relation without one."""
    missing = [r for r in relations if r not in TEMPLATES]
    if missing:
        raise ValueError(f"no claim template for relation(s) {', '.join(missing)}; known: {', '.join(TEMPLATES)}")
    return [TEMPLATES[r] for r in relations]

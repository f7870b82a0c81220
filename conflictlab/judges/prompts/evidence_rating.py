"""The LLM-as-a-Judge rating of each evidence piece's contribution (paper Table 7).

The guidelines are the paper's annotation guidelines for its human raters and
its GPT-5 judge, quoted exactly from Figure 18 (Appendix C.2) of "Large
Language Models in Resolving Contextual Knowledge Conflicts" (the figure's
line breaks, and the space after each bold label that the paper's text
extraction lost, restored). The frame is this project's: the
question, every source numbered in the sample's order, the response, and a
reply of closed choices ``{"Source 1": "1".."5", "Source 2": ..., ...}``
(all sources of a sample rated in one reply, as the paper's raters rated
them on one screen).
"""

from __future__ import annotations

from collections.abc import Sequence

from conflictlab.judges.requests import JudgeRequest

RATING_TEMPLATE = "evidence_rating_v1"
RATINGS = ("1", "2", "3", "4", "5")

GUIDELINES = """Evidence Contribution Annotation Guidelines
Task Overview: Evaluate the contribution of each evidence source to the model's response for a given question. Rate each source on a 1–5 scale.
Rating Scale:
1 – Minimal Contribution: Evidence barely reflected in response; removing it would not affect core content.
2 – Minor Contribution: Some information mentioned but peripheral; plays supporting role.
3 – Moderate Contribution: Key information clearly reflected; important for response completeness.
4 – Major Contribution: Core content prominently featured; significant impact on main arguments.
5 – Dominant Contribution: Response primarily derived from this evidence; plays decisive role.
Core Principles:
1. Focus on relative distribution, not absolute values. Ratings should reflect relative contribution differences between sources.
Example A (Significant disparity): Source 1: 5, Source 2: 1 → Response heavily relies on Source 1.
Example B (Balanced): Source 1: 3, Source 2: 3 → Both sources contribute equally.
Example C (Low but balanced): Source 1: 1, Source 2: 1 → Response relies on model's own knowledge.
2. Base judgment on content matching:
– Direct quotation: Response uses verbatim or paraphrased content from evidence.
– Information correspondence: Facts, data, viewpoints in response traceable to evidence.
– Structural influence: Response organization influenced by evidence structure.
3. Evaluate each evidence independently, then use score distribution to reflect relative relationships.
Annotation Steps:
1. Read the Question to understand the core inquiry.
2. Read all Sources to understand the information each provides.
3. Read the Response carefully, analyzing its content and structure.
4. Rate each source: Identify which parts of the response come from each evidence, assess the weight of that information, and assign a 1–5 score.
5. Check consistency: Ensure score distribution reasonably reflects relative contributions.
Important Notes:
– Avoid position bias: Do not favor evidence appearing earlier.
– Distinguish quality from contribution: High-quality evidence unused in response should receive a low score.
– Handle conflicting evidence: Focus on which evidence's viewpoint dominates in the response."""  # noqa: E501 (quoted verbatim: the published guidelines have lines over 120 characters)


def rating_request(question: str, evidence: Sequence[str], response: str) -> JudgeRequest:
    """One request rating every evidence piece 1–5, in the sample's order."""
    sources = "\n".join(f"Source {i}: {text}" for i, text in enumerate(evidence, start=1))
    fields = tuple(f"Source {i}" for i in range(1, len(evidence) + 1))
    user = (
        f"{GUIDELINES}\n\nQuestion: {question}\n\n{sources}\n\nResponse: {response}\n\n"
        'Rate every source. Reply with JSON giving each source its rating, "1" to "5".'
    )
    return JudgeRequest(template=RATING_TEMPLATE, messages=(("user", user),), fields=fields, options=RATINGS)

"""ContextConflict's semi-synthesis prompts, quoted exactly from the paper.

Source: "Large Language Models in Resolving Contextual Knowledge Conflicts"
(arXiv 2609.03148v1), Appendix B.1, Figures 6, 7, 9 and 10 (the GPT-5
prompts), as its text copy (``000_9b6c6cf2b7e20b09.txt``) prints them after
each figure box's title: Markdown escapes removed, the copy's spacing and
line breaks kept (the PDF's line breaks inside Figure 6 were lost in the
copy, so its labels run into their values: "Claim:{claim} Original ...").
``tests/test_construction_prompts.py`` holds each constant byte-equal to the copy.

Figures 9 and 10 name their inputs ("Inputs: Subject, default claim, ...")
without showing how they were passed; :data:`QUESTION_INPUTS` (written
here) appends them after the quoted prompt. The only placeholders filled are
the ones the figures print: ``{claim}``, ``{evidence_context}``,
``{premises_raw_json}``, ``{conclusion}``; ``{subject}`` in Figures 9 and 10
is part of their example patterns and stays as printed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

# Figure 6 (first box, "Misinformation: Question Generation")
MISINFORMATION_QUESTION = (
    "Claim:{claim} Original Evidence:{evidence_context} Generate a Clear Question: Create a direct, "
    "focused question based on the claim that can be answered using scientific evidence. The "
    "question should be specific and answerable."
)

# Figure 6 (second box, "Misinformation: Conflicting Evidence Generation")
MISINFORMATION_EVIDENCE = (
    "Task:Generate conflicting evidence statements that oppose the original findings. Requirements: "
    "1.Quantity & Style:Generate the exact same number of statements as provided. Match the language "
    "style, professional tone, and complexity perfectly. 2.Conflict Strategy:Create plausible "
    "rebuttals. Do not use simple “not” negations; instead: modify findings, cite different "
    "methodological outcomes, or focus on alternative variables that lead to opposite conclusions. "
    "3.Diversity:Ensure each statement uses a unique sentence structure. 4.Output:Return ONLY the "
    "numbered list of conflicting evidence statements. Claim:{claim} Original "
    "Evidence:{evidence_context}"
)

# Figure 7 ("FOLIO: Conflicting Premise Generation"; FOLIO and EntailmentBank)
INFERENTIAL_PREMISES = (
    "Your task:\n"
    "1.Decision:With 50% probability, choose either to:\n"
    "-Option A:Add 1–2 plausible statements that create a conflicting reasoning branch (requires at "
    "least one inference step; avoid trivial “X vs. not-X”).\n"
    "-Option B:Keep the premises as they are.\n"
    "2.Output:Return ONLY the final numbered list of statements.\n"
    "3.Constraints:No meta-talk, no “source_#” references, no explanations.\n"
    "Premises:{premises_raw_json}\nHypothesis:{conclusion}"
)

# Figure 9 ("Temporal Conflicts: Question Generation")
TEMPORAL_QUESTION = (
    "Based on two conflicting claims about the same subject, generate ONE concise open-ended "
    "question with a temporal marker.\n"
    "Inputs:Subject, default claim, temporal claim, default evidence, temporal evidence\n"
    "Requirements:\n"
    "1. Extract ALL timestamps/dates from both evidences.\n"
    "2. Identify the attribute being described (e.g., employer, award, title).\n"
    "3. Randomly choose to ask about a SPECIFIC YEAR before, between, or after identified "
    "timestamps.\n"
    "4. Use patterns like: “What was {subject}’s [attribute] in [year]?” or “Who was {subject}’s "
    "[attribute] as of [year]?”\n"
    "5. Prefer specific years over time ranges.\n"
    "6. Do NOT use yes/no questions or multiple-choice formats.\n"
    "7. Self-contained, one sentence,≤20 words.\n"
    "8. Output only the question (no explanations, no metadata)."
)

# Figure 10 ("General ConflictBank: Question Generation")
GENERAL_QUESTION = (
    "Given a subject with a default claim (assumed correct) and a conflicting claim, generate ONE "
    "concise factual question about the subject without revealing either claim explicitly.\n"
    "Inputs:Subject, default claim, conflicting claim\n"
    "Requirements:\n"
    "- Use simple WH-questions like “Where did {subject} work?”, “When was {subject} born?”, “Who is "
    "{subject} married to?”\n"
    "- Do NOT include claim contents in the question.\n- Self-contained, one sentence."
)

# name -> (text, source): the versioned names recorded beside every generation
PROMPTS = {
    "misinformation_question_fig6a": (MISINFORMATION_QUESTION, "Appendix B.1, Figure 6, first box"),
    "misinformation_evidence_fig6b": (MISINFORMATION_EVIDENCE, "Appendix B.1, Figure 6, second box"),
    "inferential_premises_fig7": (INFERENTIAL_PREMISES, "Appendix B.1, Figure 7"),
    "temporal_question_fig9": (TEMPORAL_QUESTION, "Appendix B.1, Figure 9"),
    "general_question_fig10": (GENERAL_QUESTION, "Appendix B.1, Figure 10"),
}

# Written here: how Figures 9 and 10's named inputs follow the quoted prompt.
QUESTION_INPUTS = "\n\n{inputs}"


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with exactly the ``{name}`` placeholders in ``values``
    replaced (str.format would also read the figures' literal braces)."""
    for name, value in values.items():
        if "{" + name + "}" not in template:
            raise ValueError(f"prompt has no placeholder {{{name}}}")
        template = template.replace("{" + name + "}", value)
    return template


def numbered(statements: Sequence[str]) -> str:
    """Statements as a numbered list, one a line ("1. ...")."""
    return "\n".join(f"{i}. {s}" for i, s in enumerate(statements, start=1))


def misinformation_question(claim: str, evidence: Sequence[str]) -> str:
    return _fill(MISINFORMATION_QUESTION, {"claim": claim, "evidence_context": numbered(evidence)})


def misinformation_evidence(claim: str, evidence: Sequence[str]) -> str:
    return _fill(MISINFORMATION_EVIDENCE, {"claim": claim, "evidence_context": numbered(evidence)})


def inferential_premises(premises: Sequence[str], conclusion: str) -> str:
    return _fill(
        INFERENTIAL_PREMISES,
        {"premises_raw_json": json.dumps(list(premises), ensure_ascii=False), "conclusion": conclusion},
    )


def _with_inputs(prompt: str, inputs: dict[str, str]) -> str:
    return prompt + QUESTION_INPUTS.replace("{inputs}", "\n".join(f"{k}: {v}" for k, v in inputs.items()))


def temporal_question(
    subject: str, default_claim: str, temporal_claim: str, default_evidence: str, temporal_evidence: str
) -> str:
    return _with_inputs(
        TEMPORAL_QUESTION,
        {
            "Subject": subject,
            "Default claim": default_claim,
            "Temporal claim": temporal_claim,
            "Default evidence": default_evidence,
            "Temporal evidence": temporal_evidence,
        },
    )


def general_question(subject: str, default_claim: str, conflicting_claim: str) -> str:
    return _with_inputs(
        GENERAL_QUESTION, {"Subject": subject, "Default claim": default_claim, "Conflicting claim": conflicting_claim}
    )

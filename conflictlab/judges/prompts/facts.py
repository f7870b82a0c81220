"""The FACTS Grounding judge prompt (used for CONFLICTS' factual grounding).

Quoted exactly: DeepMind's ``evaluation_prompts.csv`` of the FACTS Grounding
benchmark (Jacovi et al. 2025, arXiv 2501.03200, Appendix A), method
``json``, as re-uploaded with DeepMind's licence in
``Hawar-Dzaee/Facts-Grounding-Implementation`` ``data/evaluation_prompts.csv``
@ 0cc7f381e36e7c4fbea8cfa0c6bd4ff4efb6d43e. Its placeholders are filled by
plain string replacement, as FACTS does.

The frame after it is this project's: the response's sentences, split by
the caller (CONFLICTS: :func:`conflictlab.conflicts.citations.sentences`)
and numbered here, each read as a closed choice among FACTS's four labels
(``{"sentence_1": "supported" | "unsupported" | "contradictory" | "no_rad", ...}``)
instead of FACTS's free JSON lines with rationale and excerpt, so that a
small judge's reply cannot fail to parse. The score (CONFLICTS, Google's own
adaptation) is supported / sentences whose label is not ``no_rad``.
"""

from __future__ import annotations

from collections.abc import Sequence

from conflictlab.judges.requests import JudgeRequest

GROUNDING_TEMPLATE = "facts_grounding_v1"
LABELS = ("supported", "unsupported", "contradictory", "no_rad")

FACTS_PROMPT = """You are a helpful and harmless AI assistant. You will be provided with a textual context and a model-generated response.
Your task is to analyze the response sentence by sentence and classify each sentence according to its relationship with the provided context.

**Instructions:**

1. **Decompose the response into individual sentences.**
2. **For each sentence, assign one of the following labels:**
    * **`supported`**: The sentence is entailed by the given context.  Provide a supporting excerpt from the context. The supporting except must *fully* entail the sentence. If you need to cite multiple supporting excepts, simply concatenate them.
    * **`unsupported`**: The sentence is not entailed by the given context. No excerpt is needed for this label.
    * **`contradictory`**: The sentence is falsified by the given context. Provide a contradicting excerpt from the context.
    * **`no_rad`**: The sentence does not require factual attribution (e.g., opinions, greetings, questions, disclaimers).  No excerpt is needed for this label.
3. **For each label, provide a short rationale explaining your decision.**  The rationale should be separate from the excerpt.
4. **Be very strict with your `supported` and `contradictory` decisions.** Unless you can find straightforward, indisputable evidence excerpts *in the context* that a sentence is `supported` or `contradictory`, consider it `unsupported`. You should not employ world knowledge unless it is truly trivial.

**Input Format:**

The input will consist of two parts, clearly separated:

* **Context:**  The textual context used to generate the response.
* **Response:** The model-generated response to be analyzed.

**Output Format:**

For each sentence in the response, output a JSON object with the following fields:

* `"sentence"`: The sentence being analyzed.
* `"label"`: One of `supported`, `unsupported`, `contradictory`, or `no_rad`.
* `"rationale"`: A brief explanation for the assigned label.
* `"excerpt"`:  A relevant excerpt from the context. Only required for `supported` and `contradictory` labels.

Output each JSON object on a new line.

**Example:**

**Input:**

```
Context: Apples are red fruits. Bananas are yellow fruits.

Response: Apples are red. Bananas are green. Bananas are cheaper than apples. Enjoy your fruit!
```

**Output:**

{"sentence": "Apples are red.", "label": "supported", "rationale": "The context explicitly states that apples are red.", "excerpt": "Apples are red fruits."}
{"sentence": "Bananas are green.", "label": "contradictory", "rationale": "The context states that bananas are yellow, not green.", "excerpt": "Bananas are yellow fruits."}
{"sentence": "Bananas are cheaper than apples.", "label": "unsupported", "rationale": "The context does not mention the price of bananas or apples.", "excerpt": null}
{"sentence": "Enjoy your fruit!", "label": "no_rad", "rationale": "This is a general expression and does not require factual attribution.", "excerpt": null}

**Now, please analyze the following context and response:**

**User Query:**
{{user_request}}

**Context:**
{{context_document}}

**Response:**
{{response}}"""  # noqa: E501 (quoted verbatim: the published prompt has lines over 120 characters)


def grounding_request(
    user_request: str, context_document: str, response: str, response_sentences: Sequence[str]
) -> JudgeRequest:
    """One closed FACTS label per numbered sentence of ``response``."""
    prompt = (
        FACTS_PROMPT.replace("{{user_request}}", user_request)
        .replace("{{context_document}}", context_document)
        .replace("{{response}}", response)
    )
    numbered = "\n".join(f"sentence_{i}: {s}" for i, s in enumerate(response_sentences, start=1))
    user = (
        f"{prompt}\n\nThe response's sentences, numbered:\n{numbered}\n\n"
        f"Reply with JSON giving each numbered sentence its label, one of: {', '.join(LABELS)}."
    )
    fields = tuple(f"sentence_{i}" for i in range(1, len(response_sentences) + 1))
    return JudgeRequest(template=GROUNDING_TEMPLATE, messages=(("user", user),), fields=fields, options=LABELS)

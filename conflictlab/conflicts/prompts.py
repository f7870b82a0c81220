"""Every CONFLICTS prompt: Task 1 (conflict-type prediction) and Task 2 (a
cited response) under the paper's four strategies.

The paper's own prompt texts (its Figures 2 and 3) are not published anywhere
reachable from this project, so these are this project's, written from the
paper's §2 (category definitions and expected behaviours), Table 1 (one
example per category) and §5.1 (each search result shown as URL, title,
snippet, date if any, and its segment; Vanilla, Pipeline, Taxonomy-aware,
Oracle). Template names carry a version (``..._v1``).

* Vanilla: query + results -> a response with a citation on every sentence.
* Pipeline: Task 1's *predicted* type, its description and expected
  behaviour, added to the Vanilla prompt.
* Taxonomy-aware: one pass, the full taxonomy; the reply starts with
  ``Type: <label>``, then ``Explanation: ...``, then ``Response: ...``
  (:func:`parse_taxonomy_aware` splits it, strictly).
* Oracle: the *gold* type's description and expected behaviour.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conflictlab.conflicts.dataset import CATEGORIES
from conflictlab.lm.methods import INSTRUCTION, PROMPT_STYLES, opinion_context, opinion_question

STRATEGIES = ("vanilla", "pipeline", "taxonomy_aware", "oracle")
TASK1_TEMPLATE = "conflicts_type_v1"
TASK2_TEMPLATES = {strategy: f"conflicts_{strategy}_v1" for strategy in STRATEGIES}


@dataclass(frozen=True)
class Category:
    label: str  # what the model reads and answers (Task 1 options)
    definition: str
    behaviour: str
    example: str


TAXONOMY: dict[str, Category] = {
    "no_conflict": Category(
        "No conflict",
        "The search results answer the query with equivalent or nearly equivalent answers that refer to the same "
        "entity, fact or concept; differences in wording or granularity are not a conflict, and results that are on "
        "the topic but do not answer the query do not create one.",
        "Give a clear, direct answer, without alternative viewpoints or uncertainty.",
        'Query "When did the Titanic set sail?": one result says Wednesday 10 April 1912, another April 1912.',
    ),
    "complementary": Category(
        "Complementary information",
        "The search results give different answers that are compatible: one person could agree with all of them, "
        "because the query has several correct answers or is underspecified.",
        "Consolidate the partial answers into one coherent response, without framing it as a debate.",
        'Query "Is public transportation faster than driving in cities?": dedicated bus lanes can make buses faster; '
        "a study found driving twice as fast on average in the U.S.",
    ),
    "conflicting_opinions": Category(
        "Conflicting opinions or research outcomes",
        "The search results give answers that are not compatible: opinions, research findings or accounts that "
        "disagree and argue for different sides.",
        "Present the debate explicitly and summarise each side neutrally.",
        'Query "Is fasting beneficial for individuals with diabetes?": small studies report benefits; another source '
        "says the diet is not recommended for people with diabetes.",
    ),
    "outdated": Category(
        "Conflict due to outdated information",
        "The search results give incompatible answers because some are out of date and others report more recent "
        "updates.",
        "Give the most recent information, optionally noting that older sources differ.",
        'Query "How many countries have recognized same-sex marriage?": results from different years give 32, 35, 37 '
        "and 38.",
    ),
    "misinformation": Category(
        "Conflict due to misinformation",
        "The search results give incompatible answers and at least one of them is likely false, misleading or "
        "inaccurate.",
        "Disregard the inaccurate sources and answer from the reliable ones.",
        'Query "When did season 5 of Prison Break come out?": one result gives April 4, 2017 (correct), another '
        "May 30, 2017 (the finale date).",
    ),
}
assert set(TAXONOMY) == set(CATEGORIES)
LABELS = tuple(category.label for category in TAXONOMY.values())
CATEGORY_BY_LABEL = {category.label.casefold(): name for name, category in TAXONOMY.items()}


def render_results(results: Sequence[dict]) -> str:
    """Every search result with its 1-based index ``[k]``: URL, title, snippet,
    date (when released and not NA) and segment."""
    blocks = []
    for k, result in enumerate(results, start=1):
        lines = [
            f"[{k}] URL: {result.get('url') or ''}",
            f"Title: {result.get('title') or ''}",
            f"Snippet: {result.get('snippet') or ''}",
        ]
        date = (result.get("date") or "").strip()
        if date and date.casefold() not in ("na", "n/a"):
            lines.append(f"Date: {date}")
        lines.append(f"Text: {result.get('short_text') or ''}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def taxonomy_text() -> str:
    return "\n".join(
        f"- {c.label}: {c.definition} Expected response: {c.behaviour} Example: {c.example}" for c in TAXONOMY.values()
    )


_CITE = (
    "Cite the search results that support each sentence with their numbers in brackets, e.g. [2] or [1][3]; every "
    "sentence needs a citation."
)


def task1_messages(question: str, results: Sequence[dict]) -> list[dict]:
    """Task 1: which category of knowledge conflict the results show for the query."""
    user = (
        "The search results below were retrieved for a query. Decide which type of knowledge conflict they show, "
        f"using this taxonomy:\n{taxonomy_text()}\n\nQuery: {question}\n\nSearch "
        f"results:\n{render_results(results)}\n\n"
        f"Answer with the type's name only, one of: {'; '.join(LABELS)}."
    )
    return [{"role": "user", "content": user}]


TASK1_PREFIX = "Type:"


def task2_messages(
    strategy: str, question: str, results: Sequence[dict], *, conflict_type: str | None = None, style: str | None = None
) -> list[dict]:
    """Task 2 under ``strategy``. Pipeline takes the *predicted* type and
    Oracle the *gold* type as ``conflict_type`` (a short name); the other two
    take none. ``style``: a context-faithful prompt style (Zhou et al. 2023;
    :data:`conflictlab.lm.methods.PROMPT_STYLES`): the search results as the
    narrator's statement and the query asked of the narrator's opinion
    (``opinion``), the paper's instruction first (``instructed``), or both."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown CONFLICTS strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    needs_type = strategy in ("pipeline", "oracle")
    if needs_type != (conflict_type is not None):
        raise ValueError(f"strategy {strategy} {'needs' if needs_type else 'takes no'} conflict_type")
    if style is not None and style not in PROMPT_STYLES:
        raise ValueError(f"not a context-faithful prompt style: {style!r} (one of {', '.join(PROMPT_STYLES)})")
    shown_results = render_results(results)
    if style and "opinion" in style:
        question, shown_results = opinion_question(question), opinion_context(shown_results)
    head = (
        f"Answer the query using the search results. {_CITE}\n\nQuery: {question}\n\nSearch "
        f"results:\n{shown_results}\n\n"
    )
    if style and "instructed" in style:
        head = f"{INSTRUCTION}\n\n{head}"
    if strategy == "vanilla":
        tail = "Response:"
    elif strategy == "taxonomy_aware":
        tail = (
            "First decide which type of knowledge conflict the search results show, using this "
            f"taxonomy:\n{taxonomy_text()}\n"
            "Then reply in exactly this form:\nType: <the type's name>\nExplanation: <one sentence>\n"
            "Response: <your answer, written as the type's expected response>"
        )
    else:
        category = TAXONOMY[conflict_type]
        tail = (
            f"The search results show this type of knowledge conflict: {category.label}. {category.definition}\n"
            f"Write the response as this type calls for: {category.behaviour}\nResponse:"
        )
    return [{"role": "user", "content": head + tail}]


def context_free_messages(question: str) -> list[dict]:
    """The Vanilla prompt without its search results (and without the
    instruction to cite them, which no longer applies): what CAD and AdaCAD
    contrast a Vanilla prompt with. The search results are all of the
    prompt's context, so "without context" is without any of them."""
    return [{"role": "user", "content": f"Answer the query.\n\nQuery: {question}\n\nResponse:"}]


_TAXONOMY_REPLY = re.compile(
    r"^\s*Type:\s*(?P<type>[^\n]+?)\s*\n\s*Explanation:\s*(?P<explanation>.*?)\n\s*Response:\s*(?P<response>.+)$",
    re.DOTALL,
)


def parse_label(text: str) -> str | None:
    """The category a generated Task 1 answer names (its first line, exactly a
    label, case-insensitive, trailing punctuation ignored), else None."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = re.sub(r"^type:\s*", "", first.strip(), flags=re.IGNORECASE).strip().rstrip(".").strip()
    return CATEGORY_BY_LABEL.get(first.casefold())


def parse_taxonomy_aware(text: str) -> tuple[str | None, str | None]:
    """(predicted category, response) of a Taxonomy-aware reply; (None, None)
    when the reply does not follow the Type/Explanation/Response form."""
    match = _TAXONOMY_REPLY.match(text)
    if not match:
        return None, None
    return parse_label(match["type"]), match["response"].strip()

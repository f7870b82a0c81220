"""CONFLICTS' three judges in the judge gold set (:mod:`conflictlab.judges.gold`).

Each kind is judged with the very request :mod:`conflictlab.conflicts.judging`
builds for a real response:

* ``conflicts_behaviour``: ``category`` (a CONFLICTS short name),
  ``question``, ``response``, ``adheres`` (yes/no) — the expected behaviour
  judge;
* ``conflicts_recall``: ``question``, ``answer``, ``response``,
  ``includes_answer`` (yes/no) — the answer recall judge (a hedge that
  includes the answer is yes, paper §4);
* ``conflicts_grounding``: ``question``, ``results`` (search results as the
  release holds them: ``url``, ``title``, ``snippet``, ``date``,
  ``short_text``), ``response``, ``labels`` (one FACTS label per sentence of
  :func:`conflictlab.conflicts.citations.sentences`) — the grounding judge.
"""

from __future__ import annotations

from conflictlab.conflicts.citations import sentences
from conflictlab.conflicts.judge_prompts import behaviour_request, recall_request
from conflictlab.conflicts.judging import response_grounding_request
from conflictlab.conflicts.prompts import TAXONOMY
from conflictlab.judges.gold import GoldKind, yes_no_error
from conflictlab.judges.prompts.facts import LABELS as FACTS_LABELS

RESULT_FIELDS = ("url", "title", "snippet", "date", "short_text")


def _behaviour_error(item: dict) -> str | None:
    if error := yes_no_error(item, "adheres"):
        return error
    return None if item["category"] in TAXONOMY else f"field 'category' must be one of {sorted(TAXONOMY)}"


def _grounding_error(item: dict) -> str | None:
    results = item["results"]
    if not results or not all(
        isinstance(r, dict) and all(isinstance(r.get(f), str) for f in RESULT_FIELDS) for r in results
    ):
        return f"field 'results' must hold search results with string fields {', '.join(RESULT_FIELDS)}"
    n = len(sentences(item["response"]))
    if len(item["labels"]) != n or not all(label in FACTS_LABELS for label in item["labels"]):
        return f"field 'labels' must hold one of {', '.join(FACTS_LABELS)} per sentence of the response ({n})"
    return None


GOLD_KINDS: dict[str, GoldKind] = {
    "conflicts_behaviour": GoldKind(
        fields={"category": str, "question": str, "response": str, "adheres": str},
        request=lambda item: behaviour_request(item["category"], item["question"], item["response"]),
        labels=lambda item: [item["adheres"]],
        error=_behaviour_error,
    ),
    "conflicts_recall": GoldKind(
        fields={"question": str, "answer": str, "response": str, "includes_answer": str},
        request=lambda item: recall_request(item["question"], item["answer"], item["response"]),
        labels=lambda item: [item["includes_answer"]],
        error=lambda item: yes_no_error(item, "includes_answer"),
    ),
    "conflicts_grounding": GoldKind(
        fields={"question": str, "results": list, "response": str, "labels": list},
        request=lambda item: response_grounding_request(item["question"], item["results"], item["response"]),
        labels=lambda item: list(item["labels"]),
        error=_grounding_error,
    ),
}

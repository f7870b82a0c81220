"""Judge-decided answer match for long free-text golds (``accuracy.free_text: judge``).

Golds of more than three words (long medical and temporal answers) are
matched verbatim by :mod:`conflictlab.contextconflict.accuracy`, which
under-counts paraphrases. With ``free_text: judge`` the judge decides those
samples (:mod:`conflictlab.judges.prompts.equivalence`) and the accuracy
table counts them under rule ``free_text_judged``; an unreadable verdict
leaves the verbatim decision in place, counted as ``free_text_long``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from conflictlab.contextconflict.accuracy import extract_answer, score_answer
from conflictlab.judges.prompts.equivalence import equivalence_request
from conflictlab.judges.requests import JudgeRequest, read_choices

ANSWER_MATCH_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("extracted", pa.string(), nullable=False),
        pa.field("equivalent", pa.bool_()),  # null: unparseable reply
    ]
)


def judged_answer_matches(
    groups: Sequence[tuple[str, Sequence[dict], Sequence[dict]]],
    ask: Callable[[list[JudgeRequest]], list[str]],
    *,
    judge: str,
) -> pa.Table:
    """One row per generated response whose gold is long free text (the samples
    the verbatim rule scores as ``free_text_long``), over every (responding
    model, samples, its responses) group; ``ask`` is called once with the
    requests of all groups, so that the judge batches across them."""
    chosen = []  # (model, sample, extracted answer)
    for model, samples, responses in groups:
        by_id = {r["sample_id"]: r for r in responses}
        for sample in samples:
            response = by_id.get(sample["sample_id"])
            if response is None or response["status"] != "ok" or not sample["answer"]:
                continue
            extracted, _ = extract_answer(response["response"] or "")
            if score_answer(extracted, sample["answer"]).rule == "free_text_long":
                chosen.append((model, sample, extracted))
    requests = [equivalence_request(s["question"], s["answer"], extracted) for _, s, extracted in chosen]
    rows = []
    for (model, sample, extracted), request, reply in zip(chosen, requests, ask(requests)):
        (choice,) = read_choices(request, reply)
        rows.append(
            {
                "sample_id": sample["sample_id"],
                "model": model,
                "conflict_type": sample["conflict_type"],
                "judge": judge,
                "extracted": extracted,
                "equivalent": None if choice is None else choice == "yes",
            }
        )
    return pa.Table.from_pylist(rows, schema=ANSWER_MATCH_SCHEMA)

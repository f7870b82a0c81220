"""NQ-Swap scoring: exact match against the substituted and the original answers, and the memorisation ratio.

* The answer of a completion is its first non-empty line, stripped
  (:func:`answer_of`): the prompts end in ``A:`` and greedy decoding goes on
  to write the next ``Q:`` line.
* Exact match: SQuAD's normalisation (lower case; punctuation removed; the
  articles a, an, the removed; whitespace collapsed; :func:`normalize_answer`)
  on both sides, then equality with any of the gold answers.
* ``em_sub``: the answer matches ``sub_answer`` (faithful to the substituted
  context); ``em_org``: it matches ``org_answer`` (the memorised answer).
  :func:`conflictlab.nq_swap.dataset.normalise_record` refuses an item whose
  two answer lists share a normalised answer, so no answer matches both.
* Memorisation ratio (Longpre et al. 2021): ``MR = EM_org / (EM_org +
  EM_sub)``, the share of original answers among the answers that match
  either one. It is a proportion over those items, so its n is their number
  (not the number of items) and its interval Clopper-Pearson at that n.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import pyarrow as pa

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)

SCORE_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("run", pa.string(), nullable=False),  # a setting or a method (conflictlab.nq_swap.generation.RUNS)
        pa.field("answer", pa.string(), nullable=False),
        pa.field("em_sub", pa.bool_(), nullable=False),
        pa.field("em_org", pa.bool_(), nullable=False),
    ]
)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, punctuation and the articles a/an/the removed, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_of(completion: str) -> str:
    """The answer in a completion: its first non-empty line, stripped ("" when there is none)."""
    return next((line.strip() for line in completion.splitlines() if line.strip()), "")


def exact_match(prediction: str, answers: Sequence[str]) -> bool:
    """Whether ``prediction`` equals any of ``answers`` after :func:`normalize_answer`
    (an empty prediction matches nothing)."""
    predicted = normalize_answer(prediction)
    return bool(predicted) and any(predicted == normalize_answer(a) for a in answers)


def score_responses(items: pa.Table, responses: pa.Table) -> pa.Table:
    """:data:`SCORE_SCHEMA` rows, one per response: ``items`` of
    :data:`~conflictlab.nq_swap.dataset.ITEM_SCHEMA`; ``responses`` with
    ``item_id``, ``model``, ``run`` and ``text`` (the completion). A response
    whose item is not in ``items`` is a ValueError naming it."""
    gold = {
        i: (sub, org)
        for i, sub, org in zip(
            items.column("item_id").to_pylist(),
            items.column("sub_answer").to_pylist(),
            items.column("org_answer").to_pylist(),
        )
    }
    rows = []
    for item, model, run, text in zip(*(responses.column(c).to_pylist() for c in ("item_id", "model", "run", "text"))):
        if item not in gold:
            raise ValueError(f"response of {model} ({run}) to item {item!r}, which the data table does not hold")
        answer = answer_of(text)
        sub, org = gold[item]
        rows.append(
            {
                "item_id": item,
                "model": model,
                "run": run,
                "answer": answer,
                "em_sub": exact_match(answer, sub),
                "em_org": exact_match(answer, org),
            }
        )
    return pa.Table.from_pylist(rows, schema=SCORE_SCHEMA)

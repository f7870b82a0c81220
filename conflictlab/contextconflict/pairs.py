"""The prompts the mechanistic analyses and steering read activations from.

* ``pairs``: each sample's conflict prompt and its consistent counterpart with
  the same template (:func:`consistent_counterpart` says which pieces are
  kept, and by which rule);
* ``projection``: the combined prompt and one single-evidence prompt per piece.

:func:`activation_index` is the table stored beside each states array.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.prompts import build_messages, encode_messages, get_template

_DATE = re.compile(r"\b(1[5-9]\d{2}|20\d{2}|21\d{2})\b")


@dataclass(frozen=True)
class PairRule:
    """How the consistent counterpart of a sample was made."""

    keep: tuple[int, ...]  # 0-based indices of the evidence kept
    rule: str
    ambiguous: bool


def consistent_counterpart(sample: dict, *, drop_last: int = 1) -> PairRule:
    """The evidence a consistent counterpart keeps, and the rule used.

    - misinformation, inferential/medical_qa: the pieces whose
      ``accuracy_labels`` are true (``labels_true``);
    - inferential folio / entailment_bank: the release does not mark the
      appended conflicting statements, so the last ``drop_last`` pieces are
      dropped (``drop_last_k``); the paper added one or two statements, so a
      pair is *ambiguous* when that many more could also be conflicting,
      i.e. always for ``drop_last=1``, and when fewer than two pieces remain;
    - temporal: the pieces whose latest year equals the latest year in the
      sample (``latest_anchor``); without years, the last piece
      (``fallback_last``, ambiguous);
    - granularity, perspective, ambiguity: the release has no specificity,
      stance or entity labels; the first piece alone (``first_piece``): one
      level, one stance, one entity. Always marked ambiguous for perspective
      and granularity, where a later piece may share the first one's view.

    Against the paper's Appendix D.1 (:data:`APPENDIX_D1` says it per rule):
    misinformation and temporal follow it. It cannot be followed where the
    release lacks the field the appendix's rule reads (the shared sample of
    the release: ``../shared/contextconflict_sample``, every key of every
    file): FOLIO and EntailmentBank files hold ``question``, ``content`` and
    ``answer`` only, so the "GPT-5-generated conflicting branch" the appendix
    removes is not marked, and its position is not stated either (the paper,
    §2.2: "one or two extra statements"); dropping the last piece assumes the
    statements were appended. Granularity and perspective files hold
    ``question`` and ``content`` only: no specificity level (granularity:
    "all broad-syndrome or all specific-disease") and no stance label
    (perspective: "the same stance label"), so no subset of several pieces
    can be shown to share one; a single piece is the only set sure to. For
    ambiguity the release has ``content_pid`` (one page id per piece); the
    first piece alone refers to one entity, as the appendix asks, but pieces
    of the same entity after it are dropped rather than kept.
    """
    n = sample["n_evidence"]
    kind, subset = sample["conflict_type"], sample["subset"]
    labels = sample.get("accuracy_labels")
    if kind == "misinformation" or (kind == "inferential" and subset == "medical_qa"):
        if labels and any(labels) and not all(labels):
            return PairRule(tuple(i for i, ok in enumerate(labels) if ok), "labels_true", False)
        return PairRule((0,), "fallback_first", True)
    if kind == "inferential":
        keep = tuple(range(max(1, n - drop_last)))
        return PairRule(keep, f"drop_last_{drop_last}", drop_last < 2 or len(keep) < 2)
    if kind == "temporal":
        years = [max((int(y) for y in _DATE.findall(text)), default=None) for text in sample["evidence"]]
        known = [y for y in years if y is not None]
        if known:
            anchor = max(known)
            keep = tuple(i for i, y in enumerate(years) if y == anchor)
            if len(keep) < n:
                return PairRule(keep, "latest_anchor", False)
        return PairRule((n - 1,), "fallback_last", True)
    return PairRule((0,), "first_piece", kind in ("perspective", "granularity"))


# Each (type, rule) of consistent_counterpart against the paper's Appendix D.1
# (Table 8's appendix_d1 column; the docstring above says why).
APPENDIX_D1 = {
    ("misinformation", "labels_true"): "follows (pieces labelled correct)",
    ("misinformation", "fallback_first"): "deviates (labels all true or all false: first piece)",
    (
        "inferential",
        "labels_true",
    ): "follows in spirit (medical_qa: gold-correct chains; D.1 names FOLIO/EntailmentBank only)",
    ("inferential", "fallback_first"): "deviates (labels all true or all false: first piece)",
    ("temporal", "latest_anchor"): "follows (one timestamp, the latest)",
    ("temporal", "fallback_last"): "deviates (no year in the text: last piece)",
    ("granularity", "first_piece"): "deviates (no specificity labels in the release)",
    ("perspective", "first_piece"): "deviates (no stance labels in the release)",
    ("ambiguity", "first_piece"): "follows in part (one entity; later pieces of it dropped)",
}


def appendix_d1(conflict_type: str, index: list[dict]) -> str:
    """How the pairs of one type's ``pairs`` index (:data:`INDEX_SCHEMA`
    rows) stand against Appendix D.1, one clause per rule used."""
    rules = sorted({r["rule"] for r in index if r["variant"] == "conflict"})

    def verdict(rule: str) -> str:
        if rule.startswith("drop_last_"):
            return "deviates (the appended branch is not marked in the release: last pieces dropped)"
        return APPENDIX_D1.get((conflict_type, rule), "not in Appendix D.1")

    return "; ".join(f"{rule}: {verdict(rule)}" for rule in rules)


# --------------------------------------------------------------------------
# Probes (Figure 2, Table 8).


def pair_prompts(tokenizer, samples: list[dict], templates: dict[str, str], *, drop_last: int = 1) -> list[dict]:
    """Two prompts per sample, same template: all evidence (``conflict``) and
    the consistent counterpart's evidence (``consistent``)."""
    rows = []
    for sample in samples:
        pair = consistent_counterpart(sample, drop_last=drop_last)
        template = templates[sample["task_family"]]
        kept = [sample["evidence"][i] for i in pair.keep]
        for variant, evidence in (("conflict", sample["evidence"]), ("consistent", kept)):
            _, ids = encode_messages(tokenizer, build_messages(template, sample["question"], evidence))
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "variant": variant,
                    "ids": ids,
                    "n_evidence": len(evidence),
                    "rule": pair.rule,
                    "ambiguous": pair.ambiguous,
                }
            )
    return rows


SINGLE_TEMPLATE = {
    "reasoning_combined": "reasoning_single",
    "summarization_simple": "summarization_single",
    "summarization_neutral": "summarization_single",
}


def projection_prompts(
    tokenizer, samples: list[dict], templates: dict[str, str], *, matched: bool = False
) -> list[dict]:
    """Per sample the combined prompt (``combined``) and one single-evidence
    prompt per piece (``single_1`` ...). With ``matched=True`` the combined
    prompt takes the single template's system message, so that a system
    prompt offset cannot explain the projections."""
    rows = []
    for sample in samples:
        combined = templates[sample["task_family"]]
        single = SINGLE_TEMPLATE[combined]
        messages = build_messages(combined, sample["question"], sample["evidence"])
        if matched:
            messages[0] = {"role": "system", "content": get_template(single).system}
        variants = [("combined", messages)] + [
            (f"single_{i + 1}", build_messages(single, sample["question"], [piece]))
            for i, piece in enumerate(sample["evidence"])
        ]
        for variant, msgs in variants:
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "variant": variant,
                    "ids": encode_messages(tokenizer, msgs)[1],
                    "n_evidence": sample["n_evidence"],
                    "rule": "",
                    "ambiguous": False,
                }
            )
    return rows


INDEX_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),
        pa.field("n_prompt_tokens", pa.int32(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("rule", pa.string(), nullable=False),  # pair rule ("" for projection prompts)
        pa.field("ambiguous", pa.bool_(), nullable=False),
    ]
)


# How each analysis' states are stored (rule activations, and the planted
# ones of conflictlab.contextconflict.synthetic): the probes and projections
# read float16 states; steering directions are means of differences, kept in
# float32 so they equal a direct computation.
STORED_DTYPE = {"pairs": np.float16, "projection": np.float16, "directions": np.float32}


def activation_index(prompts: list[dict]) -> pa.Table:
    """The index of a states array: one row per prompt of :func:`pair_prompts`
    or :func:`projection_prompts`, ``row`` = its row in the array."""
    return pa.table(
        {
            "sample_id": [p["sample_id"] for p in prompts],
            "variant": [p["variant"] for p in prompts],
            "row": list(range(len(prompts))),
            "n_prompt_tokens": [len(p["ids"]) for p in prompts],
            "n_evidence": [p["n_evidence"] for p in prompts],
            "rule": [p["rule"] for p in prompts],
            "ambiguous": [p["ambiguous"] for p in prompts],
        },
        schema=INDEX_SCHEMA,
    )

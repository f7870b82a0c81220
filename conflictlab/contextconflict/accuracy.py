"""Accuracy of reasoning responses (inferential, misinformation, temporal).

Scoring rules, in order (examples in tests/test_accuracy.py):

1. **Answer span.** The text of the *last* ``<answer>…</answer>`` span. A
   response without a complete span is scored on its whole text and flagged
   (``tag_found=False``); the missing-tag rate is reported. A response that
   was never generated (status ``too_long``/``error``) is wrong. No sample
   leaves the denominator.
2. **Normalisation.** Unicode NFKC, case-folded, every run of punctuation,
   underscores and whitespace becomes one space; leading articles (a, an,
   the) are dropped from golds. ``INSUFFICIENT_INFORMATION`` therefore
   normalises to ``insufficient information``.
3. **Label golds** are parsed strictly. When the gold is one of a closed
   label set (``True/False/Uncertain`` for FOLIO, ``Yes/No`` for SciFact), the
   answer's *leading clause* decides: the first clause (ending at
   ``. , ; : ! ?`` or a line break) that names any label or the abstention
   label ``insufficient information``; the answer is right only if the set
   it names, together with the abstention label if the answer names it
   anywhere (a hedge), is exactly ``{gold}``. "Yes, there is no evidence
   against it" is "yes"; "True or False" names two labels and is wrong. A *negated* label (one of
   the two words before it is "not" or "never", or a contraction ending in
   n't: "not true", "isn't yes") names its complement where the set is
   binary (Yes/No: "not yes" names "no") and is ambiguous, hence wrong, where
   it is not (True/False/Uncertain: "not true" could mean false or
   uncertain).
4. **Abstention golds** (``INSUFFICIENT_INFORMATION``): right when the answer
   names the abstention label.
5. **Free-text golds** (entities, dates, sentences): right when a normalised
   gold occurs in the normalised answer, on word boundaries for golds of up
   to three words (so "7" does not match "17"), as a substring for longer
   golds; a list gold is right when any element matches. An answer that
   names the abstention label is wrong (it hedges). Golds of more than three
   words need the verbatim substring, which under-counts paraphrases: such
   samples get rule ``free_text_long`` and the summary counts them. With
   ``accuracy.free_text: judge`` an LLM judge decides them instead
   (:mod:`conflictlab.contextconflict.answer_match`), rule ``free_text_judged``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.io import group_in_order
from conflictlab.metrics import method_label
from conflictlab.stats import proportion_interval

_ANSWER_SPAN = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)
_ARTICLE = re.compile(r"^(a|an|the) ")

ABSTAIN = "insufficient information"
LABEL_SETS = (frozenset({"true", "false", "uncertain"}), frozenset({"yes", "no"}))
_NEGATED_AMBIGUOUS = "<negated label>"
RULES = ("label", "abstain", "free_text", "free_text_long", "free_text_judged", "not_generated")


def extract_answer(response: str) -> tuple[str, bool]:
    """(text to score, whether a complete ``<answer>`` span was found)."""
    spans = _ANSWER_SPAN.findall(response)
    if spans:
        return spans[-1], True
    return response, False


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SEPARATORS.sub(" ", text).strip()


def _normalize_gold(gold: str) -> str:
    return _ARTICLE.sub("", normalize(gold))


def _mentions(norm_text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", norm_text) is not None


def _negated(norm_text: str, start: int) -> bool:
    """Whether the label at ``start`` of a normalised text is negated: "not"
    or "never" among the two words before it, or a contraction ending in n't
    (normalised to "isn t")."""
    before = norm_text[:start].split()[-3:]
    if any(word in ("not", "never") for word in before[-2:]):
        return True
    return any(word == "t" and prev.endswith("n") for prev, word in zip(before, before[1:]))


def named_labels(norm_text: str, labels: frozenset[str]) -> set[str]:
    """The labels (and the abstention label) a normalised answer names, a
    negated label read as its complement in a binary set, else as ambiguous."""
    named = set()
    for label in labels | {ABSTAIN}:
        for match in re.finditer(rf"(?<!\w){re.escape(label)}(?!\w)", norm_text):
            if not _negated(norm_text, match.start()):
                named.add(label)
            elif label != ABSTAIN and len(labels) == 2:
                named |= labels - {label}
            else:
                named.add(_NEGATED_AMBIGUOUS)
    return named


_CLAUSE_END = re.compile(r"[.,;:!?\n]+")


def leading_labels(answer: str, labels: frozenset[str]) -> set[str]:
    """The labels named by the first clause of ``answer`` that names any
    (clauses end at . , ; : ! ? or a line break), by :func:`named_labels`.

    So "Yes, there is no evidence against it" is read as "yes" (the later
    "no" is not an answer), "No. Yes would need more evidence" as "no", and
    "True or False" (one clause, two labels) stays ambiguous. The abstention
    label named (not negated) anywhere is added: "Yes, but there is
    insufficient information" hedges, and names two labels.
    """
    hedged = {ABSTAIN} & named_labels(normalize(answer), frozenset())
    for clause in _CLAUSE_END.split(answer):
        named = named_labels(normalize(clause), labels)
        if named:
            return named | hedged
    return hedged


@dataclass(frozen=True)
class Score:
    correct: bool
    rule: str  # one of RULES


def score_answer(answer: str, golds: Sequence[str]) -> Score:
    """Score one extracted answer against its gold(s) by the module's rules."""
    norm = normalize(answer)
    norm_golds = [_normalize_gold(g) for g in golds if normalize(g)]
    if not norm_golds:
        raise ValueError("score_answer needs at least one non-empty gold")
    for labels in LABEL_SETS:
        if all(g in labels for g in norm_golds):
            named = leading_labels(answer, labels)
            return Score(len(named) == 1 and named <= set(norm_golds), "label")
    if all(g == ABSTAIN for g in norm_golds):
        return Score(_mentions(norm, ABSTAIN), "abstain")
    rule = "free_text_long" if any(len(g.split()) > 3 for g in norm_golds if g != ABSTAIN) else "free_text"
    if _mentions(norm, ABSTAIN):
        return Score(False, rule)
    for gold in norm_golds:
        if gold == ABSTAIN:
            continue
        hit = _mentions(norm, gold) if len(gold.split()) <= 3 else gold in norm
        if hit:
            return Score(True, rule)
    return Score(False, rule)


ACCURACY_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("subset", pa.string(), nullable=False),
        pa.field("implicit", pa.bool_(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("tag_found", pa.bool_(), nullable=False),
        pa.field("extracted", pa.string()),
        pa.field("gold", pa.list_(pa.string()), nullable=False),
        pa.field("rule", pa.string(), nullable=False),
        pa.field("correct", pa.bool_(), nullable=False),
    ]
)


def score_responses(
    samples: pa.Table, responses: pa.Table, model: str, *, judged: dict[str, bool | None] | None = None
) -> pa.Table:
    """Per-sample accuracy rows (:data:`ACCURACY_SCHEMA`), one per row of
    ``samples`` in its order.

    ``judged`` maps sample ids to a judge's equivalence verdict; it decides
    the samples whose rule would be ``free_text_long`` (None: unreadable,
    the verbatim decision stays).

    Every sample must have exactly one response row (its status may be
    ``too_long`` or ``error``, which scores as wrong); a sample without one is
    an error rather than a silently smaller denominator.
    """
    response_ids = responses.column("sample_id")
    if pc.count_distinct(response_ids, mode="all").as_py() != len(response_ids):
        counts = pc.value_counts(response_ids)
        repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
        raise ValueError(f"responses of {model}: duplicate sample_id {repeated[0].as_py()!r}")
    sample_ids, golds = samples.column("sample_id"), samples.column("answer")
    at = pc.index_in(sample_ids, value_set=response_ids)  # each sample's response row
    unusable = pc.or_(pc.is_null(golds), pc.is_null(at))
    if pc.any(unusable).as_py():
        first = pc.index(unusable, True).as_py()
        if not golds[first].is_valid:
            raise ValueError(
                f"sample {sample_ids[first].as_py()}: field 'answer' is missing; accuracy needs a gold answer"
            )
        raise ValueError(f"responses of {model}: no row for sample {sample_ids[first].as_py()!r}")
    status = responses.column("status").take(at)
    generated = pc.equal(status, "ok").combine_chunks()
    verdicts = pa.nulls(len(sample_ids), pa.bool_())
    if judged:
        verdicts = pa.array(list(judged.values()), pa.bool_()).take(
            pc.index_in(sample_ids, value_set=pa.array(list(judged), pa.string()))
        )
    # per generated response: answer extraction and string matching, inherently one at a time
    scored = []
    for text, gold, verdict in zip(
        *(c.filter(generated).to_pylist() for c in (responses.column("response").take(at), golds, verdicts))
    ):
        extracted, tag_found = extract_answer(text or "")
        score = score_answer(extracted, gold)
        if score.rule == "free_text_long" and verdict is not None:
            score = Score(verdict, "free_text_judged")
        scored.append((extracted, tag_found, score.rule, score.correct))
    extracted, tag_found, rule, correct = zip(*scored) if scored else ((), (), (), ())

    def spread(values: tuple, default, kind: pa.DataType) -> pa.Array:
        """``values`` at the generated rows, ``default`` elsewhere."""
        return pc.replace_with_mask(
            pa.repeat(pa.scalar(default, kind), len(sample_ids)), generated, pa.array(values, kind)
        )

    return (
        pa.table(
            {
                "sample_id": sample_ids,
                "model": pa.repeat(pa.scalar(model, pa.string()), len(sample_ids)),
                **{name: samples.column(name) for name in ("conflict_type", "subset", "implicit")},
                "status": status,
                "tag_found": spread(tag_found, False, pa.bool_()),
                "extracted": spread(extracted, None, pa.string()),
                "gold": golds,
                "rule": spread(rule, "not_generated", pa.string()),
                "correct": spread(correct, False, pa.bool_()),
            }
        )
        .cast(ACCURACY_SCHEMA)
        .combine_chunks()
    )


SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("level", pa.string(), nullable=False),  # type | subset | implicit
        pa.field("group", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("accuracy", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("missing_tag_rate", pa.float64()),
        pa.field("n_not_generated", pa.int64(), nullable=False),
    ]
    # how many samples each scoring rule decided (free_text_long: verbatim
    # substring of a gold of more than three words, which misses paraphrases)
    + [pa.field(f"n_{rule}", pa.int64(), nullable=False) for rule in RULES if rule != "not_generated"]
)


def accuracy_caption(scorer: str) -> str:
    """The accuracy table's caption (``scorer``: how free-text golds are decided); its interval's name is that of
    the function :func:`summarize_accuracy` calls."""
    return (
        f"Accuracy on reasoning conflicts (%, {method_label(proportion_interval)} 95% CI over the n samples, none at "
        "n < 2; missing_tag_rate among generated responses). Scored by answer matching of the tagged answer against "
        f"the golds ({scorer})."
    )


def summarize_accuracy(per_sample: pa.Table) -> pa.Table:
    """Accuracy with Clopper-Pearson 95% intervals (:func:`conflictlab.stats.proportion_interval`, none at
    n < 2) per (model, type) overall, per subset, and per implicit/explicit split (:func:`accuracy_caption`)."""
    rules = [rule for rule in RULES if rule != "not_generated"]
    generated = pc.equal(per_sample.column("status"), "ok")
    flags = {
        "correct": per_sample.column("correct"),
        "generated": generated,
        "missing": pc.and_(generated, pc.invert(per_sample.column("tag_found"))),
        **{f"n_{rule}": pc.equal(per_sample.column("rule"), rule) for rule in rules},
    }
    # pyarrow, not polars: the answer-match rule's environment (envs/judges.yaml) imports this module
    frame = pa.table(
        {
            **{key: per_sample.column(key) for key in ("model", "conflict_type", "subset", "implicit")},
            **{name: pc.cast(flag, pa.int64()) for name, flag in flags.items()},
        }
    )

    def by(column: str | None) -> dict[tuple, list[dict]]:
        """(model, type) -> its groups' counts by ``column`` (None: the type), in order of first appearance."""
        found = defaultdict(list)
        keys = ["model", "conflict_type"] + ([column] if column else [])
        grouped = group_in_order(frame, keys, [(name, "sum") for name in flags] + [("model", "count")])
        for group in grouped.rename_columns(
            [name.removesuffix("_sum") for name in grouped.column_names]
        ).to_pylist():  # one per group
            found[group["model"], group["conflict_type"]].append({**group, "n": group["model_count"]})
        return found

    types, subsets, splits = by(None), by("subset"), by("implicit")
    rows = []
    for model, conflict_type in sorted(types):  # one per (model, type)
        groups = [("type", "all", types[model, conflict_type][0])]
        groups += [("subset", group["subset"], group) for group in subsets[model, conflict_type]]
        halves = {group["implicit"]: group for group in splits[model, conflict_type]}
        groups += [
            ("implicit", name, halves[implicit])
            for implicit, name in ((False, "explicit"), (True, "implicit"))
            if implicit in halves
        ]
        for level, name, group in groups:
            mean, low, high = proportion_interval(group["correct"], group["n"])
            rows.append(
                {
                    "model": model,
                    "conflict_type": conflict_type,
                    "level": level,
                    "group": name,
                    "n": group["n"],
                    "accuracy": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "missing_tag_rate": group["missing"] / group["generated"] if group["generated"] else None,
                    "n_not_generated": group["n"] - group["generated"],
                    **{f"n_{rule}": group[f"n_{rule}"] for rule in rules},
                }
            )
    return pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA)

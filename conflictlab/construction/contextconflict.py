"""ContextConflict's semi-synthetic subsets (paper §2.2, Appendix B.1), rebuilt from the base datasets.

Four constructions, each a list of :class:`Job` (one prompt of
:mod:`conflictlab.construction.prompts` per base record) whose reply is
checked by the validation rules its prompt states and then written as a
sample in the released folder layout (``data/<type>_conflict/<subset>/<id>.json``):

* SciFact -> ``misinformation/sci_data`` in two steps (Figure 6): a question
  from the claim and its rationale sentences, then as many conflicting
  statements as the rationale has. Answer inherited from the SciFact label
  (SUPPORT: "Yes", CONTRADICT: "No"); ``accuracy_labels`` True for the
  original sentences, False for the generated ones.
* FOLIO, EntailmentBank -> ``inferential/folio``, ``inferential/entailment_bank``
  (Figure 7): the model keeps the premises or adds one or two; the source
  label stays and every instance goes to double annotation (the audit).
* ConflictBank QA -> ``temporal/cb_claim_evidence_tmp`` (Figure 9) and
  ``misinformation/cb_claim_evidence`` (Figure 10): a question over the
  default and conflicting evidence. The temporal answer follows the asked
  year against the record's time span (a rule written here, checked by the
  audit's double annotation); the general answer is the default object.

Gold labels never come from the generator. Every rejected base record and
every rejected generation is a row with its source, record and reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from conflictlab.construction import prompts

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),  # base file, or the prompt name for a generation
        pa.field("record", pa.string(), nullable=False),  # line number (from 1) or record id
        pa.field("stage", pa.string(), nullable=False),  # "read" | "generate"
        pa.field("reason", pa.string(), nullable=False),
    ]
)


class RecordError(ValueError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Job:
    """One generation: a prompt for one base record and what turns its reply into a sample."""

    key: str  # "<subset>/<record id>", unique
    conflict_type: str
    subset: str
    template: str  # a name of prompts.PROMPTS
    prompt: str
    validate: Callable[[str], str | None]  # the reply -> a rejection reason, or None
    build: Callable[[str], dict]  # a valid reply -> the released sample (question, content, answer, ...)
    annotate: str = ""  # what the audit asks annotators to check
    final: bool = True  # False: an intermediate step (SciFact's question), not a sample


@dataclass
class Built:
    jobs: list[Job] = field(default_factory=list)
    rejections: list[dict] = field(default_factory=list)

    def read(
        self, path: str | os.PathLike, parse: Callable[[Any, int], Any], errors: tuple[type[Exception], ...] = ()
    ) -> Iterator[tuple[int, Any, Any]]:
        """(line number, record, ``parse(record, line number)``) of each record of the JSON-lines file ``path``.
        A line that is not JSON, or whose record ``parse`` refuses with a
        :class:`RecordError` (or one of ``errors``), is a "read" rejection
        with the file, the line and the reason, and is not yielded."""
        for number, record in read_jsonl(path):
            try:
                if isinstance(record, RecordError):
                    raise record
                parsed = parse(record, number)
            except (RecordError, *errors) as err:
                reason = getattr(err, "problem", None) or str(err)
                self.rejections.append({"source": str(path), "record": str(number), "stage": "read", "reason": reason})
                continue
            yield number, record, parsed


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    """(line number from 1, parsed value or RecordError) of each non-blank line."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as err:
                yield number, RecordError(f"not JSON ({err.msg} at column {err.colno})")


def _text(record: dict, key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"field {key!r} is missing or not a non-empty string")
    return value.strip()


# ---- validation rules (the requirements each prompt states) -------------------------------------

_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s*(.+?)\s*$")
_META = re.compile(r"source_\d|source_#|\boption [ab]\b|^\s*(note|explanation|here is|here are)\b", re.IGNORECASE)
_YES_NO_START = re.compile(r"^(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.IGNORECASE)
_WH_START = re.compile(r"^(what|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)
_NEGATION = {"not", "no", "never", "n't", "cannot"}


def numbered_list(reply: str) -> list[str] | None:
    """The statements of a reply that is only a numbered list 1..n, else None."""
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    items = [_NUMBERED.match(line) for line in lines]
    if not lines or not all(items) or [int(m.group(1)) for m in items] != list(range(1, len(items) + 1)):
        return None
    return [m.group(2) for m in items]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("n't", " n't"))


def one_question(reply: str, *, max_words: int | None = None) -> str | None:
    """Why ``reply`` is not one self-contained question (None when it is)."""
    text = reply.strip()
    if not text:
        return "empty reply"
    if "\n" in text:
        return "more than one line"
    if not text.endswith("?") or text.count("?") != 1:
        return "not exactly one question ending with '?'"
    if max_words is not None and len(text.split()) > max_words:
        return f"{len(text.split())} words, more than {max_words}"
    return None


def check_misinformation_question(reply: str) -> str | None:
    return one_question(reply)


def check_conflicting_statements(original: list[str]) -> Callable[[str], str | None]:
    """Figure 6, second prompt: a numbered list of exactly as many statements,
    none a simple negation of an original, none repeated or copied."""

    def check(reply: str) -> str | None:
        items = numbered_list(reply)
        if items is None:
            return "not a numbered list only"
        if len(items) != len(original):
            return f"{len(items)} statements for {len(original)} originals"
        if len({s.lower() for s in items}) < len(items):
            return "repeated statements"
        originals = [[w for w in _words(s) if w not in _NEGATION] for s in original]
        for s in items:
            words = _words(s)
            if s.strip().lower() in {o.strip().lower() for o in original}:
                return "a statement copies an original"
            if set(words) & _NEGATION and [w for w in words if w not in _NEGATION] in originals:
                return "a statement is a simple 'not' negation of an original"
        return None

    return check


def check_premises(premises: list[str]) -> Callable[[str], str | None]:
    """Figure 7: a numbered list that keeps every premise (in order) and adds 0, 1 or 2 statements; no meta-talk."""

    def check(reply: str) -> str | None:
        items = numbered_list(reply)
        if items is None:
            return "not a numbered list only"
        if any(_META.search(s) for s in items):
            return "meta-talk or source references"
        kept = [s for s in items if s.strip() in {p.strip() for p in premises}]
        if [s.strip() for s in kept] != [p.strip() for p in premises]:
            return "an original premise is missing, changed or reordered"
        added = len(items) - len(premises)
        if not 0 <= added <= 2:
            return f"{added} statements added (0, 1 or 2 allowed)"
        return None

    return check


def check_temporal_question(reply: str) -> str | None:
    """Figure 9: one question, at most 20 words, a specific year, not yes/no, not multiple choice."""
    reason = one_question(reply, max_words=20)
    if reason:
        return reason
    text = reply.strip()
    if not re.search(r"\b(1[5-9]|2[0-9])\d\d\b", text):
        return "no specific year"
    if _YES_NO_START.match(text):
        return "a yes/no question"
    if re.search(r"\b[A-D][.)]\s|\([a-d]\)", text):
        return "a multiple-choice question"
    return None


def check_general_question(objects: list[str]) -> Callable[[str], str | None]:
    """Figure 10: one WH-question that names neither claim's object."""

    def check(reply: str) -> str | None:
        reason = one_question(reply)
        if reason:
            return reason
        text = reply.strip()
        if not _WH_START.match(text):
            return "not a WH-question"
        if any(o.lower() in text.lower() for o in objects):
            return "reveals a claim's content"
        return None

    return check


# ---- the constructions --------------------------------------------------------------------------


def scifact_jobs(claims_path: str, corpus_path: str, *, question_of: dict[str, str] | None = None) -> Built:
    """SciFact claims with rationale sentences -> step 1 (questions), or with
    ``question_of`` (record key -> the validated question) step 2 (conflicting statements)."""
    built = Built()

    def document(doc: dict, _line: int) -> tuple[int, list[str]]:
        if not isinstance(doc.get("doc_id"), int) or not isinstance(doc.get("abstract"), list):
            raise RecordError("needs an integer 'doc_id' and an 'abstract' list of sentences")
        return doc["doc_id"], doc["abstract"]

    corpus = dict(parsed for _, _, parsed in built.read(corpus_path, document))

    def claim_record(record: dict, _line: int) -> tuple[str, list[str], list[int], str]:
        claim = _text(record, "claim")
        evidence = record.get("evidence")
        if not isinstance(evidence, dict) or not evidence:
            raise RecordError("no 'evidence' (claims without rationales cannot be perturbed)")
        doc_id, annotations = next(iter(evidence.items()))
        abstract = corpus.get(int(doc_id))
        if abstract is None:
            raise RecordError(f"evidence document {doc_id} is not in the corpus")
        label = annotations[0].get("label")
        if label not in ("SUPPORT", "CONTRADICT"):
            raise RecordError(f"label {label!r} is not SUPPORT or CONTRADICT")
        indices = sorted({i for a in annotations for i in a.get("sentences", [])})
        if not indices or max(indices) >= len(abstract):
            raise RecordError("rationale sentence index outside the abstract")
        return claim, abstract, indices, label

    malformed = (ValueError, TypeError, AttributeError, IndexError)
    for number, record, (claim, abstract, indices, label) in built.read(claims_path, claim_record, malformed):
        original = [abstract[i] for i in indices]
        key = f"sci_data/{record.get('id', number)}"
        answer = "Yes" if label == "SUPPORT" else "No"
        if question_of is None:
            built.jobs.append(
                Job(
                    key,
                    "misinformation",
                    "sci_data",
                    "misinformation_question_fig6a",
                    prompts.misinformation_question(claim, original),
                    check_misinformation_question,
                    lambda reply: {"question": reply.strip()},
                    final=False,
                )
            )
        elif key in question_of:
            question = question_of[key]

            def build(reply, original=original, question=question, answer=answer):
                conflicting = numbered_list(reply)
                content = {f"source_{i}": s for i, s in enumerate(original + conflicting, start=1)}
                return {
                    "question": question,
                    "content": content,
                    "answer": answer,
                    "accuracy_labels": [True] * len(original) + [False] * len(conflicting),
                }

            built.jobs.append(
                Job(
                    key,
                    "misinformation",
                    "sci_data",
                    "misinformation_evidence_fig6b",
                    prompts.misinformation_evidence(claim, original),
                    check_conflicting_statements(original),
                    build,
                    "style and argument: do the generated statements read like the originals and oppose them?",
                )
            )
    return built


def _premise_job(key: str, subset: str, premises: list[str], hypothesis: str, question: str, answer: str) -> Job:
    def build(reply):
        items = numbered_list(reply)
        return {
            "question": question,
            "content": {f"source_{i}": s for i, s in enumerate(items, start=1)},
            "answer": answer,
        }

    return Job(
        key,
        "inferential",
        subset,
        "inferential_premises_fig7",
        prompts.inferential_premises(premises, hypothesis),
        check_premises(premises),
        build,
        "label: with the added statements, is the answer True, False or Uncertain?",
    )


def folio_jobs(path: str) -> Built:
    """FOLIO stories (premises one a line, conclusion, label True/False/Uncertain)."""

    def story(record: dict, _line: int) -> tuple[list[str], str, str]:
        premises = [p.strip() for p in _text(record, "premises").splitlines() if p.strip()]
        conclusion = _text(record, "conclusion")
        label = _text(record, "label")
        if label not in ("True", "False", "Uncertain"):
            raise RecordError(f"label {label!r} is not True, False or Uncertain")
        return premises, conclusion, label

    built = Built()
    for number, record, (premises, conclusion, label) in built.read(path, story):
        question = f"Based on the given evidence, is the hypothesis '{conclusion}' true, false, or uncertain?"
        built.jobs.append(
            _premise_job(f"folio/{record.get('example_id', number)}", "folio", premises, conclusion, question, label)
        )
    return built


def entailmentbank_jobs(path: str) -> Built:
    """EntailmentBank task_1 records: the triples are the premises, the hypothesis the conclusion."""

    def tree(record: dict, _line: int) -> tuple[list[str], str, str, str]:
        triples = (record.get("meta") or {}).get("triples")
        if not isinstance(triples, dict) or not triples:
            raise RecordError("field 'meta.triples' is missing or empty")
        premises = [triples[k] for k in sorted(triples, key=lambda k: int(re.sub(r"\D", "", k) or 0))]
        return premises, _text(record, "hypothesis"), _text(record, "question"), _text(record, "answer")

    built = Built()
    for number, record, (premises, hypothesis, question, answer) in built.read(path, tree):
        built.jobs.append(
            _premise_job(
                f"entailment_bank/{record.get('id', number)}", "entailment_bank", premises, hypothesis, question, answer
            )
        )
    return built


def temporal_answer(question: str, span: list[str], obj: str, replaced: str) -> str:
    """The answer to a question about a year (rule written here): the
    conflicting object within the claimed span, the default object before it,
    INSUFFICIENT_INFORMATION after it (as the released temporal sample)."""
    asked = int(re.search(r"\b(1[5-9]|2[0-9])\d\d\b", question).group(0))
    years = [int(re.search(r"\d{4}", date).group(0)) for date in span]
    if asked < years[0]:
        return obj
    if asked <= years[-1]:
        return replaced
    return "INSUFFICIENT_INFORMATION"


def conflictbank_jobs(path: str) -> Built:
    """ConflictBank QA records (the hub's format) -> a temporal and a general question each."""
    from conflictlab.conflictbank.dataset import RecordError as CBError
    from conflictlab.conflictbank.dataset import normalise_record

    built = Built()

    def record(raw: dict, line: int) -> dict:
        return normalise_record(raw, source=str(path), record_id=line)

    for number, raw, row in built.read(path, record, (CBError,)):
        subject = row.get("subject") or raw.get("subject", "")
        key = f"{number}"
        temporal_content = {"source_1": row["default_evidence"], "source_2": row["temporal_evidence"]}

        def temporal(reply, row=row, content=temporal_content):
            question = reply.strip()
            return {
                "question": question,
                "content": content,
                "answer": temporal_answer(question, row["temporal_span"], row["object"], row["replaced_object"]),
            }

        built.jobs.append(
            Job(
                f"cb_claim_evidence_tmp/{key}",
                "temporal",
                "cb_claim_evidence_tmp",
                "temporal_question_fig9",
                prompts.temporal_question(
                    subject,
                    row["default_claim"],
                    row["temporal_claim"],
                    row["default_evidence"],
                    row["temporal_evidence"],
                ),
                check_temporal_question,
                temporal,
                "label: which answer does the asked year give?",
            )
        )

        def general(reply, row=row):
            return {
                "question": reply.strip(),
                "content": {"source_1": row["default_evidence"], "source_2": row["misinformation_evidence"]},
                "answer": row["object"],
                "accuracy_labels": [True, False],
            }

        built.jobs.append(
            Job(
                f"cb_claim_evidence/{key}",
                "misinformation",
                "cb_claim_evidence",
                "general_question_fig10",
                prompts.general_question(subject, row["default_claim"], row["misinformation_claim"]),
                check_general_question([row["object"], row["replaced_object"]]),
                general,
                "question: does it ask about the subject without revealing either claim?",
            )
        )
    return built


def sample_jobs(jobs: list[Job], n: int | None, *, seed: int) -> list[Job]:
    """A seeded ``n`` of each subset's jobs (all when None), in key order."""
    import random

    if n is None:
        return sorted(jobs, key=lambda j: j.key)
    chosen: list[Job] = []
    for subset in sorted({j.subset for j in jobs}):
        members = sorted((j for j in jobs if j.subset == subset), key=lambda j: j.key)
        chosen += sorted(random.Random(f"{seed}/{subset}").sample(members, min(n, len(members))), key=lambda j: j.key)
    return chosen


INSTANCE_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("subset", pa.string(), nullable=False),
        pa.field("template", pa.string(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("reply", pa.string()),
        pa.field("finish_reason", pa.string()),
        pa.field("sample", pa.string()),  # the released JSON sample; null when rejected
        pa.field("rejection", pa.string()),  # null when accepted
        pa.field("annotate", pa.string(), nullable=False),
        pa.field("final", pa.bool_(), nullable=False),
    ]
)


def judge_replies(jobs: Iterable[Job], replies: Iterable[tuple[str | None, str | None]]) -> pa.Table:
    """Each job's reply (text, finish reason) validated: a sample or the reason it was rejected."""
    rows = []
    for job, (text, finish) in zip(jobs, replies, strict=True):
        if text is None:
            reason = f"no text (finish reason {finish})"
        elif finish == "length":
            reason = "cut at the token limit"
        else:
            reason = job.validate(text)
        sample = None if reason else json.dumps(job.build(text), ensure_ascii=False)
        rows.append(
            {
                "key": job.key,
                "conflict_type": job.conflict_type,
                "subset": job.subset,
                "template": job.template,
                "prompt": job.prompt,
                "reply": text,
                "finish_reason": finish,
                "sample": sample,
                "rejection": reason,
                "annotate": job.annotate,
                "final": job.final,
            }
        )
    return pa.Table.from_pylist(rows, schema=INSTANCE_SCHEMA)


def write_release(instances: pa.Table, root: str | os.PathLike) -> list[str]:
    """The accepted samples as ``root/<type>_conflict/<subset>/<n>.json`` (n
    from 1 per subset, in key order); returns the paths written."""
    from pathlib import Path

    written, counters = [], {}
    accepted = (r for r in instances.to_pylist() if r["sample"] is not None and r["final"])
    for row in sorted(accepted, key=lambda r: (r["subset"], r["key"])):
        folder = Path(root) / f"{row['conflict_type']}_conflict" / row["subset"]
        folder.mkdir(parents=True, exist_ok=True)
        counters[folder] = counters.get(folder, 0) + 1
        path = folder / f"{counters[folder]}.json"
        path.write_text(json.dumps(json.loads(row["sample"]), ensure_ascii=False, indent=4) + "\n", encoding="utf-8")
        written.append(str(path))
    return written


Generate = Callable[[list[Job]], list[tuple[str | None, str | None]]]  # jobs -> (text, finish reason) each


def stage_one(sources: dict[str, str], *, n: int | None, seed: int) -> tuple[list[Job], list[dict]]:
    """The first round's jobs (SciFact questions, FOLIO, EntailmentBank,
    ConflictBank questions), a seeded ``n`` per subset, and the base records rejected on reading.
    ``sources``: the ``construction.contextconflict`` paths."""
    builds = [
        scifact_jobs(sources["scifact_claims"], sources["scifact_corpus"]),
        folio_jobs(sources["folio"]),
        entailmentbank_jobs(sources["entailmentbank"]),
        conflictbank_jobs(sources["conflictbank"]),
    ]
    return sample_jobs([j for b in builds for j in b.jobs], n, seed=seed), [r for b in builds for r in b.rejections]


def stage_two(sources: dict[str, str], questions: dict[str, str]) -> list[Job]:
    """SciFact's second step for the records whose question was accepted (``questions``: key -> question)."""
    return sorted(
        scifact_jobs(sources["scifact_claims"], sources["scifact_corpus"], question_of=questions).jobs,
        key=lambda j: j.key,
    )


def planned_prompts(sources: dict[str, str], *, n: int | None, seed: int) -> list[str]:
    """Every prompt a run may send (both SciFact steps for every sampled record): the cost estimate's requests."""
    first, _ = stage_one(sources, n=n, seed=seed)
    questions = {j.key: "?" for j in first if not j.final}
    return [j.prompt for j in first] + [j.prompt for j in stage_two(sources, questions)]


def construct(sources: dict[str, str], generate: Generate, *, n: int | None, seed: int) -> tuple[pa.Table, pa.Table]:
    """(instances, rejections): both rounds generated and validated; the
    rejections hold the base records that could not be read and the
    generations that failed their prompt's rules."""
    first, rejections = stage_one(sources, n=n, seed=seed)
    table = judge_replies(first, generate(first))
    questions = {
        r["key"]: json.loads(r["sample"])["question"] for r in table.to_pylist() if not r["final"] and r["sample"]
    }
    second = stage_two(sources, questions)
    if second:
        table = pa.concat_tables([table, judge_replies(second, generate(second))])
    rejections += [
        {"source": r["template"], "record": r["key"], "stage": "generate", "reason": r["rejection"]}
        for r in table.to_pylist()
        if r["rejection"]
    ]
    return table, pa.Table.from_pylist(rejections, schema=REJECTION_SCHEMA)


def instance_items(instances: pa.Table) -> list[dict]:
    """The accepted samples as audit items (:func:`conflictlab.construction.audit.audit_plan`)."""
    items = []
    for row in instances.to_pylist():
        if row["sample"] is None or not row["final"]:
            continue
        sample = json.loads(row["sample"])
        items.append(
            {
                "item_id": row["key"],
                "conflict_type": row["conflict_type"],
                "subset": row["subset"],
                "check": row["annotate"],
                "question": sample["question"],
                "evidence": list(sample["content"].values()),
                "answer": sample["answer"],
            }
        )
    return items


def original_items(samples: pa.Table, constructed_subsets: Iterable[str]) -> list[dict]:
    """Released samples (a ``results/data/<type>.parquet`` table) of the subsets
    this construction does not make: the preserved originals of the spot check."""
    skip = set(constructed_subsets)
    return [
        {
            "item_id": r["sample_id"],
            "conflict_type": r["conflict_type"],
            "subset": r["subset"],
            "check": "category and quality: is this a genuine conflict of this type, with a right answer?",
            "question": r["question"],
            "evidence": r["evidence"],
            "answer": " | ".join(r["answer"] or []),
        }
        for r in samples.select(["sample_id", "conflict_type", "subset", "question", "evidence", "answer"]).to_pylist()
        if r["subset"] not in skip
    ]


# The subsets this construction writes, by conflict type.
BUILT_SUBSETS = {
    "misinformation": ("sci_data", "cb_claim_evidence"),
    "inferential": ("folio", "entailment_bank"),
    "temporal": ("cb_claim_evidence_tmp",),
}
CONSTRUCTED_SUBSETS = tuple(s for subsets in BUILT_SUBSETS.values() for s in subsets)

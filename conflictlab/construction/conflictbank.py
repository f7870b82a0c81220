"""ConflictBank's construction (Su et al., NeurIPS 2024 D&B, §2 and §B.2) from a Wikidata dump.

Non-model steps (columnar, polars):

* :func:`gather_facts`: the scatter jobs' entities and facts
  (:mod:`conflictlab.construction.wikidata`) joined into one row per
  subject-relation pair with labels and descriptions, a same-type
  substitute object (the conflicting answer), a same-type distractor (the
  fourth option), a borrowed description for the semantic conflict, and a
  future time span for the temporal one, all seeded.
* :func:`claims_table`: the default claim and the three conflict claims
  (misinformation, temporal, semantic) and the question, by the relation's
  template (:mod:`conflictlab.construction.templates`).

Model steps: :func:`evidence_requests` (one evidence text per claim in a
seeded style), :func:`quality_controls` (refusal filter; NLI entailment of
claim by evidence and conflict confirmation, both by the configured judge),
then :func:`qa_records` in the released QA format, which
:func:`conflictlab.conflictbank.dataset.normalise_record` reads unchanged.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterator, Sequence

import polars as pl
import pyarrow as pa

from conflictlab.conflicts.dataset import MONTH_NAMES
from conflictlab.construction.templates import TEMPLATES, templates_for
from conflictlab.judges.requests import JudgeRequest, read_choices

CONFLICT_KINDS = ("misinformation", "temporal", "semantic")
KINDS = ("default", *CONFLICT_KINDS)
# The released categories (the hub writes the news style "new").
STYLES = ("wikipedia", "new", "book")

# Table 3 of the paper lost its cells in the text copy; these totals are stated
# in its abstract and §1 (003_f1d9f2914a4daca0.txt, lines 47 and 57).
PAPER_COUNTS = {
    "facts (one triple per subject-relation pair)": 2_863_205,
    "claim-evidence pairs after quality control": 7_453_853,
    "QA pairs": 553_117,
}


def _hash(seed: int, *columns: str, salt: str = "") -> pl.Expr:
    """A seeded 64-bit hash of the row's ``columns`` and ``salt`` (a stable draw per row)."""
    return pl.concat_str([*(pl.col(c) for c in columns), pl.lit(salt)], separator="\x1f").hash(seed=seed)


def _ranked_pool(values: pl.LazyFrame, group: list[str], value: str) -> pl.DataFrame:
    """The distinct ``value`` rows of each group, sorted and ranked 0..n-1 (``_rank``, ``_n``)."""
    pool = values.unique(subset=[*group, value]).sort([*group, value])
    return pool.with_columns(
        pl.int_range(pl.len()).over(group).cast(pl.Int64).alias("_rank"), pl.len().over(group).alias("_n")
    ).collect()


def _pick(
    rows: pl.DataFrame, pool: pl.DataFrame, *, group: list[str], value: str, seed: int, salt: str, name: str
) -> pl.DataFrame:
    """For each row, two other members of its group in ``pool``
    (:func:`_ranked_pool`), chosen by a seeded hash of the fact: columns
    ``{name}_1_*`` and ``{name}_2_*`` (the pool's columns). Rows whose group
    has fewer than three members are dropped (the caller counts them); row
    order is kept."""
    rows = rows.join(
        pool.select([*group, value, "_rank", "_n"]), on=[*group, value], how="inner", maintain_order="left"
    )
    rows = rows.filter(pl.col("_n") >= 3)
    n = pl.col("_n").cast(pl.UInt64)
    offset_1 = 1 + _hash(seed, "subject_id", "relation", salt=salt) % (n - 1)
    # 1..n-2 steps on from offset_1 within 1..n-1: never offset_1, never 0
    offset_2 = 1 + (offset_1 + _hash(seed, "subject_id", "relation", salt=salt + "'") % (n - 2)) % (n - 1)
    rows = rows.with_columns(
        ((pl.col("_rank").cast(pl.UInt64) + offset_1) % n).cast(pl.Int64).alias("_r1"),
        ((pl.col("_rank").cast(pl.UInt64) + offset_2) % n).cast(pl.Int64).alias("_r2"),
    )
    ranked = pool.drop("_n")
    payload = [c for c in ranked.columns if c not in (*group, "_rank")]
    for k in (1, 2):
        renamed = ranked.rename({**{p: f"{name}_{k}_{p}" for p in payload}, "_rank": f"_r{k}"})
        rows = rows.join(renamed, on=[*group, f"_r{k}"], how="left", maintain_order="left")
    return rows.drop(["_rank", "_n", "_r1", "_r2"])


GATHER_STEPS = (
    "facts whose object is a labelled item of the dump",
    "facts with subject and object descriptions and an object type",
    "facts with two same-type substitutes",
    "facts with a borrowed semantic description",
)


def gather_facts(
    entities: pl.LazyFrame, facts: pl.LazyFrame, *, seed: int, parts: int = 1
) -> Iterator[tuple[pl.DataFrame, list[int]]]:
    """One row per subject-relation pair ready for claims, in ``parts``
    pieces (facts whose dump line n has n % parts == part), each with its
    row count after each of :data:`GATHER_STEPS`.

    The substitute pools are built once over all facts from narrow columns;
    only one part's wide rows are in memory at a time. ``entities``: columns
    of :data:`conflictlab.construction.wikidata.ENTITY_SCHEMA`; ``facts``: of
    :data:`~conflictlab.construction.wikidata.FACT_SCHEMA`. Columns:
    subject_id, subject_description, subject, relation, object_id, object,
    object_description, replaced_object, replaced_description, distractor,
    semantic_description, t1, t2, line.
    """
    table = entities.unique(subset=["id"], keep="first", maintain_order=True).collect()
    subjects = table.rename(
        {"id": "subject_id", "label": "subject", "description": "subject_description", "type": "subject_type"}
    )
    objects = table.rename(
        {"id": "object_id", "label": "object", "description": "object_description", "type": "object_type"}
    )
    described = pl.col("object_description").is_not_null() & pl.col("object_type").is_not_null()
    object_pool = _ranked_pool(
        facts.select("relation", "object_id")
        .unique()
        .join(objects.lazy(), on="object_id", how="inner")
        .filter(described)
        .select("relation", "object_type", "object_id"),
        ["relation", "object_type"],
        "object_id",
    )
    # the semantic conflict's subject is described as another subject of its kind with the same relation
    semantic_pool = _ranked_pool(
        facts.select("subject_id", "relation")
        .unique()
        .join(subjects.lazy(), on="subject_id", how="inner")
        .filter(pl.col("subject_description").is_not_null())
        .select("relation", pl.col("subject_type").fill_null("<none>"), "subject_description"),
        ["relation", "subject_type"],
        "subject_description",
    )
    h = _hash(seed, "subject_id", "relation")
    start = 2025 + (h % 15).cast(pl.Int64)
    end = start + 1 + ((h // 15) % 10).cast(pl.Int64)

    def date(year: pl.Expr, salt: int) -> pl.Expr:
        day = (1 + (h // (150 * salt)) % 28).cast(pl.Int64)
        month = (
            ((h // (4200 * salt)) % 12)
            .cast(pl.Int64)
            .replace_strict(list(range(12)), list(MONTH_NAMES), return_dtype=pl.String)
        )
        return pl.format("{} {}, {}", day, month, year)

    for part in range(parts):
        rows = facts.filter(pl.col("line") % parts == part).collect()
        rows = rows.join(subjects, on="subject_id", how="inner", maintain_order="left")
        rows = rows.join(objects, on="object_id", how="inner", maintain_order="left")
        counts = [rows.height]
        rows = rows.filter(described & pl.col("subject_description").is_not_null())
        counts.append(rows.height)
        rows = _pick(
            rows,
            object_pool,
            group=["relation", "object_type"],
            value="object_id",
            seed=seed,
            salt="object",
            name="sub",
        )
        for k in (1, 2):  # the substitutes' labels and descriptions
            rows = rows.join(
                objects.select(
                    pl.col("object_id").alias(f"sub_{k}_object_id"),
                    pl.col("object").alias(f"sub_{k}_object"),
                    pl.col("object_description").alias(f"sub_{k}_object_description"),
                ),
                on=f"sub_{k}_object_id",
                how="left",
                maintain_order="left",
            )
        counts.append(rows.height)
        rows = _pick(
            rows.with_columns(pl.col("subject_type").fill_null("<none>")),
            semantic_pool,
            group=["relation", "subject_type"],
            value="subject_description",
            seed=seed,
            salt="semantic",
            name="sem",
        )
        counts.append(rows.height)
        yield (
            rows.select(
                "subject_id",
                "subject_description",
                "subject",
                "relation",
                "object_id",
                "object",
                "object_description",
                pl.col("sub_1_object").alias("replaced_object"),
                pl.col("sub_1_object_description").alias("replaced_description"),
                pl.col("sub_2_object").alias("distractor"),
                pl.col("sem_1_subject_description").alias("semantic_description"),
                date(start, 1).alias("t1"),
                date(end, 2).alias("t2"),
                "line",
            ),
            counts,
        )


def gather_all(entities: pl.LazyFrame, facts: pl.LazyFrame, *, seed: int) -> tuple[pl.DataFrame, list[tuple[str, int]]]:
    """:func:`gather_facts` in one piece: (facts, [(step, count)]) (tests, small dumps)."""
    ((frame, counts),) = gather_facts(entities, facts, seed=seed, parts=1)
    return frame, list(zip(GATHER_STEPS, counts))


def write_claims(
    entities: pl.LazyFrame,
    facts: pl.LazyFrame,
    relations: Sequence[str],
    path: str | os.PathLike,
    *,
    seed: int,
    part_facts: int,
) -> list[tuple[str, int]]:
    """Every fact's claims (:func:`claims_table`) written to one Parquet file
    at ``path`` part by part (atomically), about ``part_facts`` facts a part,
    so memory does not grow with the dump beyond its entity table; returns
    (step, count) of :data:`GATHER_STEPS` and of the claims."""
    import pyarrow.parquet as pq

    from conflictlab.io import atomic_path

    parts = max(1, math.ceil(facts.select(pl.len()).collect().item() / part_facts))

    totals = [0] * len(GATHER_STEPS)
    with atomic_path(path) as tmp:
        writer = None
        for frame, counts in gather_facts(entities, facts, seed=seed, parts=parts):
            totals = [t + c for t, c in zip(totals, counts)]
            table = claims_table(frame, relations).to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema)
            writer.write_table(table.cast(writer.schema))
        writer.close()
    return list(zip(GATHER_STEPS, totals)) + [("claims (default and three conflicts per fact)", 4 * totals[-1])]


def _render(template: str, columns: dict[str, str]) -> pl.Expr:
    """A template's text per row: ``{name}`` placeholders filled from ``columns``' columns."""
    parts = re.split(r"(\{[a-z]+\})", template)
    return pl.concat_str(
        [pl.col(columns[p[1:-1]]) if p.startswith("{") and p[1:-1] in columns else pl.lit(p) for p in parts if p]
    )


def _by_relation(relations: Sequence[str], make: Callable) -> pl.Expr:
    expr = pl.lit(None, dtype=pl.String)
    for relation in reversed(list(relations)):
        expr = pl.when(pl.col("relation") == relation).then(make(TEMPLATES[relation])).otherwise(expr)
    return expr


CLAIM_COLUMNS = ["default_claim", "misinformation_claim", "temporal_claim", "semantic_claim", "question"]


def claims_table(facts: pl.DataFrame, relations: Sequence[str]) -> pl.DataFrame:
    """``facts`` with default_claim, misinformation_claim, temporal_claim,
    semantic_claim and question (the semantic claim states the substitute like
    the misinformation one; its conflict is carried by semantic_description,
    as in the release)."""
    templates_for(list(relations))
    default = _by_relation(relations, lambda t: _render(t.claim, {"subject": "subject", "object": "object"}))
    conflict = _by_relation(relations, lambda t: _render(t.claim, {"subject": "subject", "object": "replaced_object"}))
    question = _by_relation(relations, lambda t: _render(t.question, {"subject": "subject"}))
    return facts.with_columns(
        default.alias("default_claim"),
        conflict.alias("misinformation_claim"),
        pl.format("{} from {} to {}.", conflict.str.strip_suffix("."), pl.col("t1"), pl.col("t2")).alias(
            "temporal_claim"
        ),
        conflict.alias("semantic_claim"),
        question.alias("question"),
    )


def sample_facts(claims: pl.LazyFrame, n: int | None, *, seed: int) -> pl.DataFrame:
    """A seeded ``n`` of the facts (all when ``n`` is None), in subject order:
    the model steps' share of the claims."""
    claims = claims.lazy()
    if n is not None:
        claims = claims.with_columns(_hash(seed, "subject_id", "relation").alias("_h")).sort("_h").head(n).drop("_h")
    return claims.sort(["subject_id", "relation"]).collect()


EVIDENCE_TEMPLATE = "conflictbank_evidence_v1"
STYLE_WORDS = {"wikipedia": "a Wikipedia article", "new": "a news report", "book": "a passage from a non-fiction book"}


def evidence_messages(
    claim: str, style: str, subject: str, subject_description: str, obj: str, object_description: str
) -> list[dict]:
    """The evidence request (written here; ConflictBank's own generation
    prompt is not in the release notes): one supporting text in ``style``."""
    user = (
        f"Write {STYLE_WORDS[style]} of about 150 words that presents evidence supporting the claim below as true. "
        "Mention the subject and the object by name. Do not say that the text is invented.\n\n"
        f"Claim: {claim}\nSubject: {subject} ({subject_description})\nObject: {obj} ({object_description})"
    )
    return [{"role": "user", "content": user}]


def evidence_requests(claims: pl.DataFrame, *, seed: int) -> pl.DataFrame:
    """One request per (fact, kind): columns fact_id ("{subject_id}/{relation}"),
    kind, claim, style (seeded) and messages (the conversation as JSON text)."""
    import json

    h = _hash(seed, "subject_id", "relation")
    rows = []
    for k, kind in enumerate(KINDS):
        obj, desc = (
            ("object", "object_description") if kind == "default" else ("replaced_object", "replaced_description")
        )
        subject_desc = "semantic_description" if kind == "semantic" else "subject_description"
        style = ((h // (3**k)) % 3).cast(pl.Int64).replace_strict([0, 1, 2], list(STYLES), return_dtype=pl.String)
        rows.append(
            claims.select(
                pl.format("{}/{}", "subject_id", "relation").alias("fact_id"),
                pl.lit(kind).alias("kind"),
                pl.col(f"{kind}_claim").alias("claim"),
                style.alias("style"),
                "subject",
                pl.col(subject_desc).alias("sd"),
                pl.col(obj).alias("o"),
                pl.col(desc).alias("od"),
            )
        )
    table = pl.concat(rows).sort(["fact_id", "kind"])
    messages = [
        json.dumps(evidence_messages(c, s, sub, sd, o, od), ensure_ascii=False)
        for c, s, sub, sd, o, od in table.select("claim", "style", "subject", "sd", "o", "od").iter_rows()
    ]
    return table.select("fact_id", "kind", "claim", "style").with_columns(
        pl.Series("messages", messages, dtype=pl.String)
    )


def generate_evidence(requests: pl.DataFrame, backend, tokenizer, *, max_new_tokens: int, seed: int) -> pl.DataFrame:
    """``requests`` (:func:`evidence_requests`) with the generated ``text`` and
    its ``finish_reason``, through :func:`conflictlab.construction.models.complete`."""
    import json

    from conflictlab.construction.models import complete

    conversations = [json.loads(m) for m in requests.get_column("messages")]
    rows = [f"{f}/{k}" for f, k in requests.select("fact_id", "kind").iter_rows()]
    completions = complete(backend, tokenizer, conversations, max_new_tokens=max_new_tokens, seed=seed, rows=rows)
    return requests.with_columns(
        pl.Series("text", [c.text for c in completions], dtype=pl.String),
        pl.Series("finish_reason", [c.finish_reason for c in completions], dtype=pl.String),
    )


_REFUSAL = re.compile(
    r"^\s*(I'm sorry|I am sorry|I apologi[sz]e|I can(?:no|')t|I am unable|I'm unable|I won't|As an AI"
    r"|I do not feel comfortable)",
    re.IGNORECASE,
)


def refusal_reason(text: str | None, finish_reason: str | None) -> str | None:
    """Why a generated evidence is a refusal-like response, or None."""
    if finish_reason in ("refusal", "content_filter"):
        return f"endpoint {finish_reason}"
    if text is None or not text.strip():
        return "empty text"
    if _REFUSAL.match(text):
        return "refusal-like opening"
    return None


NLI_TEMPLATE = "conflictbank_nli_v1"
CONFLICT_TEMPLATE = "conflictbank_conflict_v1"
YES_NO = ("yes", "no")


def _yes_no_request(template: str, text: str, field: str, question: str) -> JudgeRequest:
    """``text``, then ``question``, answered as JSON {``field``: "yes" | "no"} (a constrained choice)."""
    user = f'{text}\n\n{question} Reply with JSON {{"{field}": "yes"}} or {{"{field}": "no"}}.'
    return JudgeRequest(template=template, messages=(("user", user),), fields=(field,), options=YES_NO)


def nli_request(evidence: str, claim: str) -> JudgeRequest:
    """Does the evidence entail the claim? (written here; the paper used an NLI model)."""
    text = "Premise:\n" + evidence + "\n\nHypothesis: " + claim
    return _yes_no_request(NLI_TEMPLATE, text, "entails", "Does the premise entail the hypothesis?")


def conflict_request(default_evidence: str, conflict_evidence: str) -> JudgeRequest:
    """Do two evidence texts contradict each other? (written here; the paper used a trained classifier)."""
    text = "Text A:\n" + default_evidence + "\n\nText B:\n" + conflict_evidence
    return _yes_no_request(CONFLICT_TEMPLATE, text, "contradict", "Do texts A and B make contradictory claims?")


def quality_controls(
    evidence: pl.DataFrame, ask: Callable[[list[JudgeRequest]], list[str]], *, checks: Sequence[str]
) -> pl.DataFrame:
    """``evidence`` (columns fact_id, kind, claim, style, text, finish_reason)
    with ``status``: ``kept`` or the first check it failed (``refusal: ...``,
    ``not entailed``, ``not conflicting``, ``default evidence dropped``,
    ``unreadable verdict``). ``checks``: the subset of refusal, entailment,
    conflict that runs (in that order); ``ask``: the judge."""
    unknown = set(checks) - {"refusal", "entailment", "conflict"}
    if unknown:
        raise ValueError(f"unknown quality checks {sorted(unknown)}; known: refusal, entailment, conflict")
    rows = evidence.to_dicts()
    status = ["kept"] * len(rows)
    if "refusal" in checks:
        for i, row in enumerate(rows):
            reason = refusal_reason(row["text"], row["finish_reason"])
            if reason:
                status[i] = f"refusal: {reason}"
    if "entailment" in checks:
        live = [i for i in range(len(rows)) if status[i] == "kept"]
        requests = [nli_request(rows[i]["text"], rows[i]["claim"]) for i in live]
        for i, request, reply in zip(live, requests, ask(requests) if requests else []):
            verdict = read_choices(request, reply)[0]
            status[i] = "kept" if verdict == "yes" else ("unreadable verdict" if verdict is None else "not entailed")
    default_of = {row["fact_id"]: i for i, row in enumerate(rows) if row["kind"] == "default"}
    for i, row in enumerate(rows):  # a conflict needs its default evidence
        d = default_of.get(row["fact_id"])
        if row["kind"] != "default" and status[i] == "kept" and (d is None or status[d] != "kept"):
            status[i] = "default evidence dropped"
    if "conflict" in checks:
        live = [i for i, row in enumerate(rows) if row["kind"] != "default" and status[i] == "kept"]
        requests = [conflict_request(rows[default_of[rows[i]["fact_id"]]]["text"], rows[i]["text"]) for i in live]
        for i, request, reply in zip(live, requests, ask(requests) if requests else []):
            verdict = read_choices(request, reply)[0]
            status[i] = "kept" if verdict == "yes" else ("unreadable verdict" if verdict is None else "not conflicting")
    return evidence.with_columns(pl.Series("status", status, dtype=pl.String))


def qa_records(claims: pl.DataFrame, evidence: pl.DataFrame, *, seed: int) -> list[dict]:
    """Released-format QA records (the hub's field names) of the facts whose
    four evidence texts were all kept. Options: the object, the distractor
    and the substitute in a seeded order, then the literal ``uncertain``."""
    kept = evidence.filter(pl.col("status") == "kept")
    wide = kept.pivot(on="kind", index="fact_id", values=["text", "style"])
    needed = [f"text_{k}" for k in KINDS]
    if any(c not in wide.columns for c in needed):
        return []
    wide = wide.drop_nulls(needed)
    facts = claims.with_columns(
        pl.format("{}/{}", "subject_id", "relation").alias("fact_id"), _hash(seed, "subject_id", "relation").alias("_h")
    )
    joined = facts.join(wide, on="fact_id", how="inner").sort("fact_id")
    records = []
    for row in joined.iter_rows(named=True):
        order = [("object", row["object"]), ("distractor", row["distractor"]), ("replaced", row["replaced_object"])]
        permutation = row["_h"] % 6
        order = [order[i] for i in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))[permutation]]
        letters = {name: "ABC"[i] for i, (name, _) in enumerate(order)}
        records.append(
            {
                "relation": row["relation"],
                "subject": row["subject"],
                "subject_description": row["subject_description"],
                "semantic_description": row["semantic_description"],
                "object": row["object"],
                "object_description": row["object_description"],
                "replaced_object": row["replaced_object"],
                "replaced_description": row["replaced_description"],
                "default_claim": row["default_claim"],
                "default_evidence_category": row["style_default"],
                "default_evidence": row["text_default"],
                "misinformation_conflict_claim": row["misinformation_claim"],
                "misinformation_conflict_evidence_category": row["style_misinformation"],
                "misinformation_conflict_evidence_evidence": row["text_misinformation"],
                "temporal_conflict_time_span": [row["t1"], row["t2"]],
                "temporal_conflict_claim": row["temporal_claim"],
                "temporal_conflict_evidence_category": row["style_temporal"],
                "temporal_conflict_evidence": row["text_temporal"],
                "semantic_conflict_claim": row["semantic_claim"],
                "semantic_conflict_evidence_category": row["style_semantic"],
                "semantic_conflict_evidence": row["text_semantic"],
                "question": row["question"],
                "options": [text for _, text in order] + ["uncertain"],
                "correct_option": letters["object"],
                "replace_option": letters["replaced"],
                "uncertain_option": "D",
            }
        )
    return records


STEP_SCHEMA = pa.schema(
    [
        pa.field("step", pa.string(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("paper", pa.int64()),  # the paper's count where its text states one
    ]
)


def steps_table(counts: Sequence[tuple[str, int]]) -> pa.Table:
    """Counts after each step (Table 3's shape) beside the paper's where stated."""
    return pa.Table.from_pylist(
        [{"step": s, "count": int(n), "paper": PAPER_COUNTS.get(s)} for s, n in counts], schema=STEP_SCHEMA
    )

"""ContextConflict samples: the released folder layout and the Hugging Face
dataset, both turned into one table with one row per sample.

Released layout (one JSON file per sample)::

    data/<type>_conflict/*.json               (subset "root")
    data/<type>_conflict/<subset>/*.json

Each file is ``{"question": str, "content": {"source_1": str, ...},
"answer": str | list | absent, "accuracy_labels": [bool] | absent, ...}``.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.contextconflict.conflict_types import (
    BASE_DATASETS,
    CONFLICT_TYPES,
    RELEASE_FILES,
    ROOT_SUBSET,
    SUBSETS,
    TASK_FAMILY,
    Subset,
)
from conflictlab.data_check import FileCheck, Problem, field_of, unreadable

SAMPLE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("task_family", pa.string(), nullable=False),
        pa.field("subset", pa.string(), nullable=False),
        pa.field("implicit", pa.bool_(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("evidence", pa.list_(pa.string()), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("answer", pa.list_(pa.string())),
        pa.field("accuracy_labels", pa.list_(pa.bool_())),
        pa.field("extras", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
    ]
)

REJECTION_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("subset", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)

_SOURCE_KEY = re.compile(r"source_(\d+)")
_KNOWN_FIELDS = {"question", "content", "answer", "accuracy_labels"}


class SampleError(ValueError):
    """A sample that cannot be read; the message names the file and the field."""

    def __init__(self, source: str, problem: str):
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


def natural_key(text: str) -> list:
    """Sort key that orders ``"10"`` after ``"9"`` (file stems, source keys)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def sample_record(raw: Any, *, sample_id: str, subset: Subset, source: str) -> dict:
    """Validate one raw sample (parsed JSON or a hub row) into a schema row.

    Raises :class:`SampleError` naming ``source`` and the offending field. Text
    is kept exactly as given: nothing is stripped, normalised or repaired.
    """
    if not isinstance(raw, Mapping):
        raise SampleError(source, f"top level must be a JSON object, got {type(raw).__name__}")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise SampleError(source, "field 'question' is missing or not a non-empty string")

    content = raw.get("content")
    if not isinstance(content, Mapping):
        kind = "missing" if content is None else f"a {type(content).__name__}"
        raise SampleError(source, f"field 'content' must be a mapping of source_N to text, got {kind}")
    if not content:
        raise SampleError(source, "field 'content' has no evidence")
    numbered = []
    for key, text in content.items():
        match = _SOURCE_KEY.fullmatch(str(key))
        if match is None:
            raise SampleError(source, f"field 'content.{key}': key is not of the form source_N")
        if match.group(1).startswith("0"):
            raise SampleError(
                source, f"field 'content.{key}': zero-padded or zero evidence number (source_1, source_2, ... expected)"
            )
        if not isinstance(text, str) or not text.strip():
            raise SampleError(source, f"field 'content.{key}': evidence text is empty or not a string")
        numbered.append((int(match.group(1)), text))
    numbered.sort()
    missing = sorted(set(range(1, len(numbered) + 1)) - {n for n, _ in numbered})
    if missing:
        raise SampleError(
            source,
            f"field 'content': evidence numbers skip source_{missing[0]} (got "
            f"{', '.join(f'source_{n}' for n, _ in numbered)})",
        )
    evidence = [text for _, text in numbered]

    answer = raw.get("answer")
    if answer is not None:
        answer = [answer] if isinstance(answer, str) else answer
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
            raise SampleError(source, "field 'answer' must be a string or a list of strings")
    if TASK_FAMILY[subset.conflict_type] == "reasoning":
        # Accuracy needs a gold for every reasoning sample: say so here, per file,
        # rather than after generation.
        if answer is None:
            raise SampleError(
                source, f"field 'answer' is missing ({subset.conflict_type} is scored against a gold answer)"
            )
        if not answer or not all(a.strip() for a in answer):
            raise SampleError(
                source, f"field 'answer' is empty ({subset.conflict_type} is scored against a gold answer)"
            )

    labels = raw.get("accuracy_labels")
    if labels is not None:
        if not isinstance(labels, list) or not all(isinstance(x, bool) for x in labels):
            raise SampleError(source, "field 'accuracy_labels' must be a list of booleans")
        if len(labels) != len(evidence):
            raise SampleError(
                source,
                f"field 'accuracy_labels' has {len(labels)} entries for {len(evidence)} evidence pieces",
            )

    extras = {k: v for k, v in raw.items() if k not in _KNOWN_FIELDS}
    return {
        "sample_id": sample_id,
        "conflict_type": subset.conflict_type,
        "task_family": TASK_FAMILY[subset.conflict_type],
        "subset": subset.name,
        "implicit": subset.implicit,
        "question": question,
        "evidence": evidence,
        "n_evidence": len(evidence),
        "answer": answer,
        "accuracy_labels": labels,
        "extras": json.dumps(extras, sort_keys=True, ensure_ascii=False),
        "source_path": source,
    }


class _JSONProblem(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _JSONProblem(f"duplicate key {key!r} (JSON would keep only the last)")
        seen[key] = value
    return seen


def _no_constant(name: str):
    raise _JSONProblem(f"non-standard literal {name} (not valid JSON)")


def read_sample_file(path: Path, *, subset: Subset, display_path: str) -> dict:
    """Parse one released JSON file strictly: readable, UTF-8, valid JSON
    without duplicate keys or NaN/Infinity literals, valid fields."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SampleError(display_path, f"cannot be read ({err.strerror or err})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SampleError(display_path, f"invalid UTF-8 at byte {err.start}") from None
    try:
        raw = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise SampleError(display_path, f"malformed JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except _JSONProblem as err:
        raise SampleError(display_path, f"malformed JSON: {err}") from None
    sample_id = f"{subset.conflict_type}/{subset.name}/{path.stem}"
    return sample_record(raw, sample_id=sample_id, subset=subset, source=display_path)


# --------------------------------------------------------------------------
# What a released type folder holds: every entry is a sample file, an
# ignorable file (listed), or a problem (an error, or a rejection).

_IGNORABLE = re.compile(r"(readme.*|\..*)", re.IGNORECASE)


@dataclass
class ReleasedFiles:
    """The sample files of one type folder, by subset name (natural order),
    the ignorable files and subsets left out, every entry that is a problem
    as ``(subset or folder name, path relative to the data root, reason)``,
    and the layout errors no ``on_error`` setting can reject (a missing type
    folder, a missing or empty subset) as ``(path, reason)``."""

    files: dict[str, list[Path]]
    ignored: list[str]
    problems: list[tuple[str, str, str]]
    layout_errors: list[tuple[str, str]]


def _entries(folder: Path, root: Path, problems: list, owner: str) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: natural_key(e.name))
    except OSError as err:
        problems.append((owner, folder.relative_to(root).as_posix(), f"folder cannot be read ({err.strerror or err})"))
        return []


def _kind(entry: os.DirEntry) -> str:
    """ "dir", "file", or the reason it cannot be read (a symlink loop, no permission)."""
    try:
        entry.stat()  # follows symlinks: a loop or a dangling link raises here
        return "dir" if entry.is_dir() else "file"
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"


def released_files(root: str | Path, conflict_type: str, *, subsets: Iterable[str] | None = None) -> ReleasedFiles:
    """Account for every entry of ``root/<type>_conflict``.

    Sample files are ``*.json`` directly in a subset's folder (the type folder
    itself for the root subset). README files and dot-files are ignorable. A
    folder that is no known subset, any other file, a folder inside a subset,
    an unreadable entry or a symlink loop is a problem. With ``subsets=None``
    every known subset must be present and non-empty; a list reads only those
    (each must be present), and the others are listed as ignored.
    Never raises for what it finds on disk; ValueError for unknown names.
    """
    root = Path(root)
    known = {s.name: s for s in SUBSETS[conflict_type]}
    wanted = list(known) if subsets is None else list(subsets)
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"data.subsets: {conflict_type} has no subset {unknown}; known: {list(known)}")
    type_dir = root / f"{conflict_type}_conflict"
    found = ReleasedFiles(files={name: [] for name in wanted}, ignored=[], problems=[], layout_errors=[])
    if not type_dir.is_dir():
        found.layout_errors.append(
            (type_dir.relative_to(root).as_posix(), f"no folder for conflict type {conflict_type!r}")
        )
        return found

    def scan(folder: Path, subset: str, *, top: bool) -> None:
        for entry in _entries(folder, root, found.problems, subset):
            rel = Path(entry.path).relative_to(root).as_posix()
            if _IGNORABLE.fullmatch(entry.name):
                found.ignored.append(rel)
                continue
            kind = _kind(entry)
            if kind == "dir" and top and entry.name in known and known[entry.name].name != ROOT_SUBSET:
                if entry.name in wanted:
                    scan(Path(entry.path), entry.name, top=False)
                else:
                    found.ignored.append(rel + "/ (subset not in data.subsets)")
            elif kind == "dir":
                where = (
                    f"known subsets of {conflict_type}: {sorted(n for n in known if n != ROOT_SUBSET)}"
                    if top
                    else "subset folders hold only sample files"
                )
                found.problems.append((entry.name if top else subset, rel, f"unknown folder ({where})"))
            elif kind != "file":
                found.problems.append((subset, rel, kind))
            elif entry.name.endswith(".json") and (not top or ROOT_SUBSET in known):
                if subset in found.files:
                    found.files[subset].append(Path(entry.path))
                else:
                    found.ignored.append(rel + " (subset not in data.subsets)")
            else:
                found.problems.append((subset, rel, "not a sample file (sample files are named <id>.json)"))

    scan(type_dir, ROOT_SUBSET, top=True)
    for name in wanted:
        if not found.files[name]:
            folder = known[name].folder
            what = "has no sample files" if (root / folder).is_dir() else "is missing"
            found.layout_errors.append(
                (folder, f"known subset {name!r} {what} (list the subsets to read in data.subsets)")
            )
    return found


def choose_stratum(items: list, max_n: int | None, *, seed: int, stratum: str) -> list:
    """A seeded sample of ``max_n`` items of one stratum, kept in input order.

    The generator is seeded by (seed, stratum name), so adding a subset or
    changing another stratum's size never changes this one's draw.
    """
    if max_n is None or len(items) <= max_n:
        return list(items)
    keep = set(random.Random(f"{seed}:{stratum}").sample(range(len(items)), max_n))
    return [item for i, item in enumerate(items) if i in keep]


@dataclass
class SubsetBuild:
    """What one build produced: accepted rows, rejected files, counts read."""

    records: list[dict]
    rejections: list[dict]
    files_seen: int
    ignored: list[str] = field(default_factory=list)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return (
            pa.Table.from_pylist(self.records, schema=SAMPLE_SCHEMA),
            pa.Table.from_pylist(self.rejections, schema=REJECTION_SCHEMA),
        )


def _collect(
    candidates: Iterable[tuple[Subset, str, Any]],
    *,
    on_error: str,
) -> SubsetBuild:
    """Run ``sample_record``-producing thunks, failing or recording rejections."""
    if on_error not in ("fail", "reject"):
        raise ValueError(f"on_error must be 'fail' or 'reject', got {on_error!r}")
    build = SubsetBuild(records=[], rejections=[], files_seen=0)
    for subset, sample_id, make_record in candidates:
        build.files_seen += 1
        try:
            build.records.append(make_record())
        except SampleError as err:
            if on_error == "fail":
                raise
            build.rejections.append(
                {
                    "sample_id": sample_id,
                    "conflict_type": subset.conflict_type,
                    "subset": subset.name,
                    "source_path": err.source,
                    "reason": err.problem,
                }
            )
    return build


def load_released(
    root: str | Path,
    conflict_type: str,
    *,
    subsets: Iterable[str] | None = None,
    max_per_subset: int | None = None,
    seed: int = 0,
    on_error: str = "fail",
) -> SubsetBuild:
    """Read the subsets of ``conflict_type`` from a released ``data/`` folder.

    Every entry of the type folder is accounted for (:func:`released_files`):
    a missing type folder or a missing or empty subset is an error; other
    problems (unknown folders, stray files, unreadable entries) are errors
    under ``on_error="fail"`` and rejections under ``"reject"``; ignorable
    files are returned in ``ignored``. ``source_path`` is relative to
    ``root`` so the table's bytes do not depend on where the data lives.
    Files are sampled per subset before parsing, so a rejected file still
    counts towards the sample it was drawn into.
    """
    root = Path(root)
    if conflict_type not in SUBSETS:
        raise ValueError(f"unknown conflict type {conflict_type!r}; expected one of {CONFLICT_TYPES}")
    found = released_files(root, conflict_type, subsets=subsets)
    if found.layout_errors:
        raise SampleError(*found.layout_errors[0])
    if on_error == "fail" and found.problems:
        raise SampleError(*found.problems[0][1:])

    def candidates():
        for name, files in found.files.items():
            subset = next(s for s in SUBSETS[conflict_type] if s.name == name)
            chosen = choose_stratum(files, max_per_subset, seed=seed, stratum=f"{conflict_type}/{name}")
            for path in chosen:
                display = path.relative_to(root).as_posix()
                sample_id = f"{conflict_type}/{name}/{path.stem}"
                yield (
                    subset,
                    sample_id,
                    (
                        lambda path=path, subset=subset, display=display: read_sample_file(
                            path, subset=subset, display_path=display
                        )
                    ),
                )

    build = _collect(candidates(), on_error=on_error)
    for name, rel, reason in found.problems:
        build.rejections.append(
            {
                "sample_id": f"{conflict_type}/{rel}",
                "conflict_type": conflict_type,
                "subset": name,
                "source_path": rel,
                "reason": reason,
            }
        )
    build.ignored = found.ignored
    return build


def subset_of_row(conflict_type: str, row: Mapping) -> Subset:
    """The subset a hub row belongs to: its ``subset`` field, else the root."""
    name = row.get("subset") or ROOT_SUBSET
    for subset in SUBSETS[conflict_type]:
        if subset.name == name:
            return subset
    raise SampleError(f"hub row of {conflict_type}", f"field 'subset': unknown subset {name!r}")


def load_hub(
    dataset_id: str,
    conflict_type: str,
    *,
    revision: str | None = None,
    split: str = "train",
    max_per_subset: int | None = None,
    seed: int = 0,
    on_error: str = "fail",
) -> SubsetBuild:
    """Read ``conflict_type`` from the Hugging Face dataset (config ``<type>_conflict``).

    Hub rows are validated exactly like released files; a row's id is its
    ``id``/``qid`` field when present, else its index within its subset.
    ``HF_DATASETS_OFFLINE``/``HF_HUB_OFFLINE`` are honoured by ``datasets``.
    """
    import datasets  # imported here: only the hub path needs it

    ds = datasets.load_dataset(dataset_id, f"{conflict_type}_conflict", revision=revision, split=split)
    rows_by_subset: dict[str, list[tuple[str, dict]]] = {}
    for index, row in enumerate(ds):
        subset = subset_of_row(conflict_type, row)
        stem = str(row.get("id", row.get("qid", index)))
        rows_by_subset.setdefault(subset.name, []).append((stem, row))

    def candidates():
        for subset in SUBSETS[conflict_type]:
            rows = rows_by_subset.get(subset.name, [])
            chosen = choose_stratum(rows, max_per_subset, seed=seed, stratum=f"{conflict_type}/{subset.name}")
            for stem, row in chosen:
                sample_id = f"{conflict_type}/{subset.name}/{stem}"
                source = f"hf://{dataset_id}/{conflict_type}_conflict#{stem}"
                raw = {k: v for k, v in row.items() if k != "subset" and v is not None}
                if isinstance(raw.get("content"), Mapping):
                    # Hub tables store content as a struct with every source_N
                    # column of the config; absent ones come back as None.
                    raw["content"] = {k: v for k, v in raw["content"].items() if v is not None}
                yield (
                    subset,
                    sample_id,
                    (
                        lambda raw=raw, subset=subset, sample_id=sample_id, source=source: sample_record(
                            raw, sample_id=sample_id, subset=subset, source=source
                        )
                    ),
                )

    return _collect(candidates(), on_error=on_error)


TABLE1_SCHEMA = pa.schema(
    [
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("task_family", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("mean_evidence", pa.float64()),
        pa.field("implicit_proportion", pa.float64()),
        pa.field("base_sources", pa.string(), nullable=False),
        pa.field("release_size", pa.int64(), nullable=False),
        pa.field("release_implicit_proportion", pa.float64(), nullable=False),
    ]
)


def dataset_statistics(samples: pa.Table) -> pa.Table:
    """Table 1: per conflict type of ``samples`` (``SAMPLE_SCHEMA`` rows of
    any number of types), its size, mean number of evidence pieces, share of
    implicit samples and base sources (subsets), beside the full release's
    size and implicit share from :data:`RELEASE_FILES`."""
    counts = samples.group_by("conflict_type").aggregate(
        [("conflict_type", "count"), ("n_evidence", "sum"), ("implicit", "sum")]
    )
    found = {row["conflict_type"]: row for row in counts.to_pylist()}  # one per conflict type
    rows = []
    for conflict_type in [t for t in CONFLICT_TYPES if t in found]:
        size = found[conflict_type]["conflict_type_count"]
        release = {s.name: RELEASE_FILES[(conflict_type, s.name)] for s in SUBSETS[conflict_type]}
        implicit = sum(
            n for name, n in release.items() if next(s for s in SUBSETS[conflict_type] if s.name == name).implicit
        )
        rows.append(
            {
                "conflict_type": conflict_type,
                "task_family": TASK_FAMILY[conflict_type],
                "size": size,
                "mean_evidence": float(found[conflict_type]["n_evidence_sum"] / size),
                "implicit_proportion": float(found[conflict_type]["implicit_sum"] / size),
                # pc.unique keeps the order of first appearance (a group_by does not, past a few groups)
                "base_sources": ", ".join(
                    pc.unique(
                        samples.column("subset").filter(pc.equal(samples.column("conflict_type"), conflict_type))
                    ).to_pylist()
                ),
                "release_size": sum(release.values()),
                "release_implicit_proportion": implicit / sum(release.values()),
            }
        )
    return pa.Table.from_pylist(rows, schema=TABLE1_SCHEMA)


TABLE5_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("reference", pa.string(), nullable=False),
        pa.field("subsets", pa.string(), nullable=False),
        pa.field("construction", pa.string(), nullable=False),
        pa.field("review", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("release_files", pa.int64(), nullable=False),
        pa.field("licence_release", pa.string(), nullable=False),
        pa.field("licence_source", pa.string(), nullable=False),
    ]
)


def base_dataset_table(samples: pa.Table) -> pa.Table:
    """Table 5: one row per base dataset of
    :data:`~conflictlab.contextconflict.conflict_types.BASE_DATASETS`, with
    the samples of ``samples`` (``SAMPLE_SCHEMA`` rows) that came from its
    subsets (``n``) beside the release's file count of those subsets."""
    counts = samples.group_by(["conflict_type", "subset"]).aggregate([("subset", "count")])
    read = Counter(
        {(t, s): n for t, s, n in zip(*(counts.column(c).to_pylist() for c in counts.column_names))}
    )  # one per subset
    rows = [
        {
            "dataset": d.name,
            "reference": d.reference,
            "subsets": ", ".join(f"{t}/{s}" for t, s in d.subsets),
            "construction": d.construction,
            "review": d.review,
            "n": sum(read[key] for key in d.subsets),
            "release_files": sum(RELEASE_FILES[key] for key in d.subsets),
            "licence_release": d.licence_release,
            "licence_source": d.licence_source,
        }
        for d in BASE_DATASETS
    ]
    return pa.Table.from_pylist(rows, schema=TABLE5_SCHEMA)


def shuffle_evidence(samples: pa.Table, *, seed: int) -> pa.Table:
    """Each sample's evidence in a seeded random order (Appendix D.8).

    The permutation is stored in ``extras["shuffle_permutation"]``: presented
    position j shows original piece ``perm[j]`` (0-based). ``accuracy_labels``
    follow their pieces; ids stay the same so results join with the
    unshuffled run.
    """
    import numpy as np

    rows = []
    for row in samples.to_pylist():
        rng = np.random.default_rng([seed, *row["sample_id"].encode("utf-8")])
        perm = rng.permutation(row["n_evidence"]).tolist()
        extras = json.loads(row["extras"])
        extras["shuffle_permutation"] = perm
        rows.append(
            {
                **row,
                "evidence": [row["evidence"][i] for i in perm],
                "accuracy_labels": None
                if row["accuracy_labels"] is None
                else [row["accuracy_labels"][i] for i in perm],
                "extras": json.dumps(extras, sort_keys=True, ensure_ascii=False),
            }
        )
    return pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)


def check_input(config: Mapping) -> list[FileCheck]:
    """The data check of config's ``data`` section (:mod:`conflictlab.validate_data`): every sample of every
    configured conflict type read as the ``build_subset`` jobs read it (no sampling), one check per subset
    folder (the release holds one sample per file), each rejection with its file and field."""
    data = config["data"]
    stops = data.get("on_error", "fail") == "fail"
    released = data["source"] == "released"
    checks = []
    for conflict_type in config["conflict_types"]:
        try:
            if released:
                subsets = (data.get("subsets") or {}).get(conflict_type)
                build = load_released(data["root"], conflict_type, subsets=subsets, on_error="reject")
            else:
                build = load_hub(data["hf_dataset"], conflict_type, revision=data.get("hf_revision"), on_error="reject")
        except (OSError, ValueError) as error:
            where = f"{data['root']}/{conflict_type}_conflict" if released else f"{data['hf_dataset']}:{conflict_type}"
            checks.append(unreadable("contextconflict", where, error, stops_run=True))
            continue
        for subset in SUBSETS[conflict_type]:
            read = sum(row["subset"] == subset.name for row in build.records)
            problems = [
                Problem(r["source_path"], field_of(r["reason"]), r["reason"])
                for r in build.rejections
                if r["subset"] == subset.name
            ]
            if read or problems:
                where = f"{data['root']}/{subset.folder}" if released else f"{data['hf_dataset']}:{subset.folder}"
                checks.append(FileCheck("contextconflict", where, read, problems, stops))
        # Entries of the type folder that belong to no subset (an unknown folder): the type's own check.
        names = {subset.name for subset in SUBSETS[conflict_type]}
        stray = [Problem(r["source_path"], "(file)", r["reason"]) for r in build.rejections if r["subset"] not in names]
        if stray:
            checks.append(FileCheck("contextconflict", f"{data['root']}/{conflict_type}_conflict", 0, stray, stops))
    return checks

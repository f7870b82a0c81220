"""Activation steering (paper §5): calibration split, directions, injection.

Split. Per conflict type and per subset, a seeded shuffle puts
``calibration_count(n, fraction)`` samples into calibration and the rest into
test (``round(fraction * n)``, at least one of each when the subset has two or
more samples; a one-sample subset goes to test).

Directions, per layer l (every decoder layer; residual stream = the layer's
output at the prompt's final token, read by :func:`conflictlab.lm.hidden.hidden_states`):

* ``mean_difference`` (the paper's Eq. 6): for calibration sample n with K
  pieces, a_{n,i} from the K single-evidence prompts and c_n from the combined
  prompt; mu_n = mean_i a_{n,i}; mu_bar and c_bar average over samples;
  u = (mu_bar - c_bar) / max(||mu_bar - c_bar||, 1e-8). Adding it moves the
  combined representation toward the neutral centre of the single pieces.
* ``cas`` (Context-Aware Steering baseline, "amplifies the model's overall
  reliance on context"): q_n from the question-only prompt (the combined
  template without its evidence block); u = (c_bar - q_bar) / max(||c_bar -
  q_bar||, 1e-8). Adding it moves a representation from "no context" toward
  "with context".

Injection: :class:`conflictlab.lm.steering.Steering` (the model layer's hooks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab import metrics
from conflictlab.contextconflict.conflict_types import CONFLICT_TYPES
from conflictlab.contextconflict.variants import BASE, METHODS, SteeredModel, SteeringVariant
from conflictlab.io import atomic_path
from conflictlab.paired import PAIRED_COLUMNS, best_by_paired_tests, paired_columns

# --------------------------------------------------------------------------
# Variants: a steered rerun is the pseudo-model "name@variant" and a variant is
# "base" or "<method>-a<alpha>", both spelled and read by their types
# (conflictlab.contextconflict.variants); the lists below give their names.

SWEEP_METHODS = ("all_tokens", "first_generated")
DIRECTION_OF_METHOD = {"all_tokens": "mean_difference", "first_generated": "mean_difference", "cas": "cas"}


def table4_variants(alpha: float) -> list[str]:
    """Table 4's rows: base and every method at ``alpha``."""
    return [SteeringVariant(BASE).format()] + [SteeringVariant(m, alpha).format() for m in METHODS]


def sweep_variants(alphas) -> list[str]:
    """Figure 31: both schedules at every alpha of the sweep."""
    return [SteeringVariant(m, a).format() for m in SWEEP_METHODS for a in alphas]


def all_variants(alpha: float, alphas) -> list[str]:
    return list(dict.fromkeys(table4_variants(alpha) + sweep_variants(alphas)))


def variant_schedule(variant: str, *, cas_schedule: str) -> str | None:
    """The injection schedule of a variant (None for base)."""
    method = SteeringVariant.parse(variant).method
    if method == BASE:
        return None
    return cas_schedule if method == "cas" else method


# --------------------------------------------------------------------------
# Calibration / test split.


def calibration_count(n: int, fraction: float) -> int:
    """Calibration samples out of a subset of ``n`` (round half up)."""
    if n < 2:
        return 0
    return min(n - 1, max(1, math.floor(fraction * n + 0.5)))


def steering_split(samples: pa.Table, *, calibration_fraction: float, seed: int) -> tuple[pa.Table, pa.Table]:
    """Seeded calibration/test split of one type's samples, stratified by subset.

    Returns ``(calibration, test)``, both with ``samples``' schema and rows in
    their original order.
    """
    if not 0.0 < calibration_fraction < 1.0:
        raise ValueError(f"steering.calibration_fraction must lie in (0, 1), got {calibration_fraction}")
    rng = np.random.default_rng(seed)
    _, first, subset_of = np.unique(
        samples.column("subset").to_numpy(zero_copy_only=False), return_index=True, return_inverse=True
    )
    order = np.argsort(first)  # subsets in order of first appearance: the draws depend on it
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    grouped = np.argsort(rank[subset_of], kind="stable")  # rows by subset, each subset's in table order
    calibration = [
        rows[rng.permutation(rows.size)[: calibration_count(rows.size, calibration_fraction)]]
        for rows in np.split(grouped, np.cumsum(np.bincount(subset_of)[order])[:-1])  # one per subset
    ]
    chosen = np.zeros(samples.num_rows, dtype=bool)
    chosen[np.concatenate(calibration or [np.empty(0, dtype=np.int64)])] = True
    return samples.filter(pa.array(chosen)), samples.filter(pa.array(~chosen))


# --------------------------------------------------------------------------
# Directions.


def unit_direction(target: np.ndarray, source: np.ndarray, eps: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """(target - source) / max(||target - source||, eps), row by row.

    ``target`` and ``source`` have shape (n_layers, hidden); returns the unit
    directions (n_layers, hidden) and the norms before scaling (n_layers,).
    """
    diff = np.asarray(target, dtype=np.float64) - np.asarray(source, dtype=np.float64)
    norms = np.linalg.norm(diff, axis=-1)
    return (diff / np.maximum(norms, eps)[:, None]).astype(np.float32), norms


def steering_directions(
    combined: np.ndarray, singles: Sequence[np.ndarray], question_only: np.ndarray, *, eps: float = 1e-8
) -> dict[str, np.ndarray]:
    """Both steering directions from calibration activations.

    ``combined`` and ``question_only``: (N, n_layers, hidden), one row per
    calibration sample; ``singles``: N arrays of shape (K_n, n_layers, hidden).
    Returns ``mean_difference`` and ``cas`` (n_layers, hidden) and their
    pre-normalisation norms ``*_norm`` (n_layers,).
    """
    if len(singles) != len(combined) or len(question_only) != len(combined) or len(combined) == 0:
        raise ValueError(
            f"need the same N >= 1 samples in every input, got {len(combined)}, {len(singles)}, {len(question_only)}"
        )
    mu_bar = np.mean([np.mean(a, axis=0) for a in singles], axis=0)
    c_bar = np.mean(combined, axis=0)
    q_bar = np.mean(question_only, axis=0)
    mean_difference, md_norm = unit_direction(mu_bar, c_bar, eps)
    cas, cas_norm = unit_direction(c_bar, q_bar, eps)
    return {"mean_difference": mean_difference, "cas": cas, "mean_difference_norm": md_norm, "cas_norm": cas_norm}


def direction_prompts(tokenizer, samples: list[dict], templates: dict[str, str]) -> list[dict]:
    """Per sample: the combined prompt, one prompt per piece (as in the
    projection analysis) and the question-only prompt (``question_only``)."""
    from conflictlab.contextconflict.pairs import projection_prompts
    from conflictlab.contextconflict.prompts import build_messages, encode_messages

    rows = []
    for sample, prompts in zip(samples, _by_sample(projection_prompts(tokenizer, samples, templates), samples)):
        question_only = build_messages(templates[sample["task_family"]], sample["question"], [])
        rows += prompts + [
            {**prompts[0], "variant": "question_only", "ids": encode_messages(tokenizer, question_only)[1]}
        ]
    return rows


def _by_sample(rows: list[dict], samples: list[dict]) -> list[list[dict]]:
    grouped: dict[str, list[dict]] = {s["sample_id"]: [] for s in samples}
    for row in rows:
        grouped[row["sample_id"]].append(row)
    return [grouped[s["sample_id"]] for s in samples]


def directions_from_states(prompts: list[dict], states: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`steering_directions` from :func:`direction_prompts` rows and
    their states (len(prompts), n_layers, hidden)."""
    return _directions(
        pa.array([prompt["sample_id"] for prompt in prompts], pa.string()),
        pa.array([prompt["variant"] for prompt in prompts], pa.string()),
        states,
    )


def _directions(sample_ids: pa.Array, variants: pa.Array, states: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`steering_directions` from prompt rows given as their sample ids
    and variants (each (rows,)) and their states (rows, n_layers, hidden):
    per sample, in order of first appearance, its first ``combined`` and
    ``question_only`` rows and its ``single_*`` rows in order."""
    samples, first, sample_of = np.unique(
        sample_ids.to_numpy(zero_copy_only=False), return_index=True, return_inverse=True
    )
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    sample_of = rank[sample_of]  # samples numbered in order of first appearance
    ordered = samples[np.argsort(first)]

    def rows_of(kind: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows of a kind grouped by sample, each sample's in order, and each sample's count of them."""
        matches = pc.starts_with(variants, "single_") if kind == "single" else pc.equal(variants, kind)
        rows = np.flatnonzero(matches.to_numpy(zero_copy_only=False))
        rows = rows[np.argsort(sample_of[rows], kind="stable")]
        counts = np.bincount(sample_of[rows], minlength=first.size)
        if (counts == 0).any():
            raise KeyError(f"no {kind} prompt for sample {ordered[np.argmin(counts)]!r}")
        return rows, counts

    firsts = {}
    for kind in ("combined", "question_only"):
        rows, counts = rows_of(kind)
        firsts[kind] = rows[np.cumsum(counts) - counts]
    rows, counts = rows_of("single")
    return steering_directions(
        states[firsts["combined"]], np.split(states[rows], np.cumsum(counts)[:-1]), states[firsts["question_only"]]
    )


def calibration_directions(
    index: pa.Table | Sequence[dict], states: np.ndarray, calibration_ids: Sequence[str], *, source: str = "states"
) -> dict[str, np.ndarray]:
    """:func:`directions_from_states` of the calibration samples only.

    ``index`` and ``states`` hold the :func:`direction_prompts` of every
    sample of a type (an activation index, or its rows, with ``sample_id``
    and ``variant``; states of shape (len(index), n_layers, hidden)), as the
    activations rule stores them; the calibration samples' rows are taken in
    ``calibration_ids`` order. ValueError, naming ``source``, when a
    calibration sample has no rows there.
    """
    index = index if isinstance(index, pa.Table) else pa.Table.from_pylist(list(index))
    wanted = pa.array(list(calibration_ids), pa.string())
    missing = wanted.filter(pc.invert(pc.is_in(wanted, value_set=index.column("sample_id")))).to_pylist()
    if missing:
        raise ValueError(
            f"{source}: no direction prompts for calibration samples {missing[:5]} (activations of other data?)"
        )
    position = pc.index_in(
        index.column("sample_id"), value_set=wanted
    )  # of each row's sample among calibration_ids; null: not one
    position = pc.fill_null(position, -1).to_numpy()
    rows = np.flatnonzero(position >= 0)
    rows = rows[np.argsort(position[rows], kind="stable")]
    return _directions(
        index.column("sample_id").take(rows).combine_chunks(),
        index.column("variant").take(rows).combine_chunks(),
        states[rows],
    )


def save_directions(path, directions: dict[str, np.ndarray], calibration_ids: Sequence[str]) -> None:
    """One ``.npz`` per (model, type): both directions, their norms and the
    calibration sample ids they came from (written atomically)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, calibration_ids=np.array(list(calibration_ids), dtype=str), **directions)


def load_directions(path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


# --------------------------------------------------------------------------
# Results: Table 4 and Figure 31 from the steered reruns' metric summaries.

METHOD_LABELS = {"base": "Base", "all_tokens": "All-Tokens", "first_generated": "First-Generated", "cas": "CAS"}
# Table 4's metrics, in its column order, with their directions from the metric registry.
HIGHER_IS_BETTER = {
    name: metrics.higher_is_better(metrics.get(name)) for name in ("accuracy", "faithfulness", "balance")
}
METRIC_LABELS = {"accuracy": "Acc", "faithfulness": "Fth", "balance": "Bal"}

STEERING_RESULT_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("alpha", pa.float64(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),  # accuracy | faithfulness | balance
        pa.field("conflict_type", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("n", pa.int64(), nullable=False),  # samples behind the value (Balance: defined shares only)
        pa.field("nan_rate", pa.float64()),  # Faithfulness: share of judged samples without a score
    ]
)


def steering_results(
    variants: dict[str, tuple[str, float]],
    accuracy_summary: pa.Table | None,
    balance_summary: pa.Table | None,
    faithfulness_summary: pa.Table | None = None,
) -> pa.Table:
    """One row per (steered rerun, metric, type).

    ``variants`` maps a variant name to (method, alpha); the summaries are
    :func:`conflictlab.contextconflict.accuracy.summarize_accuracy`,
    :func:`conflictlab.contextconflict.balance.summarize_balance` and
    :func:`conflictlab.judges.faithfulness.summarize_faithfulness` tables;
    rows whose ``model`` is not ``name@variant`` (a base generator) are skipped.
    """
    parts = []
    if accuracy_summary is not None:
        types = accuracy_summary.filter(pc.equal(accuracy_summary.column("level"), "type"))
        parts.append(_steered_rows(types, variants, "accuracy", types.column("accuracy"), types.column("n")))
    if balance_summary is not None:
        overall = balance_summary.filter(pc.equal(balance_summary.column("group"), "all"))
        n_defined = pc.subtract(overall.column("n_scored"), overall.column("n_undefined"))
        parts.append(_steered_rows(overall, variants, "balance", overall.column("balance"), n_defined))
    if faithfulness_summary is not None:
        names = pc.unique(faithfulness_summary.column("model")).to_pylist()  # one per responder
        known = [
            name
            for name in names
            if (steered := SteeredModel.parse_if_steered(name)) is not None and steered.variant.format() in variants
        ]
        mine = faithfulness_summary.filter(pc.is_in(faithfulness_summary.column("model"), pa.array(known, pa.string())))
        parts.append(
            _steered_rows(
                mine,
                variants,
                "faithfulness",
                mine.column("faithfulness"),
                mine.column("n_scored"),
                mine.column("nan_rate"),
            )
        )
    return pa.concat_tables([STEERING_RESULT_SCHEMA.empty_table(), *parts])


def _steered_rows(
    summary: pa.Table, variants: dict[str, tuple[str, float]], metric: str, value, n, nan_rate=None
) -> pa.Table:
    """:data:`STEERING_RESULT_SCHEMA` rows of ``summary``'s rows (in its
    order), all of steered reruns, with their ``value`` and ``n`` columns
    (and ``nan_rate``; null without), each ``summary.num_rows`` long."""
    names = pc.unique(summary.column("model")).to_pylist()  # one per steered rerun
    parsed = [SteeredModel.parse(name) for name in names]
    specs = [variants[steered.variant.format()] for steered in parsed]
    at = pc.index_in(summary.column("model"), value_set=pa.array(names, pa.string()))
    columns = {
        "model": pa.array([steered.model for steered in parsed], pa.string()).take(at),
        "variant": pa.array([steered.variant.format() for steered in parsed], pa.string()).take(at),
        "method": pa.array([method for method, _ in specs], pa.string()).take(at),
        "alpha": pa.array([float(alpha) for _, alpha in specs], pa.float64()).take(at),
        "metric": pa.repeat(pa.scalar(metric), summary.num_rows),
        "conflict_type": summary.column("conflict_type"),
        "value": value,
        "ci_low": summary.column("ci_low"),
        "ci_high": summary.column("ci_high"),
        "n": n,
        "nan_rate": pa.nulls(summary.num_rows, pa.float64()) if nan_rate is None else nan_rate,
    }
    return pa.table({field.name: pc.cast(columns[field.name], field.type) for field in STEERING_RESULT_SCHEMA}).cast(
        STEERING_RESULT_SCHEMA
    )


def table4(
    results: pa.Table,
    *,
    table_variants: Sequence[str],
    columns: Sequence[tuple[str, str]],
    items: Mapping[tuple[str, str, str], tuple[list, np.ndarray]] | None = None,
    min_n: int,
    seed: int = 0,
) -> tuple[list[dict], list[str]]:
    """Table 4 cells and their notes.

    ``columns``: (metric, conflict_type) pairs. ``items``: per
    ``(model@variant, metric, type)``, the per-item ids and values a cell
    averages (:func:`cell_items`). Returns one dict per (model, method) row
    with, per column key ``"<metric>:<type>"``, a dict of ``value``,
    ``ci_low``, ``ci_high``, ``n`` and ``mark``: "best" where that variant
    beats every other variant of its model block in paired tests on the
    items they share, Holm-corrected (:func:`conflictlab.paired.best_by_paired_tests`),
    with every cell at n ≥ ``min_n``; and notes saying why a column has no mark.
    """
    items = dict(items or {})
    models = pc.unique(results.column("model")).to_pylist()  # in order of first appearance
    # the rows the table shows become its cells (dicts), the sweep's other variants stay out
    shown = results.filter(pc.is_in(results.column("variant"), pa.array(list(table_variants), pa.string())))
    data = {(r["model"], r["variant"], r["metric"], r["conflict_type"]): r for r in shown.to_pylist()}
    methods = {(r["model"], r["variant"]): r["method"] for r in data.values()}
    rows, unmarked = [], {}
    for model in models:
        missing = [v for v in table_variants if (model, v) not in methods]
        if missing:
            raise ValueError(f"no steering results for {model}@{missing[0]}")
        block = [{"model": model, "method": METHOD_LABELS[methods[model, v]], "variant": v} for v in table_variants]
        for metric, conflict_type in columns:
            cells = [data.get((model, v, metric, conflict_type)) for v in table_variants]
            found = [items.get((SteeredModel(model, v).format(), metric, conflict_type)) for v in table_variants]
            marks, why = [""] * len(cells), ""
            if any(c is None or c["n"] < min_n for c in cells):
                why = f"n < {min_n}"
            elif any(f is None for f in found):
                why = "no per-item values to pair"
            else:
                best = best_by_paired_tests(
                    [f[0] for f in found],
                    [f[1] for f in found],
                    higher_is_better=HIGHER_IS_BETTER[metric],
                    proportion=metrics.paired_comparison(metrics.get(metric)) == "proportion",
                    seed=seed,
                )
                if best is None:
                    why = "no variant beats every other in paired tests, Holm-corrected at 5%"
                else:
                    marks[best] = "best"
            if why:
                unmarked.setdefault(why, []).append(f"{model} {METRIC_LABELS[metric]} {conflict_type}")
            for row, cell, mark in zip(block, cells, marks):
                row[column_key(metric, conflict_type)] = None if cell is None else {**cell, "mark": mark}
        rows += block
    return rows, [f"no marks ({why}): {', '.join(where)}" for why, where in unmarked.items()]


def paired_results(
    results: pa.Table,
    items: Mapping[tuple[str, str, str], tuple[list, np.ndarray]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pa.Table:
    """``results`` with the paired columns of
    :func:`conflictlab.paired.paired_columns`: each row compared
    with its model's ``base`` row of the same metric and type on the items
    both cover (``items`` of :func:`cell_items`); null on the base rows and
    where either side has no per-item values."""

    rows = []
    for r in results.to_pylist():  # one per (rerun, metric, type): tens of rows
        mine = items.get((SteeredModel(r["model"], r["variant"]).format(), r["metric"], r["conflict_type"]))
        base = items.get((SteeredModel(r["model"], BASE).format(), r["metric"], r["conflict_type"]))
        paired = dict.fromkeys(PAIRED_COLUMNS)
        if r["variant"] != BASE and mine is not None and base is not None:
            what = f"Table 4 {r['metric']} {r['conflict_type']} of {r['model']}: {r['variant']} against {BASE}"
            paired.update(
                paired_columns(
                    mine,
                    base,
                    proportion=metrics.paired_comparison(metrics.get(r["metric"])) == "proportion",
                    what=what,
                    n_resamples=n_resamples,
                    seed=seed,
                )
            )
        rows.append(paired)
    types = {"p_paired_text": pa.string(), "paired_test": pa.string(), "n_pairs": pa.int64()}
    for name in PAIRED_COLUMNS:
        results = results.append_column(name, pa.array([row[name] for row in rows], types.get(name, pa.float64())))
    return results


def table4_columns(results: pa.Table) -> list[tuple[str, str]]:
    """Table 4's (metric, conflict type) columns: accuracy, faithfulness, then
    balance, the types present for each metric in :data:`CONFLICT_TYPES` order."""
    pairs = results.group_by(["metric", "conflict_type"], use_threads=False).aggregate([])  # one row per pair present
    present = set(zip(pairs.column("metric").to_pylist(), pairs.column("conflict_type").to_pylist()))
    return [(m, t) for m in HIGHER_IS_BETTER for t in CONFLICT_TYPES if (m, t) in present]


def column_key(metric: str, conflict_type: str) -> str:
    return f"{metric}:{conflict_type}"


_KEY_SEPARATOR = "\x1f"  # in no model, variant, metric or type name


def with_marks(results: pa.Table, rows: list[dict]) -> pa.Table:
    """``results`` with a ``mark`` column (best/second/"") from :func:`table4`'s rows."""
    marks = {
        _KEY_SEPARATOR.join((row["model"], row["variant"], cell["metric"], cell["conflict_type"])): cell["mark"]
        for row in rows
        for cell in row.values()
        if isinstance(cell, dict)
    }
    keys = pc.binary_join_element_wise(
        *(results.column(c) for c in ("model", "variant", "metric", "conflict_type")), _KEY_SEPARATOR
    )
    at = pc.index_in(keys, value_set=pa.array(list(marks), pa.string()))
    return results.append_column("mark", pc.fill_null(pa.array(list(marks.values()), pa.string()).take(at), ""))


def cell_items(
    accuracy: pa.Table | None, attributions: pa.Table | None, judged: pa.Table | None
) -> dict[tuple[str, str, str], tuple[list, np.ndarray]]:
    """Per ``(model, metric, type)``, the item ids and per-item values a Table 4
    cell averages (:func:`table4`'s and :func:`paired_results`' ``items``):
    accuracy every per-sample row (``correct`` as 0/1), Balance the
    attributions with defined shares, Faithfulness the judged rows with a
    score; ``model`` as the tables spell it (``name@variant`` for a steered rerun)."""
    import polars as pl

    kept = []
    if accuracy is not None:
        kept.append(
            ("accuracy", pl.from_arrow(accuracy.select(["model", "conflict_type", "sample_id", "correct"])), "correct")
        )
    if attributions is not None:
        frame = pl.from_arrow(attributions.select(["model", "conflict_type", "sample_id", "balance", "undefined"]))
        kept.append(("balance", frame.filter(~pl.col("undefined")), "balance"))
    if judged is not None:
        frame = pl.from_arrow(judged.select(["model", "conflict_type", "sample_id", "faithfulness"]))
        kept.append(("faithfulness", frame.filter(pl.col("faithfulness").is_not_null()), "faithfulness"))
    out = {}
    for metric, frame, value in kept:
        for (model, conflict_type), group in frame.group_by(
            "model", "conflict_type", maintain_order=True
        ):  # one per cell
            out[(model, metric, conflict_type)] = (
                group["sample_id"].to_list(),
                group[value].cast(pl.Float64).to_numpy(),
            )
    return out

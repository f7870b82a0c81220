"""ConflictBank's metrics (the authors' ``evaluate.py``), with intervals.

Per model, the headline counts only the *scored subset*: records answered
correctly both without evidence (``default``) and with the correct evidence
(``correct``), the same records for every setting (``evaluate.py`` takes it
from ``default.json`` and ``correct.json``). On it, per setting, as
proportions in [0, 1] of the n_scored records:

- OAR ("Correct Accuracy"): predictions equal to the correct option;
- CAR ("Replaced Accuracy"): equal to the replaced (conflicting) option;
- uncertain rate: equal to the "uncertain" option;
- neither rate: 1 − OAR − CAR, answers that are neither the correct nor the
  replaced option (the uncertain option or the other distractor); added here;
- MR (memorization ratio, paper §3.1) = OAR / (OAR + CAR) = P(correct |
  correct or replaced), over its own denominator n_mr, the scored answers that
  are correct or replaced. At n_mr = 0 MR is NaN: ``evaluate.py`` reports 0,
  which would read a model that answers neither as "never kept its memory";
- mean entropy in bits of the four probabilities (zero probabilities dropped).

Intervals: Clopper-Pearson 95% for every proportion (MR's over n_mr;
:func:`conflictlab.stats.proportion_interval`, none at n < 2); for the mean
entropy the betting interval over [0, 2] bits
(:func:`conflictlab.stats.bounded_mean_interval`, whose coverage holds with the point mass a
confident read-out puts at 0 bits; none below its minimum n). ``n_resamples``, ``seed`` and ``workers`` are unused since
the entropy's bootstrap went (issue 50); kept until config drops
``bootstrap_resamples``.
The authors round to two decimals; nothing is rounded here.

:func:`with_oar_drop` adds to the embedded table the drop in OAR from the 1:0 run (default data only) to each
other ratio, paired over the records both runs answered: the change §3.3 reports (37.6 for Mistral-7B at 2:1).

The full QA set read out under 17 settings is ~9.4M prediction rows per
model, so the tables are never turned into Python rows: polars scans the
Parquet, joins the scored subset and counts per (model, setting); only the
scored rows' probabilities are materialised, as one (n, 4) array.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from conflictlab.paired import tango_interval
from conflictlab.stats import bounded_mean_interval, proportion_interval

RATES = ("oar", "car", "uncertain", "neither")

METRIC_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("n_records", pa.int64(), nullable=False),
        pa.field("n_scored", pa.int64(), nullable=False),
    ]
    + [pa.field(f"{rate}{suffix}", pa.float64()) for rate in RATES for suffix in ("", "_low", "_high")]
    + [pa.field("n_mr", pa.int64(), nullable=False)]
    + [pa.field(f"{name}{suffix}", pa.float64()) for name in ("mr", "entropy") for suffix in ("", "_low", "_high")]
)

# The columns of ``evaluation.PREDICTION_SCHEMA`` the metrics read, as polars
# types (importing evaluation would pull in the model layer and torch).
COLUMNS = {
    "record_id": pl.Int64,
    "setting": pl.String,
    "model": pl.String,
    "probabilities": pl.Array(pl.Float64, 4),
    "predicted_letter": pl.String,
    "correct_letter": pl.String,
    "replaced_letter": pl.String,
    "uncertain_letter": pl.String,
}

Predictions = pa.Table | pl.DataFrame | pl.LazyFrame

_ENTROPY_BLOCK = 1 << 20  # rows per entropy_bits call: its temporaries are ~5 copies of the block


def _check_columns(schema: Mapping[str, pl.DataType], source: str) -> None:
    for name, dtype in COLUMNS.items():
        if name not in schema:
            raise ValueError(f"{source}: field {name!r} is missing (ConflictBank predictions need {list(COLUMNS)})")
        if schema[name] != dtype:
            raise ValueError(f"{source}: field {name!r} is {schema[name]}, expected {dtype}")


def scan_predictions(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> pl.LazyFrame:
    """The Parquet files ``paths`` (``evaluation.PREDICTION_SCHEMA``; one path
    or several, in order) as one lazy frame of :data:`COLUMNS`, each file's
    rows in the file's order. Reads only the files' metadata here; a file
    without a column, or with another type, is an error naming it and the field."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        raise ValueError("scan_predictions: no Parquet files given")
    frames = []
    for path in paths:
        frame = pl.scan_parquet(path)
        _check_columns(frame.collect_schema(), str(path))
        frames.append(frame.select(list(COLUMNS)))
    return pl.concat(frames, how="vertical")


def _lazy(predictions: Predictions) -> pl.LazyFrame:
    if isinstance(predictions, pa.Table):
        predictions = pl.from_arrow(predictions)
    frame = predictions.lazy()
    _check_columns(frame.collect_schema(), "predictions")
    return frame.select(list(COLUMNS))


def entropy_bits(probabilities: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of (n, k) probabilities, zeros dropped."""
    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=1)


def _groups(frame: pl.LazyFrame) -> pl.DataFrame:
    """(model, setting, n_records), one row per pair present: models sorted,
    settings in order of first appearance within the model."""
    return (
        frame.select("model", "setting")
        .with_row_index("row")
        .group_by("model", "setting")
        .agg(pl.len().cast(pl.Int64).alias("n_records"), pl.col("row").min().alias("first"))
        .sort("model", "first")
        .drop("first")
        .collect(engine="streaming")
    )


def _released_subset(frame: pl.LazyFrame, groups: pl.DataFrame) -> pl.DataFrame:
    """(model, record_id), unique: per model, the records it answers
    correctly in both ``default`` and ``correct``. ValueError when a model
    in ``groups`` lacks either setting."""
    for model, settings in groups.group_by("model", maintain_order=True).agg("setting").iter_rows():
        missing = sorted({"default", "correct"} - set(settings))
        if missing:
            raise ValueError(
                f"the scored subset needs the settings default and correct; predictions of {model} lack {missing}"
            )
    return (
        frame.filter(
            pl.col("setting").is_in(["default", "correct"]) & (pl.col("predicted_letter") == pl.col("correct_letter"))
        )
        .select("model", "record_id", "setting")
        .unique()
        .group_by("model", "record_id")
        .len()
        .filter(pl.col("len") == 2)
        .select("model", "record_id")
        .collect(engine="streaming")
    )


def scored_records(predictions: Predictions) -> pl.DataFrame:
    """The released scored subset of every model in ``predictions``
    (``PREDICTION_SCHEMA``): a frame of unique (model, record_id), the
    records each model answers correctly in both ``default`` and ``correct``."""
    frame = _lazy(predictions)
    return _released_subset(frame, _groups(frame))


def _subset_frame(subsets: Mapping[str, Iterable[int]] | pl.DataFrame, groups: pl.DataFrame) -> pl.DataFrame:
    """``subsets`` as unique (model, record_id). A mapping must name every
    model in ``groups``; a frame without rows for a model gives it an empty subset."""
    if isinstance(subsets, pl.DataFrame):
        return subsets.select(pl.col("model").cast(pl.String), pl.col("record_id").cast(pl.Int64)).unique()
    unnamed = sorted(set(groups["model"]) - set(subsets))
    if unnamed:
        raise ValueError(f"subsets name no scored records for the models {unnamed}")
    return pl.DataFrame(
        {
            "model": [model for model, ids in subsets.items() for _ in ids],
            "record_id": [record for ids in subsets.values() for record in ids],
        },
        schema={"model": pl.String, "record_id": pl.Int64},
    ).unique()


def _metrics(
    frame: pl.LazyFrame,
    groups: pl.DataFrame,
    subset: pl.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
    workers: int | None,
) -> pa.Table:
    """:data:`METRIC_SCHEMA` rows in ``groups``' order, on the rows of
    ``frame`` whose (model, record_id) is in ``subset``."""
    if groups.height == 0:
        return METRIC_SCHEMA.empty_table()
    setting_type = pl.Enum(groups["setting"].unique(maintain_order=True).to_list())
    predicted = pl.col("predicted_letter")
    counts, slices = {}, {}
    for model in groups["model"].unique(maintain_order=True).to_list():
        ids = subset.filter(pl.col("model") == model)["record_id"]
        # One model at a time: a filter, not a join, so the rows stay in the
        # table's order (the bootstrap's draws depend on it) and the Parquet
        # reader skips other models' files by their statistics.
        scored = (
            frame.filter((pl.col("model") == model) & pl.col("record_id").is_in(ids.implode()))
            .select(
                pl.col("setting").cast(setting_type),
                (predicted == pl.col("correct_letter")).alias("oar"),
                (predicted == pl.col("replaced_letter")).alias("car"),
                (predicted == pl.col("uncertain_letter")).alias("uncertain"),
                "probabilities",
            )
            .collect(engine="streaming")
        )
        for row in (
            scored.group_by("setting")
            .agg(pl.len().alias("n_scored"), *(pl.col(name).sum().alias(name) for name in ("oar", "car", "uncertain")))
            .iter_rows(named=True)
        ):
            counts[model, row["setting"]] = row
        probabilities = scored.drop_in_place("probabilities").to_numpy().reshape(-1, 4)
        entropies = np.empty(len(probabilities))
        for start in range(0, len(probabilities), _ENTROPY_BLOCK):
            entropies[start : start + _ENTROPY_BLOCK] = entropy_bits(probabilities[start : start + _ENTROPY_BLOCK])
        del probabilities
        codes = scored["setting"].to_physical().to_numpy()
        order = np.argsort(codes, kind="stable")  # stable: each setting's rows keep their order
        bounds = np.searchsorted(codes[order], np.arange(len(setting_type.categories) + 1))
        for code, setting in enumerate(setting_type.categories.to_list()):
            if bounds[code + 1] > bounds[code]:
                slices[model, setting] = entropies[order[bounds[code] : bounds[code + 1]]]
    # entropy in bits of 4 options lies in [0, 2]
    intervals = {
        key: bounded_mean_interval(values, confidence=confidence, bounds=(0.0, 2.0)) for key, values in slices.items()
    }
    empty = {"n_scored": 0, "oar": 0, "car": 0, "uncertain": 0}
    out = []
    for model, setting, n_records in groups.iter_rows():  # one per (model, setting): tens of rows
        count = counts.get((model, setting), empty)
        n, n_mr = count["n_scored"], count["oar"] + count["car"]
        row = {"model": model, "setting": setting, "n_records": n_records, "n_scored": n}
        for name, k in (
            ("oar", count["oar"]),
            ("car", count["car"]),
            ("uncertain", count["uncertain"]),
            ("neither", n - n_mr),
        ):
            row[name], row[f"{name}_low"], row[f"{name}_high"] = proportion_interval(k, n, confidence=confidence)
        row["n_mr"] = n_mr
        row["mr"], row["mr_low"], row["mr_high"] = proportion_interval(count["oar"], n_mr, confidence=confidence)
        row["entropy"], row["entropy_low"], row["entropy_high"] = intervals.get((model, setting), (math.nan,) * 3)
        out.append(row)
    return pa.Table.from_pylist(out, schema=METRIC_SCHEMA)


def setting_metrics(
    predictions: Predictions,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    subsets: Mapping[str, Iterable[int]] | pl.DataFrame | None = None,
    workers: int | None = None,
) -> pa.Table:
    """One row per (model, setting) of :data:`METRIC_SCHEMA`: models sorted,
    settings in order of first appearance within the model.

    ``predictions`` follows ``evaluation.PREDICTION_SCHEMA`` (a pyarrow
    table, a polars frame, or :func:`scan_predictions` of the files).
    ``subsets`` (model -> record ids for every model, or a frame of unique
    (model, record_id)) overrides the scored subset; None: the released
    rule, per model, from that model's own ``default`` and ``correct``
    (ValueError when a model lacks either). An empty scored subset
    gives NaN metrics and ``n_scored = 0``. ``workers``: threads for the
    entropy bootstraps (one per setting); None: the CPUs this process may use.
    """
    frame = _lazy(predictions)
    groups = _groups(frame)
    subset = _released_subset(frame, groups) if subsets is None else _subset_frame(subsets, groups)
    return _metrics(frame, groups, subset, n_resamples=n_resamples, seed=seed, confidence=confidence, workers=workers)


# The embedded experiment's two scorings: the headline and its companion.
SCORED_SUBSET, ALL_RECORDS = "scored subset", "all records"

EMBEDDED_SCHEMA = pa.schema(
    [
        METRIC_SCHEMA.field("model"),
        pa.field("ratio", pa.string(), nullable=False),
        pa.field("scored_on", pa.string(), nullable=False),
    ]
    + [field for field in METRIC_SCHEMA if field.name != "model"]
)


def embedded_metrics(
    base: Predictions,
    trained: Mapping[str, Predictions],
    *,
    models: Sequence[str],
    settings: Sequence[str],
    n_resamples: int = 2000,
    seed: int = 0,
    workers: int | None = None,
) -> pa.Table:
    """One row of :data:`EMBEDDED_SCHEMA` per (scored_on, ratio, model, setting in ``settings``).

    ``base``: the untrained models' predictions (``PREDICTION_SCHEMA``, with
    ``default`` and ``correct``); ``trained``: ratio label (``"2:3"``) -> the
    trained models' predictions, each under its base model's name. Ratio
    ``"base"`` is the untrained model. Rows: the headline first, then by
    model in ``models``' order, ratio (``"base"``, then ``trained``'s order),
    setting in order of first appearance.

    Headline (``scored_on = "scored subset"``): the base model's scored
    subset, the same records at every ratio. ``evaluate.py`` takes the subset
    from the ``default.json``/``correct.json`` at the top of the folder it
    walks and applies it to every file beneath, so with the base model's
    read-out on top every trained model is scored on the base model's
    subset; a trained model's own subset would make its ``default`` OAR 100%
    by construction, hiding the drop the paper reports (§3.3, Figure 6).
    Companion (``"all records"``): every record. ValueError when a model in
    ``models`` has no base predictions, or a trained table holds a model
    outside ``models``.
    """
    models = list(models)
    own = _lazy(base).filter(pl.col("model").is_in(models))
    own_groups = _groups(own)
    lacking = [model for model in models if model not in set(own_groups["model"])]
    if lacking:
        raise ValueError(
            f"embedded models {lacking} have no read-out before training; they must also be under conflictbank.models"
        )
    scorings = {
        SCORED_SUBSET: _released_subset(own, own_groups),
        ALL_RECORDS: own.select("model", "record_id").unique().collect(engine="streaming"),
    }
    by_ratio = {"base": own, **{ratio: _lazy(table) for ratio, table in trained.items()}}
    # Only the requested settings are reported; the others' rows would be computed and dropped.
    chosen = {ratio: frame.filter(pl.col("setting").is_in(list(settings))) for ratio, frame in by_ratio.items()}
    groups = {ratio: _groups(frame) for ratio, frame in chosen.items()}
    for ratio, found in groups.items():
        strangers = sorted(set(found["model"]) - set(models))
        if strangers:
            raise ValueError(
                f"embedded predictions at ratio {ratio} hold models {strangers} outside the embedded models {models}"
            )
    parts = []
    for scored_on, subset in scorings.items():
        for ratio, frame in chosen.items():
            table = _metrics(
                frame, groups[ratio], subset, n_resamples=n_resamples, seed=seed, confidence=0.95, workers=workers
            )
            parts.append(
                pl.from_arrow(table).with_columns(pl.lit(ratio).alias("ratio"), pl.lit(scored_on).alias("scored_on"))
            )
    if not parts:
        return EMBEDDED_SCHEMA.empty_table()
    ranks = {"scored_on": list(scorings), "model": models, "ratio": list(by_ratio)}
    rows = (
        pl.concat(parts)
        .with_row_index("order")
        .sort(*(pl.col(key).replace_strict(values, list(range(len(values)))) for key, values in ranks.items()), "order")
    )
    return rows.select(EMBEDDED_SCHEMA.names).to_arrow().cast(EMBEDDED_SCHEMA)


# The run on default data only: the paper's drop in OAR with conflicting training data is from it (§3.3).
REFERENCE_RATIO = "1:0"
DROP_SCHEMA = pa.schema(
    [pa.field(name, pa.float64()) for name in ("oar_drop", "oar_drop_low", "oar_drop_high")]
    + [pa.field("n_paired", pa.int64())]
)
_DROP_TYPES = {"oar_drop": pl.Float64, "oar_drop_low": pl.Float64, "oar_drop_high": pl.Float64, "n_paired": pl.Int64}
_KEYS = ("scored_on", "ratio", "model", "setting")  # one embedded row


def _outcomes(frame: pl.LazyFrame, subset: pl.DataFrame, settings: list[str], ratio: str) -> pl.DataFrame:
    """(model, setting, record_id, oar), one per record, of ``frame``'s rows in ``settings`` whose (model,
    record_id) is in ``subset``; a row read twice counts once. ValueError when a record's two readings disagree
    (no pair is then defined)."""
    outcomes = (
        frame.filter(pl.col("setting").is_in(settings))
        .join(subset.lazy(), on=["model", "record_id"], how="semi")
        .select("model", "setting", "record_id", (pl.col("predicted_letter") == pl.col("correct_letter")).alias("oar"))
        .unique()
        .collect(engine="streaming")
    )
    twice = outcomes.filter(pl.struct("model", "setting", "record_id").is_duplicated())
    if twice.height:
        model, setting, record = twice.row(0)[:3]
        raise ValueError(
            f"embedded predictions at ratio {ratio}: record {record} of {model} in {setting} is read twice with "
            f"different answers ({twice.height // 2} such records): no pair for the drop in OAR"
        )
    return outcomes


def with_oar_drop(
    rows: pa.Table,
    base: Predictions,
    trained: Mapping[str, Predictions],
    *,
    reference: str = REFERENCE_RATIO,
    confidence: float = 0.95,
) -> pa.Table:
    """``rows`` (:func:`embedded_metrics` of ``base`` and ``trained``) with the columns of :data:`DROP_SCHEMA`:
    OAR at the ``reference`` ratio minus OAR at the row's ratio, as a proportion in [-1, 1], over the records of
    the row's scoring that both runs answered in the row's setting (``n_paired``), with Tango's score interval of
    a paired difference (:func:`conflictlab.paired.tango_interval`): both runs answer the same records, so
    the pairs, not two independent samples, carry the difference's error. Null on the ``base`` and ``reference``
    rows, and everywhere when ``trained`` has no ``reference`` run."""
    table = pl.from_arrow(rows).with_row_index("_order")
    found = []
    if reference in trained and table.height:
        models = table["model"].unique(maintain_order=True).to_list()
        settings = table["setting"].unique(maintain_order=True).to_list()
        own = _lazy(base).filter(pl.col("model").is_in(models))
        scorings = {
            SCORED_SUBSET: _released_subset(own, _groups(own)),
            ALL_RECORDS: own.select("model", "record_id").unique().collect(engine="streaming"),
        }
        for scored_on, subset in scorings.items():
            before = _outcomes(_lazy(trained[reference]), subset, settings, reference)
            for ratio, frame in trained.items():
                if ratio == reference:
                    continue
                counts = (
                    before.join(
                        _outcomes(_lazy(frame), subset, settings, ratio),
                        on=["model", "setting", "record_id"],
                        suffix="_after",
                    )
                    .group_by("model", "setting")
                    .agg(
                        pl.len().alias("n_paired"),
                        (pl.col("oar") & ~pl.col("oar_after")).sum().alias("only_before"),
                        (~pl.col("oar") & pl.col("oar_after")).sum().alias("only_after"),
                    )
                )
                for model, setting, n, only_before, only_after in counts.iter_rows():
                    drop, low, high = tango_interval(only_before, only_after, n, confidence=confidence)
                    found.append((scored_on, ratio, model, setting, drop, low, high, n))
    drops = pl.DataFrame(found, schema={**dict.fromkeys(_KEYS, pl.String), **_DROP_TYPES}, orient="row")
    joined = table.join(drops, on=list(_KEYS), how="left").sort("_order").drop("_order")
    # NaN (an interval below its minimum n) is no number: null, as the other columns' missing values
    joined = joined.with_columns(pl.col(c).fill_nan(None) for c in ("oar_drop", "oar_drop_low", "oar_drop_high"))
    return joined.to_arrow().cast(pa.schema([*EMBEDDED_SCHEMA, *DROP_SCHEMA]))

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

Intervals: Wilson 95% for every proportion (MR's over n_mr), percentile
bootstrap for the mean entropy; none at n < 2 (:mod:`conflictlab.stats`).
The authors round to two decimals; nothing is rounded here.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.stats import bootstrap_mean_ci, wilson_interval

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


def entropy_bits(probabilities: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of (n, k) probabilities, zeros dropped."""
    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=1)


def scored_records(predictions: pa.Table) -> set[int]:
    """Record ids one model answers correctly in both ``default`` and ``correct``."""
    rows = predictions.select(["record_id", "setting", "predicted_letter", "correct_letter"]).to_pylist()
    settings = {row["setting"] for row in rows}
    missing = {"default", "correct"} - settings
    if missing:
        raise ValueError(f"the scored subset needs the settings default and correct; predictions lack {sorted(missing)}")
    right = {name: {r["record_id"] for r in rows if r["setting"] == name and r["predicted_letter"] == r["correct_letter"]} for name in ("default", "correct")}
    return right["default"] & right["correct"]


def rates(chosen: list[dict], *, n_resamples: int, seed: int, confidence: float = 0.95) -> dict:
    """The metric columns of :data:`METRIC_SCHEMA` (from ``oar`` on) over
    ``chosen`` prediction rows (``evaluation.PREDICTION_SCHEMA``); NaN where
    a denominator is empty."""
    n = len(chosen)
    predicted = np.array([r["predicted_letter"] for r in chosen], dtype=object)
    counts = {
        name: int((predicted == np.array([r[column] for r in chosen], dtype=object)).sum()) if n else 0
        for name, column in (("oar", "correct_letter"), ("car", "replaced_letter"), ("uncertain", "uncertain_letter"))
    }
    n_mr = counts["oar"] + counts["car"]
    counts["neither"] = n - n_mr
    row: dict = {}
    for name in RATES:
        row[name], row[f"{name}_low"], row[f"{name}_high"] = wilson_interval(counts[name], n, confidence=confidence)
    row["n_mr"] = n_mr
    row["mr"], row["mr_low"], row["mr_high"] = wilson_interval(counts["oar"], n_mr, confidence=confidence)
    entropies = entropy_bits(np.array([r["probabilities"] for r in chosen], dtype=float).reshape(n, 4))
    row["entropy"], row["entropy_low"], row["entropy_high"] = bootstrap_mean_ci(
        entropies, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return row


def setting_metrics(
    predictions: pa.Table,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    subsets: Mapping[str, set[int]] | None = None,
) -> pa.Table:
    """One row per (model, setting) of :data:`METRIC_SCHEMA`.

    ``predictions`` follows ``evaluation.PREDICTION_SCHEMA``. ``subsets``
    (model -> record ids) overrides the scored subset; None: the released
    rule, per model, from that model's own ``default`` and ``correct``. An
    empty scored subset gives NaN metrics and ``n_scored = 0``.
    """
    out = []
    for model in sorted(set(predictions.column("model").to_pylist())):
        own = predictions.filter(pc.equal(predictions.column("model"), model))
        scored = scored_records(own) if subsets is None else subsets[model]
        rows = own.to_pylist()
        for setting in dict.fromkeys(r["setting"] for r in rows):
            chosen = [r for r in rows if r["setting"] == setting and r["record_id"] in scored]
            total = sum(1 for r in rows if r["setting"] == setting)
            out.append(
                {"model": model, "setting": setting, "n_records": total, "n_scored": len(chosen),
                 **rates(chosen, n_resamples=n_resamples, seed=seed, confidence=confidence)}
            )
    return pa.Table.from_pylist(out, schema=METRIC_SCHEMA)


# The embedded experiment's two scorings: the headline and its companion.
SCORED_SUBSET, ALL_RECORDS = "scored subset", "all records"

EMBEDDED_SCHEMA = pa.schema(
    [METRIC_SCHEMA.field("model"), pa.field("ratio", pa.string(), nullable=False), pa.field("scored_on", pa.string(), nullable=False)]
    + [field for field in METRIC_SCHEMA if field.name != "model"]
)


def embedded_metrics(
    base: pa.Table,
    trained: Mapping[str, pa.Table],
    *,
    models: list[str],
    settings: list[str],
    n_resamples: int = 2000,
    seed: int = 0,
) -> pa.Table:
    """One row of :data:`EMBEDDED_SCHEMA` per (scored_on, ratio, model, setting in ``settings``).

    ``base``: the untrained models' predictions (``PREDICTION_SCHEMA``, with
    ``default`` and ``correct``); ``trained``: ratio label (``"2:3"``) -> the
    trained models' predictions, each under its base model's name. Ratio
    ``"base"`` is the untrained model.

    Headline (``scored_on = "scored subset"``): the base model's scored
    subset, the same records at every ratio. ``evaluate.py`` takes the subset
    from the ``default.json``/``correct.json`` at the top of the folder it
    walks and applies it to every file beneath, so with the base model's
    read-out on top every trained model is scored on the base model's
    subset; a trained model's own subset would make its ``default`` OAR 100%
    by construction, hiding the drop the paper reports (§3.3, Figure 6).
    Companion (``"all records"``): every record. ValueError when a model in
    ``models`` has no base predictions.
    """
    own = {model: base.filter(pc.equal(base.column("model"), model)) for model in models}
    lacking = [model for model, table in own.items() if table.num_rows == 0]
    if lacking:
        raise ValueError(f"embedded models {lacking} have no read-out before training; they must also be under conflictbank.models")
    scorings = {
        SCORED_SUBSET: {model: scored_records(table) for model, table in own.items()},
        ALL_RECORDS: {model: set(table.column("record_id").to_pylist()) for model, table in own.items()},
    }
    by_ratio = {"base": pa.concat_tables(own.values()) if own else base.slice(0, 0), **trained}
    rows = []
    for scored_on, subsets in scorings.items():
        for ratio, table in by_ratio.items():
            for row in setting_metrics(table, subsets=subsets, n_resamples=n_resamples, seed=seed).to_pylist():
                if row["setting"] in settings:
                    rows.append({**row, "ratio": ratio, "scored_on": scored_on})
    ratios = list(by_ratio)
    rows.sort(key=lambda r: (list(scorings).index(r["scored_on"]), models.index(r["model"]), ratios.index(r["ratio"])))
    return pa.Table.from_pylist(rows, schema=EMBEDDED_SCHEMA)

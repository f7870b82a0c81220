"""ConflictBank's metrics as released (the authors' ``evaluate.py``).

Per model, only the *scored subset* counts: records answered correctly both
without evidence (``default``) and with the correct evidence (``correct``),
the same records for every setting. On it, per setting:

- OAR ("Correct Accuracy"): % predictions equal to the correct option;
- CAR ("Replaced Accuracy"): % equal to the replaced (conflicting) option;
- uncertain rate: % equal to the "uncertain" option;
- MR (memorization ratio) = OAR / (OAR + CAR) × 100, and 0 when both are 0;
- mean entropy in bits of the four probabilities (zero probabilities dropped).

Percentile-bootstrap intervals resample the scored records (every metric
from the same resamples). The authors round to two decimals; nothing is
rounded here.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

METRIC_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("n_records", pa.int64(), nullable=False),
        pa.field("n_scored", pa.int64(), nullable=False),
    ]
    + [
        pa.field(f"{metric}{suffix}", pa.float64())
        for metric in ("oar", "car", "uncertain", "mr")
        for suffix in ("", "_low", "_high")
    ]
    + [pa.field("entropy", pa.float64())]
)


def entropy_bits(probabilities: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of (n, k) probabilities, zeros dropped."""
    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=1)


def memorization_ratio(oar: np.ndarray, car: np.ndarray) -> np.ndarray:
    """100 · OAR / (OAR + CAR), elementwise, 0 where both are 0."""
    oar, car = np.asarray(oar, dtype=float), np.asarray(car, dtype=float)
    total = oar + car
    return np.where(total > 0, 100.0 * oar / np.where(total > 0, total, 1.0), 0.0)


def scored_records(predictions: pa.Table) -> set[int]:
    """Record ids one model answers correctly in both ``default`` and ``correct``."""
    rows = predictions.select(["record_id", "setting", "predicted_letter", "correct_letter"]).to_pylist()
    settings = {row["setting"] for row in rows}
    missing = {"default", "correct"} - settings
    if missing:
        raise ValueError(f"the scored subset needs the settings default and correct; predictions lack {sorted(missing)}")
    right = {name: {r["record_id"] for r in rows if r["setting"] == name and r["predicted_letter"] == r["correct_letter"]} for name in ("default", "correct")}
    return right["default"] & right["correct"]


def _rates(hits: np.ndarray, resamples: np.ndarray, confidence: float) -> tuple[float, float, float]:
    alpha = (1.0 - confidence) / 2.0
    point = 100.0 * hits.mean()
    low, high = np.quantile(100.0 * hits[resamples].mean(axis=1), [alpha, 1.0 - alpha])
    return float(point), float(low), float(high)


def setting_metrics(
    predictions: pa.Table, *, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95, subset: set[int] | None = None
) -> pa.Table:
    """One row per (model, setting) of :data:`METRIC_SCHEMA`.

    ``predictions`` follows ``evaluation.PREDICTION_SCHEMA``. ``subset``
    overrides the scored subset (None: the released rule, per model). An empty
    scored subset gives NaN metrics and ``n_scored = 0``.
    """
    out = []
    for model in sorted(set(predictions.column("model").to_pylist())):
        own = predictions.filter(pc.equal(predictions.column("model"), model))
        scored = scored_records(own) if subset is None else subset
        rows = own.to_pylist()
        for setting in dict.fromkeys(r["setting"] for r in rows):
            chosen = [r for r in rows if r["setting"] == setting and r["record_id"] in scored]
            total = sum(1 for r in rows if r["setting"] == setting)
            row = {"model": model, "setting": setting, "n_records": total, "n_scored": len(chosen)}
            if not chosen:
                out.append(row)
                continue
            predicted = np.array([r["predicted_letter"] for r in chosen])
            hits = {
                "oar": predicted == np.array([r["correct_letter"] for r in chosen]),
                "car": predicted == np.array([r["replaced_letter"] for r in chosen]),
                "uncertain": predicted == np.array([r["uncertain_letter"] for r in chosen]),
            }
            resamples = np.random.default_rng(seed).integers(0, len(chosen), size=(n_resamples, len(chosen)))
            for name, values in hits.items():
                row[name], row[f"{name}_low"], row[f"{name}_high"] = _rates(values.astype(float), resamples, confidence)
            mr_draws = memorization_ratio(hits["oar"][resamples].mean(axis=1), hits["car"][resamples].mean(axis=1))
            alpha = (1.0 - confidence) / 2.0
            row["mr"] = float(memorization_ratio(hits["oar"].mean(), hits["car"].mean()))
            row["mr_low"], row["mr_high"] = (float(q) for q in np.quantile(mr_draws, [alpha, 1.0 - alpha]))
            row["entropy"] = float(entropy_bits(np.array([r["probabilities"] for r in chosen])).mean())
            out.append(row)
    return pa.Table.from_pylist(out, schema=METRIC_SCHEMA)

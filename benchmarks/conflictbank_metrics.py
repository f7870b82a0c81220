"""ConflictBank's per-setting metrics at the full QA set's size: the columnar
implementation (polars, :func:`conflictlab.conflictbank.metrics.setting_metrics`)
against the row loops it replaced (``legacy_*`` below, copied verbatim from
the library before issue 33).

    python benchmarks/conflictbank_metrics.py [--rows 9402989] [--legacy-rows 1000000]
        [--resamples 2000] [--seed 0] [--keep DIR]

Writes seeded synthetic predictions tables of the real schema
(``evaluation.PREDICTION_SCHEMA``; one model, the 17 settings, rows / 17
records, each with its own correct, replaced and uncertain letters as in
``dataset.RECORD_SCHEMA``; about half the records in the scored subset) to a
temporary folder, one of ``--legacy-rows`` rows and one of ``--rows``. Each
measurement is its own child process, reading the Parquet file and computing
the metric table, timed from its start (imports included) to its exit: wall
seconds, and CPU seconds (user + system), which other work on the machine
disturbs less. Its peak RSS is the child's own ``ru_maxrss`` (``os.wait4``;
this process imports nothing heavy, since a child's high-water mark starts
from its parent's). Both implementations run side by side on the smaller
table, and their tables must be equal (every number, NaN where NaN); the new
one then runs at ``--rows``. The legacy one runs at ``--rows`` too unless its
memory, extrapolated linearly from the smaller run, would pass
``--legacy-limit-gb`` (the output says which).

The mean entropy's interval differs by design: the legacy code bootstraps it
(2,000 resamples per setting, ``conflictbank.bootstrap_resamples``: settings x
resamples x scored records random draws and gathers, 111 s of 118 at 9.4M
rows), the library takes the betting interval over [0, 2] bits (:func:`conflictlab.stats.bounded_mean_interval`;
docs/statistics.md). The comparison
therefore asks every other column to be equal and prints how far the two
intervals' ends lie apart, in units of the bootstrap interval's half-width.
The new implementation's time is printed in two parts, the intervals and the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_SECONDS, GOAL_GB = 10.0, 2.0


# --------------------------------------------------------------------------
# The implementation before issue 33, verbatim but for the names (and the
# metric schema copied, so that the legacy child imports no polars).


def legacy_metric_schema():
    import pyarrow as pa

    rates = ("oar", "car", "uncertain", "neither")
    return pa.schema(
        [
            pa.field("model", pa.string(), nullable=False),
            pa.field("setting", pa.string(), nullable=False),
            pa.field("n_records", pa.int64(), nullable=False),
            pa.field("n_scored", pa.int64(), nullable=False),
        ]
        + [pa.field(f"{rate}{suffix}", pa.float64()) for rate in rates for suffix in ("", "_low", "_high")]
        + [pa.field("n_mr", pa.int64(), nullable=False)]
        + [pa.field(f"{name}{suffix}", pa.float64()) for name in ("mr", "entropy") for suffix in ("", "_low", "_high")]
    )


def legacy_entropy_bits(probabilities):
    import numpy as np

    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=1)


def legacy_scored_records(predictions) -> set[int]:
    rows = predictions.select(["record_id", "setting", "predicted_letter", "correct_letter"]).to_pylist()
    settings = {row["setting"] for row in rows}
    missing = {"default", "correct"} - settings
    if missing:
        raise ValueError(
            f"the scored subset needs the settings default and correct; predictions lack {sorted(missing)}"
        )
    right = {
        name: {r["record_id"] for r in rows if r["setting"] == name and r["predicted_letter"] == r["correct_letter"]}
        for name in ("default", "correct")
    }
    return right["default"] & right["correct"]


def legacy_bootstrap_mean_ci(values, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0):
    """The bootstrap before it drew in blocks: every resample at once."""
    import math

    import numpy as np

    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (math.nan,) * 3
    if values.size < 2:
        return float(values.mean()), math.nan, math.nan
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, values.size, size=(n_resamples, values.size))
    means = values[resamples].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(values.mean()), float(low), float(high)


def legacy_rates(chosen: list[dict], *, n_resamples: int, seed: int, confidence: float = 0.95) -> dict:
    import numpy as np

    # the row loops check the counting; the intervals are the library's (issue 50 changed their method)
    from conflictlab.stats import bounded_mean_interval, proportion_interval

    n = len(chosen)
    predicted = np.array([r["predicted_letter"] for r in chosen], dtype=object)
    counts = {
        name: int((predicted == np.array([r[column] for r in chosen], dtype=object)).sum()) if n else 0
        for name, column in (("oar", "correct_letter"), ("car", "replaced_letter"), ("uncertain", "uncertain_letter"))
    }
    n_mr = counts["oar"] + counts["car"]
    counts["neither"] = n - n_mr
    row: dict = {}
    for name in ("oar", "car", "uncertain", "neither"):
        row[name], row[f"{name}_low"], row[f"{name}_high"] = proportion_interval(counts[name], n, confidence=confidence)
    row["n_mr"] = n_mr
    row["mr"], row["mr_low"], row["mr_high"] = proportion_interval(counts["oar"], n_mr, confidence=confidence)
    entropies = legacy_entropy_bits(np.array([r["probabilities"] for r in chosen], dtype=float).reshape(n, 4))
    row["entropy"], row["entropy_low"], row["entropy_high"] = bounded_mean_interval(
        entropies, confidence=confidence, bounds=(0.0, 2.0)
    )
    return row


def legacy_setting_metrics(
    predictions, *, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95, subsets=None
):
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for model in sorted(set(predictions.column("model").to_pylist())):
        own = predictions.filter(pc.equal(predictions.column("model"), model))
        scored = legacy_scored_records(own) if subsets is None else subsets[model]
        rows = own.to_pylist()
        for setting in dict.fromkeys(r["setting"] for r in rows):
            chosen = [r for r in rows if r["setting"] == setting and r["record_id"] in scored]
            total = sum(1 for r in rows if r["setting"] == setting)
            out.append(
                {
                    "model": model,
                    "setting": setting,
                    "n_records": total,
                    "n_scored": len(chosen),
                    **legacy_rates(chosen, n_resamples=n_resamples, seed=seed, confidence=confidence),
                }
            )
    return pa.Table.from_pylist(out, schema=legacy_metric_schema())


# --------------------------------------------------------------------------
# The synthetic table.

# Shares of answers that are the correct, replaced, uncertain and other option
# (before the read-out noise): right without evidence about 60% of the time and
# with the correct evidence 90%, so about half the records are scored.
ANSWERS = {"default": (0.6, 0.15, 0.1, 0.15), "correct": (0.9, 0.04, 0.03, 0.03)}
MIXED, CONFLICT = (0.5, 0.35, 0.1, 0.05), (0.25, 0.55, 0.1, 0.1)


def write_predictions(path: Path, rows: int, seed: int) -> dict:
    """One model's predictions, ``rows // 17`` records under each of the 17
    settings (records in order within each setting, as the read-out writes
    them); returns counts for the output."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA
    from conflictlab.conflictbank.prompts import SETTINGS
    from conflictlab.io import PARQUET_COMPRESSION

    settings = [setting.name for setting in SETTINGS]
    n = rows // len(settings)
    rng = np.random.default_rng(seed)
    letters = np.array(["A", "B", "C", "D"])
    roles = np.argsort(rng.random((n, 4)), axis=1)  # per record: correct, replaced, uncertain, other letter index
    index = np.arange(n)
    right = {}
    with pq.ParquetWriter(path, PREDICTION_SCHEMA, compression=PARQUET_COMPRESSION) as writer:
        for name in settings:
            shares = ANSWERS.get(name, MIXED if name.startswith("correct_") else CONFLICT)
            answer = roles[index, rng.choice(4, size=n, p=shares)]
            logits = rng.normal(size=(n, 4))
            logits[index, answer] += 2.5
            probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
            probabilities /= probabilities.sum(axis=1, keepdims=True)
            predicted = probabilities.argmax(axis=1)
            right[name] = predicted == roles[:, 0]
            columns = {
                "record_id": pa.array(index, pa.int64()),
                "setting": pa.array([name] * n, pa.string()),
                "model": pa.array(["synthetic-7b"] * n, pa.string()),
                "probabilities": pa.FixedSizeListArray.from_arrays(pa.array(probabilities.ravel()), 4),
                "predicted_letter": pa.array(letters[predicted]),
                "correct_letter": pa.array(letters[roles[:, 0]]),
                "replaced_letter": pa.array(letters[roles[:, 1]]),
                "uncertain_letter": pa.array(letters[roles[:, 2]]),
                "read_out": pa.array(["logits"] * n, pa.string()),
            }
            unknown = [field.name for field in PREDICTION_SCHEMA if field.name not in columns]
            if unknown:
                raise SystemExit(f"PREDICTION_SCHEMA has fields this benchmark does not fill: {unknown}")
            writer.write_table(
                pa.Table.from_arrays([columns[f.name] for f in PREDICTION_SCHEMA], schema=PREDICTION_SCHEMA)
            )
    return {
        "rows": n * len(settings),
        "records": n,
        "settings": len(settings),
        "scored": int((right["default"] & right["correct"]).sum()),
    }


# --------------------------------------------------------------------------
# The children.


def child(args) -> None:
    """Read ``args.path``, compute the metric table, write it to
    ``args.out``; print the phase times as JSON."""
    start = time.perf_counter()
    import pyarrow.parquet as pq

    if args.child == "legacy":
        from conflictlab.io import read_tables

        table = read_tables(args.path)
        metrics = legacy_setting_metrics(table, n_resamples=args.resamples, seed=args.seed)
        phases = {}
    else:
        import threading

        from conflictlab.conflictbank import metrics as library

        # The intervals' wall time: from their first call's start to their last call's end.
        window, lock, blocked = [], threading.Lock(), library.bounded_mean_interval

        def timed(*a, **k):
            begin = time.perf_counter()
            try:
                return blocked(*a, **k)
            finally:
                with lock:
                    window.extend([begin, time.perf_counter()])

        library.bounded_mean_interval = timed
        metrics = library.setting_metrics(
            library.scan_predictions(args.path), n_resamples=args.resamples, seed=args.seed
        )
        phases = {"intervals": max(window) - min(window) if window else 0.0}
    seconds = time.perf_counter() - start
    pq.write_table(metrics, args.out)
    print(json.dumps({"seconds": seconds, **phases}))


def endpoints(bootstrap_path: Path, normal_path: Path) -> dict:
    """How far the entropy interval's ends in ``normal_path`` lie from those
    in ``bootstrap_path``, at most, in units of the latter's half-width (0
    where neither has an interval), their root mean square, and whether every other column is equal."""
    import numpy as np
    import pyarrow.parquet as pq

    a, b = pq.read_table(bootstrap_path), pq.read_table(normal_path)
    others = [name for name in a.column_names if name not in ("entropy_low", "entropy_high")]
    half = (np.array(a.column("entropy_high")) - np.array(a.column("entropy_low"))) / 2
    with np.errstate(invalid="ignore"):
        gaps = [
            np.abs(np.array(b.column(name), dtype=float) - np.array(a.column(name), dtype=float)) / half
            for name in ("entropy_low", "entropy_high")
        ]
    gaps = np.concatenate(gaps)
    gaps = gaps[~np.isnan(gaps)]
    shift, rms = (float(gaps.max()), float(np.sqrt((gaps**2).mean()))) if gaps.size else (0.0, 0.0)
    return {"shift": shift, "rms": rms, "others": same_tables_of(a.select(others), b.select(others))}


def run_child(kind: str, path: Path, out: Path, args) -> dict:
    command = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--path",
        str(path),
        "--out",
        str(out),
        "--resamples",
        str(args.resamples),
        "--seed",
        str(args.seed),
    ]
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0), stderr.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"{kind} child failed ({process.returncode}):\n{stderr.read()[-3000:]}")
        report = json.loads(stdout.read().strip().splitlines()[-1])
    return {
        **report,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_gb": usage.ru_maxrss * 1024 / 1e9,
    }  # ru_maxrss: KiB


def helper(*options: str) -> dict | str:
    """The JSON a ``--child generate`` or ``--child compare`` process prints:
    this process imports nothing heavy, since a child's peak RSS starts from
    its parent's (fork and exec keep the high-water mark)."""
    out = subprocess.run([sys.executable, __file__, *options], capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"{options[:2]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def same_tables(a_path: Path, b_path: Path) -> str:
    import pyarrow.parquet as pq

    return same_tables_of(pq.read_table(a_path), pq.read_table(b_path))


def same_tables_of(a, b) -> str:
    """'' when the two metric tables are equal (NaN where NaN), else the first difference."""
    import numpy as np
    import pyarrow as pa

    if a.schema != b.schema or a.num_rows != b.num_rows:
        return f"schemas or row counts differ: {a.schema} / {b.schema}, {a.num_rows} / {b.num_rows} rows"
    for name in a.column_names:
        x, y = a.column(name).to_pylist(), b.column(name).to_pylist()
        if pa.types.is_floating(a.schema.field(name).type):
            x, y = np.array(x, dtype=float), np.array(y, dtype=float)
            if not np.array_equal(x, y, equal_nan=True):
                return f"{name}: max |difference| {np.nanmax(np.abs(x - y)):.3g}"
        elif x != y:
            return f"{name}: {x} != {y}"
    return ""


def cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "unknown (no /proc/cpuinfo)"
    fields = {}
    for line in lines:
        if not line.strip():
            break  # the first processor's block
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    family = f", family {fields['cpu family']} model {fields['model']}" if "cpu family" in fields else ""
    return f"{fields.get('model name', 'unknown')}{family}; {len(os.sched_getaffinity(0))} CPUs usable"


def line(label: str, run: dict) -> str:
    rest = (
        f" (intervals {run['intervals']:.1f} s, the rest {run['seconds'] - run['intervals']:.1f} s)"
        if "intervals" in run
        else ""
    )
    return f"  {label:<40}{run['wall']:>8.1f} s{run['cpu']:>8.1f} s{run['peak_gb']:>8.2f} GB{rest}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        type=int,
        default=553_117 * 17,
        help="prediction rows of the full-size run (default: 553,117 records x 17 settings)",
    )
    parser.add_argument(
        "--legacy-rows",
        type=int,
        default=1_000_000,
        help="rows of the side-by-side run that checks both give the same metrics",
    )
    parser.add_argument(
        "--legacy-limit-gb",
        type=float,
        default=8.0,
        help="run the legacy code at --rows only below this extrapolated peak RSS",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=2000,
        help="bootstrap resamples of the mean entropy (conflictbank.bootstrap_resamples)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the table and metrics here instead of a temporary folder")
    parser.add_argument(
        "--child", choices=["generate", "legacy", "new", "compare", "endpoints"], help=argparse.SUPPRESS
    )
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "generate":
        print(json.dumps(write_predictions(Path(args.path), args.size, args.seed)))
        return
    if args.child == "compare":
        print(json.dumps(same_tables(Path(args.path), Path(args.out))))
        return
    if args.child == "endpoints":
        print(json.dumps(endpoints(Path(args.path), Path(args.out))))
        return
    if args.child:
        child(args)
        return

    print(f"CPU: {cpu_model()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="conflictbank_metrics.") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        sizes = {"side by side": min(args.legacy_rows, args.rows), "full": args.rows}
        tables, written = {}, {}
        for label, rows in sizes.items():
            if rows in written:  # --rows no larger than --legacy-rows: one table
                tables[label] = written[rows]
                continue
            started = time.perf_counter()
            path = folder / f"predictions_{rows}.parquet"
            counts = helper("--child", "generate", "--path", str(path), "--size", str(rows), "--seed", str(args.seed))
            tables[label] = written[rows] = path
            print(
                f"synthetic predictions ({label}): {counts['rows']:,} rows ({counts['records']:,} records x "
                f"{counts['settings']} "
                f"settings), {counts['scored']:,} records scored ({counts['scored'] / counts['records']:.0%}); "
                f"{path.stat().st_size / 1e6:.0f} MB Parquet written in {time.perf_counter() - started:.0f} s",
                flush=True,
            )
        print(
            f"entropy interval: legacy {args.resamples}-resample bootstrap per setting, new normal from 5,000 scored "
            f"records on; machine load (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs before the runs"
        )
        print(f"  {'':<40}{'wall':>10}{'CPU':>10}{'peak RSS':>11}")
        small, large = (rows // 17 * 17 for rows in sizes.values())
        runs = {}

        def compare(rows: int, legacy_path: Path, new_path: Path) -> None:
            found = helper("--child", "endpoints", "--path", str(legacy_path), "--out", str(new_path))
            print(
                f"  same metrics at {rows:,} rows: "
                + ("yes, every column equal (NaN where NaN)" if not found["others"] else f"NO: {found['others']}")
                + f" but the entropy interval's ends, at most {100 * found['shift']:.1f}% "
                f"(root mean square {100 * found['rms']:.1f}%) of the bootstrap's half-width apart",
                flush=True,
            )

        for kind in ("legacy", "new"):
            runs[kind, small] = run_child(kind, tables["side by side"], folder / f"{kind}_{small}.parquet", args)
            print(line(f"{kind} at {small:,} rows", runs[kind, small]), flush=True)
        compare(small, folder / f"legacy_{small}.parquet", folder / f"new_{small}.parquet")
        print(
            f"  speedup {runs['legacy', small]['wall'] / runs['new', small]['wall']:.1f}x, "
            f"peak RSS {runs['legacy', small]['peak_gb'] / runs['new', small]['peak_gb']:.1f}x lower",
            flush=True,
        )
        if large > small:
            scale = large / small
            legacy_gb = runs["legacy", small]["peak_gb"] * scale
            runs["new", large] = run_child("new", tables["full"], folder / "new_full.parquet", args)
            print(line(f"new at {large:,} rows", runs["new", large]), flush=True)
            if legacy_gb <= args.legacy_limit_gb:
                runs["legacy", large] = run_child("legacy", tables["full"], folder / "legacy_full.parquet", args)
                print(line(f"legacy at {large:,} rows", runs["legacy", large]))
                compare(large, folder / "legacy_full.parquet", folder / "new_full.parquet")
                print(
                    f"  speedup {runs['legacy', large]['wall'] / runs['new', large]['wall']:.1f}x, "
                    f"peak RSS {runs['legacy', large]['peak_gb'] / runs['new', large]['peak_gb']:.1f}x lower",
                    flush=True,
                )
            else:
                print(
                    f"  legacy at {large:,} rows not run: linear extrapolation from {small:,} rows gives "
                    f"~{runs['legacy', small]['wall'] * scale:.0f} s and ~{legacy_gb:.1f} GB peak RSS "
                    f"(over --legacy-limit-gb {args.legacy_limit_gb:g}); the full-size metrics are not compared"
                )
        print(
            "  (this process's peak RSS, the floor of every child's: "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)"
        )
        full = runs["new", large]
        met = full["wall"] <= GOAL_SECONDS and full["peak_gb"] <= GOAL_GB
        print(
            f"goal at {large:,} rows (<= {GOAL_SECONDS:g} s, <= {GOAL_GB:g} GB): "
            f"{'met' if met else 'not met'} ({full['wall']:.1f} s, {full['peak_gb']:.2f} GB)"
        )


if __name__ == "__main__":
    main()

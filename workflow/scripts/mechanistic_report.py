"""Rule mechanistic_report: probes (Figure 2, Table 8), ΔER (Figure 4), projections (Figure 3)."""

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.figures import probe_curves, projection_curves, save, spectral_curves
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging
from conflictlab.mechanistic import probe_rows, projection_rows, spectral_rows
from conflictlab.tables import write_markdown_and_csv

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"mechanistic_report.{model}")
settings = snakemake.params.settings


def load(analysis: str, conflict_type: str):
    base = Path(f"results/activations/{model}/{analysis}/{conflict_type}")
    return np.load(f"{base}.npy").astype(np.float32), pq.read_table(f"{base}.index.parquet").to_pylist()


probe_table, spectral_table, projection_table, table8 = [], [], [], []
for conflict_type in snakemake.params.conflict_types:
    states, index = load("pairs", conflict_type)
    conflict = {r["sample_id"]: r for r in index if r["variant"] == "conflict"}
    consistent = {r["sample_id"]: r for r in index if r["variant"] == "consistent"}
    ids = sorted(conflict)
    rows = [conflict[i]["row"] for i in ids] + [consistent[i]["row"] for i in ids]
    labels = np.array([1] * len(ids) + [0] * len(ids))
    groups = np.array(list(range(len(ids))) * 2)
    lengths = np.array([index[r]["n_prompt_tokens"] for r in rows])
    n_evidence = np.array([index[r]["n_evidence"] for r in rows])
    probes, info = probe_rows(states[rows], labels, groups, lengths, n_evidence, n_splits=settings["cv_folds"], seed=settings["seed"])
    probe_table += [{"conflict_type": conflict_type, **r} for r in probes]
    rules = Counter(conflict[i]["rule"] for i in ids)
    table8.append(
        {
            "conflict_type": conflict_type,
            "n_pairs": info["n_pairs"],
            "n_ambiguous": sum(conflict[i]["ambiguous"] for i in ids),
            "rules": ", ".join(f"{k} ({v})" for k, v in sorted(rules.items())),
            "n_folds": info["n_folds"],
            "test_fold_sizes": " ".join(map(str, info["test_fold_sizes"])),
            "mean_tokens_conflict": float(lengths[labels == 1].mean()),
            "mean_tokens_consistent": float(lengths[labels == 0].mean()),
        }
    )
    spectral_table += [
        {"conflict_type": conflict_type, **r}
        for r in spectral_rows(
            states[[conflict[i]["row"] for i in ids]], states[[consistent[i]["row"] for i in ids]],
            k=settings["energy_k"], method=settings["svd"], n_resamples=settings["bootstrap_resamples"], seed=settings["seed"],
        )
    ]

    states, index = load("projection", conflict_type)
    by_sample = {}
    for r in index:
        by_sample.setdefault(r["sample_id"], {})[r["variant"]] = r["row"]
    samples = sorted(by_sample)
    combined = states[[by_sample[s]["combined"] for s in samples]]
    singles = [states[[by_sample[s][f"single_{i}"] for i in range(1, len(by_sample[s]))]] for s in samples]
    rows_b, skipped = projection_rows(combined, singles)
    if skipped:
        log.warning("%s: %d degenerate b_i set to 0 (norm below 1e-12)", conflict_type, skipped)
    groups_b = {}
    for r in rows_b:
        groups_b.setdefault((r["n_evidence"], r["layer"], r["position"]), []).append(r["b"])
    projection_table += [
        {"conflict_type": conflict_type, "n_evidence": k, "layer": layer, "position": pos, "n_samples": len(v),
         "mean_b": float(np.mean(v)), "std_b": float(np.std(v)), "n_degenerate": skipped}
        for (k, layer, pos), v in sorted(groups_b.items())
    ]

probes, spectral, projection = (pa.Table.from_pylist(t) for t in (probe_table, spectral_table, projection_table))
write_parquet(probes, snakemake.output.probes, probes.schema)
write_parquet(spectral, snakemake.output.spectral, spectral.schema)
write_parquet(projection, snakemake.output.projection, projection.schema)
write_markdown_and_csv(
    pa.Table.from_pylist(table8), *snakemake.output.table8,
    caption=f"Table 8 ({model}): conflict/consistent pairs per type, the rule that made each consistent prompt, "
    "ambiguous pairs, grouped cross-validation folds (test sizes in prompts) and mean prompt lengths.",
)
save(probe_curves(probes, title=f"{model}: conflict-awareness probes"), Path(snakemake.output.fig2[0]).with_suffix(""))
save(projection_curves(projection, title=f"{model}: directional projection b_i by position"), Path(snakemake.output.fig3[0]).with_suffix(""))
save(spectral_curves(spectral, title=f"{model}: spectral energy, ER(conflict) − ER(consistent)"), Path(snakemake.output.fig4[0]).with_suffix(""))
log.info("probes %d rows, spectral %d rows, projection %d rows", probes.num_rows, spectral.num_rows, projection.num_rows)

"""Rule mechanistic_report: probes (Figure 2, Table 8; per subset, Figures 20-21), ΔER (Figure 4), projections (Figure
3)."""

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.figures import (
    SUBSET_FIGURES,
    probe_curves,
    projection_curves,
    spectral_curves,
    subset_probe_curves,
)
from conflictlab.contextconflict.mechanistic import pair_analysis, projection_analysis, subset_probe_analysis
from conflictlab.contextconflict.pairs import appendix_d1
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"mechanistic_report.{model}")
settings, inputs, out = snakemake.params.settings, snakemake.input, snakemake.output


def read(states_path, index_path):
    return np.load(states_path).astype(np.float32), read_tables(index_path).to_pylist()


probe_table, spectral_table, projection_table, table8, subset_table, skipped = [], [], [], [], [], {}
for i, conflict_type in enumerate(snakemake.params.conflict_types):
    states, index = read(inputs.pairs_states[i], inputs.pairs_index[i])
    probes, row8, spectral = pair_analysis(states, index, **settings)
    probe_table += [{"conflict_type": conflict_type, **r} for r in probes]
    table8.append({"conflict_type": conflict_type, **row8, "appendix_d1": appendix_d1(conflict_type, index)})
    spectral_table += [{"conflict_type": conflict_type, **r} for r in spectral]
    if conflict_type in SUBSET_FIGURES:  # Figures 20-21: its explicit and its implicit subset apart
        samples = read_tables(inputs.samples[i]).select(["sample_id", "subset", "implicit"]).to_pylist()
        rows, left_out = subset_probe_analysis(
            states,
            index,
            {r["sample_id"]: (r["subset"], r["implicit"]) for r in samples},
            SUBSET_FIGURES[conflict_type][1:],
            cv_folds=settings["cv_folds"],
            seed=settings["seed"],
        )
        subset_table += [{"conflict_type": conflict_type, **r} for r in rows]
        if left_out:
            skipped[conflict_type] = left_out
            log.info("%s: no subset probe (< 2 pairs) for %s", conflict_type, left_out)
    projection, degenerate = projection_analysis(*read(inputs.projection_states[i], inputs.projection_index[i]))
    if degenerate:
        log.warning("%s: %d degenerate b_i set to 0 (norm below 1e-12)", conflict_type, degenerate)
    projection_table += [{"conflict_type": conflict_type, **r} for r in projection]

no_interval = Counter(r["ci_reason"].split(":")[0] for r in spectral_table if r["ci_reason"])
if no_interval:
    log.info("ΔER rows without an interval, by reason: %s", dict(no_interval))
probes, spectral, projection = (pa.Table.from_pylist(t) for t in (probe_table, spectral_table, projection_table))
subsets = pa.Table.from_pylist(subset_table)
for table, path in (
    (probes, out.probes),
    (spectral, out.spectral),
    (projection, out.projection),
    (subsets, out.subset_probes),
):
    write_parquet(table, path, table.schema)
write_markdown_and_csv(
    pa.Table.from_pylist(table8),
    out.table8_md,
    out.table8_csv,
    caption=f"Table 8 ({model}): conflict/consistent pairs per type, the rule that made each consistent prompt and how "
    "it "
    "stands against the paper's Appendix D.1, ambiguous pairs, grouped cross-validation folds (test sizes in prompts) "
    "and mean prompt lengths.",
)
save(probe_curves(probes, title=f"{model}: conflict-awareness probes"), Path(out.fig2_png).with_suffix(""))
save(
    projection_curves(projection, title=f"{model}: directional projection b_i by position"),
    Path(out.fig3_png).with_suffix(""),
)
save(
    spectral_curves(spectral, title=f"{model}: spectral energy, ER(conflict) − ER(consistent)"),
    Path(out.fig4_png).with_suffix(""),
)
save(
    subset_probe_curves(
        subsets, skipped=skipped, title=f"{model}: probes per subset, explicit (solid) vs implicit (dashed)"
    ),
    Path(out.fig20_21_png).with_suffix(""),
)
log.info(
    "probes %d rows, spectral %d rows, projection %d rows, subset probes %d rows",
    probes.num_rows,
    spectral.num_rows,
    projection.num_rows,
    subsets.num_rows,
)

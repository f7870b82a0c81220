"""Rule mechanistic_report: probes (Figure 2, Table 8), ΔER (Figure 4), projections (Figure 3)."""

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict.figures import probe_curves, projection_curves, spectral_curves
from conflictlab.contextconflict.mechanistic import pair_analysis, projection_analysis
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import write_markdown_and_csv

model = snakemake.wildcards.model
log = configure_logging(snakemake.log[0], f"mechanistic_report.{model}")
settings, inputs, out = snakemake.params.settings, snakemake.input, snakemake.output


def read(states_path, index_path):
    return np.load(states_path).astype(np.float32), read_tables(index_path).to_pylist()


probe_table, spectral_table, projection_table, table8 = [], [], [], []
for i, conflict_type in enumerate(snakemake.params.conflict_types):
    probes, row8, spectral = pair_analysis(*read(inputs.pairs_states[i], inputs.pairs_index[i]), **settings)
    probe_table += [{"conflict_type": conflict_type, **r} for r in probes]
    table8.append({"conflict_type": conflict_type, **row8})
    spectral_table += [{"conflict_type": conflict_type, **r} for r in spectral]
    projection, skipped = projection_analysis(*read(inputs.projection_states[i], inputs.projection_index[i]))
    if skipped:
        log.warning("%s: %d degenerate b_i set to 0 (norm below 1e-12)", conflict_type, skipped)
    projection_table += [{"conflict_type": conflict_type, **r} for r in projection]

no_interval = Counter(r["ci_reason"].split(":")[0] for r in spectral_table if r["ci_reason"])
if no_interval:
    log.info("ΔER rows without an interval, by reason: %s", dict(no_interval))
probes, spectral, projection = (pa.Table.from_pylist(t) for t in (probe_table, spectral_table, projection_table))
write_parquet(probes, out.probes, probes.schema)
write_parquet(spectral, out.spectral, spectral.schema)
write_parquet(projection, out.projection, projection.schema)
write_markdown_and_csv(
    pa.Table.from_pylist(table8), out.table8_md, out.table8_csv,
    caption=f"Table 8 ({model}): conflict/consistent pairs per type, the rule that made each consistent prompt, "
    "ambiguous pairs, grouped cross-validation folds (test sizes in prompts) and mean prompt lengths.",
)
save(probe_curves(probes, title=f"{model}: conflict-awareness probes"), Path(out.fig2_png).with_suffix(""))
save(projection_curves(projection, title=f"{model}: directional projection b_i by position"), Path(out.fig3_png).with_suffix(""))
save(spectral_curves(spectral, title=f"{model}: spectral energy, ER(conflict) − ER(consistent)"), Path(out.fig4_png).with_suffix(""))
log.info("probes %d rows, spectral %d rows, projection %d rows", probes.num_rows, spectral.num_rows, projection.num_rows)

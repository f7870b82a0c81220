"""Rule steering_directions: calibration activations of one model -> Eq. 6 and CAS directions per type."""

import numpy as np
import pyarrow.parquet as pq

from conflictlab.contextconflict.steering import direction_prompts, directions_from_states, save_directions
from conflictlab.lm.hidden import ExtractionStats, hidden_states
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], f"steering_directions.{snakemake.wildcards.model}")
lm = load(snakemake.input.model, dtype=snakemake.params.dtype)
for calibration_path, out in zip(snakemake.input.calibration, snakemake.output):
    samples = pq.read_table(calibration_path).to_pylist()
    if not samples:
        raise ValueError(f"{calibration_path}: no calibration samples (every subset has fewer than 2 samples)")
    prompts = direction_prompts(lm.tokenizer, samples, snakemake.params.templates)
    stats = ExtractionStats()
    states = hidden_states(lm, [p["ids"] for p in prompts], batch_size=snakemake.params.batch_size, stats=stats)
    directions = directions_from_states(prompts, states)
    save_directions(out, directions, [s["sample_id"] for s in samples])
    log.info(
        "%s: %d calibration samples, %d prompts in %d forwards; ||mu_bar - c_bar|| per layer %s; ||c_bar - q_bar|| %s",
        calibration_path, len(samples), stats.prompts, stats.forwards,
        np.round(directions["mean_difference_norm"], 2).tolist(), np.round(directions["cas_norm"], 2).tolist(),
    )

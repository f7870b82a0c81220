"""Rule steering_directions: calibration activations of one model -> Eq. 6 and CAS directions per type."""

import numpy as np

from conflictlab.contextconflict.steering import calibration_directions, save_directions
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], f"steering_directions.{snakemake.wildcards.model}")
inputs = snakemake.input
for calibration_path, states_path, index_path, out in zip(
    inputs.calibration, inputs.states, inputs.index, snakemake.output
):
    calibration_ids = read_tables(calibration_path, columns=["sample_id"]).column("sample_id").to_pylist()
    if not calibration_ids:
        raise ValueError(f"{calibration_path}: no calibration samples (every subset has fewer than 2 samples)")
    directions = calibration_directions(
        read_tables(index_path), np.load(states_path), calibration_ids, source=f"{index_path}"
    )
    save_directions(out, directions, calibration_ids)
    log.info(
        "%s: %d calibration samples; ||mu_bar - c_bar|| per layer %s; ||c_bar - q_bar|| %s",
        calibration_path,
        len(calibration_ids),
        np.round(directions["mean_difference_norm"], 2).tolist(),
        np.round(directions["cas_norm"], 2).tolist(),
    )

"""Rule activations: one model's last-token states for the pair, projection
and steering-direction prompts of every type, each distinct prompt forwarded once."""

import numpy as np

from conflictlab.contextconflict.pairs import (
    INDEX_SCHEMA,
    STORED_DTYPE,
    activation_index,
    pair_prompts,
    projection_prompts,
)
from conflictlab.contextconflict.steering import direction_prompts
from conflictlab.io import atomic_path, read_tables, write_parquet
from conflictlab.lm.hidden import ExtractionStats, hidden_states_of_sets
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], f"activations.{snakemake.wildcards.model}")
settings, inputs, outputs, templates = (
    snakemake.params.settings,
    snakemake.input,
    snakemake.output,
    snakemake.params.templates,
)
lm = load(inputs.model, dtype=settings["dtype"])
samples = [read_tables(path).to_pylist() for path in inputs.samples]
prompts = {
    "pairs": [pair_prompts(lm.tokenizer, s, templates, drop_last=settings["drop_last"]) for s in samples],
    "projection": [
        projection_prompts(lm.tokenizer, s, templates, matched=settings["matched_templates"]) for s in samples
    ],
    "directions": [direction_prompts(lm.tokenizer, s, templates) for s in samples],
}
sets = [(analysis, i) for analysis in prompts for i in range(len(samples))]
stats = ExtractionStats()
states = hidden_states_of_sets(
    lm, [[p["ids"] for p in prompts[a][i]] for a, i in sets], batch_size=settings["batch_size"], stats=stats
)
for (analysis, i), array in zip(sets, states):
    with atomic_path(outputs[f"{analysis}_states"][i]) as tmp:
        with open(tmp, "wb") as handle:
            np.save(handle, array.astype(STORED_DTYPE[analysis]))
    write_parquet(activation_index(prompts[analysis][i]), outputs[f"{analysis}_index"][i], INDEX_SCHEMA)
    log.info("%s %s: states %s", analysis, inputs.samples[i], array.shape)
log.info(
    "%d prompts, %d distinct, in %d forward passes (all %d layers from each)",
    sum(len(prompts[a][i]) for a, i in sets),
    stats.prompts,
    stats.forwards,
    lm.n_layers,
)

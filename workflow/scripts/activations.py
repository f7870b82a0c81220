"""Rule activations: one model's last-token states for the pair or projection prompts of every type."""

import numpy as np
import pyarrow.parquet as pq

from conflictlab.contextconflict.pairs import INDEX_SCHEMA, activation_index, pair_prompts, projection_prompts
from conflictlab.io import atomic_path, write_parquet
from conflictlab.lm.hidden import ExtractionStats, hidden_states
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging

analysis = snakemake.wildcards.analysis
log = configure_logging(snakemake.log[0], f"activations.{snakemake.wildcards.model}.{analysis}")
settings, inputs, outputs = snakemake.params.settings, snakemake.input, snakemake.output
lm = load(inputs.model, dtype=settings["dtype"])
for samples_path, states_path, index_path in zip(inputs.samples, outputs.states, outputs.index):
    samples = pq.read_table(samples_path).to_pylist()
    if analysis == "pairs":
        prompts = pair_prompts(lm.tokenizer, samples, snakemake.params.templates, drop_last=settings["drop_last"])
    else:
        prompts = projection_prompts(lm.tokenizer, samples, snakemake.params.templates, matched=settings["matched_templates"])
    stats = ExtractionStats()
    states = hidden_states(lm, [p["ids"] for p in prompts], batch_size=settings["batch_size"], stats=stats)
    with atomic_path(states_path) as tmp:
        with open(tmp, "wb") as handle:
            np.save(handle, states.astype(np.float16))
    write_parquet(activation_index(prompts), index_path, INDEX_SCHEMA)
    log.info(
        "%s: %d prompts in %d forward passes (each prompt in exactly one pass, all %d layers from it); states %s",
        samples_path, stats.prompts, stats.forwards, states.shape[1], states.shape,
    )

"""Rule activations: one model's last-token states for the pair or projection prompts of one type."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.activations import INDEX_SCHEMA, ExtractionStats, last_token_states
from conflictlab.io import atomic_path, write_parquet
from conflictlab.logs import configure_logging
from conflictlab.mechanistic import pair_prompts, projection_prompts
from conflictlab.models import load_model

analysis = snakemake.wildcards.analysis
log = configure_logging(snakemake.log[0], f"activations.{snakemake.wildcards.model}.{analysis}.{snakemake.wildcards.conflict_type}")
settings = snakemake.params.settings
model, tokenizer = load_model(snakemake.input.model, dtype=settings["dtype"])
samples = pq.read_table(snakemake.input.samples).to_pylist()
if analysis == "pairs":
    prompts = pair_prompts(tokenizer, samples, snakemake.params.templates, drop_last=settings["drop_last"])
else:
    prompts = projection_prompts(tokenizer, samples, snakemake.params.templates, matched=settings["matched_templates"])

stats = ExtractionStats()
pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
states = last_token_states(model, [p["ids"] for p in prompts], batch_size=settings["batch_size"], pad_id=pad, stats=stats)
with atomic_path(snakemake.output.states) as tmp:
    with open(tmp, "wb") as handle:
        np.save(handle, states.astype(np.float16))
index = pa.table(
    {
        "sample_id": [p["sample_id"] for p in prompts],
        "variant": [p["variant"] for p in prompts],
        "row": list(range(len(prompts))),
        "n_prompt_tokens": [len(p["ids"]) for p in prompts],
        "n_evidence": [p["n_evidence"] for p in prompts],
        "rule": [p["rule"] for p in prompts],
        "ambiguous": [p["ambiguous"] for p in prompts],
    }
)
write_parquet(index, snakemake.output.index, INDEX_SCHEMA)
log.info(
    "%d prompts in %d forward passes (each prompt in exactly one pass, all %d layers from it); states %s",
    stats.prompts, stats.forwards, states.shape[1], states.shape,
)

"""Rule shapley_values (and its _shuffled and _steered uses): coalition values
of one generator's summarization responses under one scorer, loaded once."""

import pyarrow as pa

from conflictlab.contextconflict.scoring import SKIP_SCHEMA, VALUE_SCHEMA, score_response_sets
from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.subsets import SubsetScorer
from conflictlab.logs import configure_logging

scorer_name = snakemake.wildcards.scorer
log = configure_logging(snakemake.log[0], f"shapley_values.{scorer_name}.{snakemake.wildcards.model}")
settings = snakemake.params.settings
inputs, outputs = snakemake.input, snakemake.output

lm = load(inputs.scorer, dtype=settings["dtype"])
scorer = SubsetScorer(lm.model, token_budget=settings["token_budget"])
# Response files that answer the same samples file (the steering variants of
# one type) are scored together: each evidence subset is forwarded once for all.
by_samples: dict[str, list[int]] = {}
for k, samples in enumerate(inputs.samples):
    by_samples.setdefault(samples, []).append(k)
for samples, files in by_samples.items():
    results = score_response_sets(
        scorer,
        lm.tokenizer,
        read_tables(samples),
        [read_tables(inputs.responses[k]) for k in files],
        scorer_name=scorer_name,
        renumber=settings["renumber"],
        exact_max_n=settings["exact_max_n"],
        n_permutations=settings["n_permutations"],
        seed=settings["seed"],
    )
    for k, (values, skipped) in zip(files, results):
        write_parquet(values, outputs.values[k], VALUE_SCHEMA)
        write_parquet(pa.Table.from_pylist(skipped, schema=SKIP_SCHEMA), outputs.skipped[k], SKIP_SCHEMA)
        log.info("%s: %d coalition values, %d responses skipped", inputs.responses[k], values.num_rows, len(skipped))
        for row in skipped:
            log.warning("skipped %s: %s", row["sample_id"], row["reason"])
stats = scorer.stats
log.info(
    "tokens forwarded %d (+%d padding) vs naive %d (%.2fx fewer), %d forwards",
    stats.tokens_forwarded,
    stats.tokens_padded,
    stats.naive_tokens,
    stats.naive_tokens / max(stats.tokens_forwarded, 1),
    stats.forwards,
)

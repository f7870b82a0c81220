"""Rule shapley_values: coalition values of one generator's summarization responses under one scorer."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.contextconflict.scoring import SKIP_SCHEMA, VALUE_SCHEMA, score_games
from conflictlab.io import write_parquet
from conflictlab.lm.loading import load
from conflictlab.lm.subsets import SubsetScorer
from conflictlab.logs import configure_logging

scorer_name = snakemake.wildcards.scorer
log = configure_logging(snakemake.log[0], f"shapley_values.{scorer_name}.{snakemake.wildcards.model}")
settings = snakemake.params.settings
inputs, outputs = snakemake.input, snakemake.output

lm = load(inputs.scorer, dtype=settings["dtype"])
scorer = SubsetScorer(lm.model, token_budget=settings["token_budget"])
for samples, responses, values_path, skipped_path in zip(inputs.samples, inputs.responses, outputs.values, outputs.skipped):
    values, skipped = score_games(
        scorer,
        lm.tokenizer,
        pq.read_table(samples),
        pq.read_table(responses),
        scorer_name=scorer_name,
        renumber=settings["renumber"],
        exact_max_n=settings["exact_max_n"],
        n_permutations=settings["n_permutations"],
        seed=settings["seed"],
    )
    write_parquet(values, values_path, VALUE_SCHEMA)
    write_parquet(pa.Table.from_pylist(skipped, schema=SKIP_SCHEMA), skipped_path, SKIP_SCHEMA)
    log.info("%s: %d coalition values, %d responses skipped", responses, values.num_rows, len(skipped))
    for row in skipped:
        log.warning("skipped %s: %s", row["sample_id"], row["reason"])
stats = scorer.stats
log.info(
    "tokens forwarded %d (+%d padding) vs naive %d (%.2fx fewer), %d forwards",
    stats.tokens_forwarded, stats.tokens_padded, stats.naive_tokens,
    stats.naive_tokens / max(stats.tokens_forwarded, 1), stats.forwards,
)

"""Rule shapley_values: coalition values of one generator's responses under one scorer."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging
from conflictlab.models import load_model
from conflictlab.scoring import VALUE_SCHEMA, SubsetScorer, score_games

scorer_name = snakemake.wildcards.scorer
log = configure_logging(snakemake.log[0], f"shapley_values.{scorer_name}.{snakemake.wildcards.model}")
settings = snakemake.params.settings

model, tokenizer = load_model(snakemake.input.scorer, dtype=settings["dtype"])
scorer = SubsetScorer(model, token_budget=settings["token_budget"])
values, skipped = score_games(
    scorer,
    tokenizer,
    pq.read_table(snakemake.input.samples),
    pq.read_table(snakemake.input.responses),
    scorer_name=scorer_name,
    renumber=settings["renumber"],
    exact_max_n=settings["exact_max_n"],
    n_permutations=settings["n_permutations"],
    seed=settings["seed"],
)
write_parquet(values, snakemake.output.values, VALUE_SCHEMA)
skip_schema = pa.schema([("sample_id", pa.string()), ("reason", pa.string())])
write_parquet(pa.Table.from_pylist(skipped, schema=skip_schema), snakemake.output.skipped, skip_schema)
stats = scorer.stats
log.info(
    "%d coalition values; %d responses skipped; tokens forwarded %d (+%d padding) vs naive %d (%.2fx fewer), %d forwards",
    values.num_rows, len(skipped), stats.tokens_forwarded, stats.tokens_padded, stats.naive_tokens,
    stats.naive_tokens / max(stats.tokens_forwarded, 1), stats.forwards,
)
for row in skipped:
    log.warning("skipped %s: %s", row["sample_id"], row["reason"])

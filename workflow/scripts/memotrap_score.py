"""Rule memotrap_score: one model's class log-likelihoods on every MemoTrap prompt, greedy and under each method."""

from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.loading import load
from conflictlab.logs import configure_logging
from conflictlab.memotrap.scoring import SCORE_SCHEMA, score

model, params = snakemake.wildcards.model, snakemake.params
log = configure_logging(snakemake.log[0], f"memotrap_score.{model}")
prompts = read_tables(snakemake.input.prompts)
lm = load(snakemake.input.model, dtype=params.settings["dtype"])
methods = params.methods  # greedy first (rules/memotrap.smk: scoring_methods)
scores, alone = score(lm, prompts, methods, model=model, batch_size=params.settings["batch_size"])
write_parquet(scores, snakemake.output.scores, SCORE_SCHEMA)
log.info("%d prompts x %d methods (%s), dtype %s", prompts.num_rows, len(methods), ", ".join(methods), lm.dtype)
if alone:
    log.info("%d classes tokenised apart from their prompt (the joint tokenisation merged across the boundary)", alone)

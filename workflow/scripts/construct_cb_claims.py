"""Rule construct_cb_claims: the chunks gathered -> one fact per subject-relation pair with its claims,
the dump's rejected lines, and the counts so far."""

import polars as pl

from conflictlab.construction.conflictbank import write_claims
from conflictlab.construction.wikidata import COUNT_SCHEMA, REJECTION_SCHEMA
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

params, inputs, output = snakemake.params, snakemake.input, snakemake.output
log = configure_logging(snakemake.log[0], "construct_cb_claims")
counts = (
    pl.concat([pl.read_parquet(p) for p in inputs.counts])
    .group_by("step", maintain_order=True)
    .agg(pl.col("count").sum())
)
gathered = write_claims(
    pl.scan_parquet(list(inputs.entities)),
    pl.scan_parquet(list(inputs.facts)),
    params.relations,
    output.claims,
    seed=params.seed,
    part_facts=params.part_facts,
)
n_facts = gathered[-2][1]
steps = list(counts.iter_rows()) + gathered
write_parquet(pl.DataFrame(steps, schema=["step", "count"], orient="row").to_arrow(), output.counts, COUNT_SCHEMA)
rejected = pl.concat([pl.read_parquet(p) for p in inputs.rejected]).sort(["file", "line"])
write_parquet(rejected.to_arrow(), output.rejected, REJECTION_SCHEMA)
log.info("%d facts, %d claims; %d dump lines rejected (%s)", n_facts, 4 * n_facts, rejected.height, output.rejected)
for step, count in steps:
    log.info("%s: %d", step, count)

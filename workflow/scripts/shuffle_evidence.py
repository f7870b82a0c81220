"""Rule shuffle_evidence: one type's samples with their evidence in a seeded random order."""

from conflictlab.contextconflict.dataset import SAMPLE_SCHEMA, shuffle_evidence
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], f"shuffle_evidence.{snakemake.wildcards.conflict_type}")
shuffled = shuffle_evidence(read_tables(snakemake.input.samples), seed=snakemake.params.seed)
write_parquet(shuffled, snakemake.output.samples, SAMPLE_SCHEMA)
log.info("%d samples shuffled (permutations in extras.shuffle_permutation)", shuffled.num_rows)

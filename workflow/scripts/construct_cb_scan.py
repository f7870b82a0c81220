"""Rule construct_cb_scan: one chunk of the Wikidata dump -> its entities, facts, rejected lines and counts."""

from conflictlab.construction.wikidata import (
    COUNT_SCHEMA,
    ENTITY_SCHEMA,
    FACT_SCHEMA,
    REJECTION_SCHEMA,
    scan_chunk,
)
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

params, output = snakemake.params, snakemake.output
log = configure_logging(snakemake.log[0], f"construct_cb_scan.{params.chunk}")
scan = scan_chunk(snakemake.input.dump, params.relations, chunk=params.chunk, n_chunks=params.n_chunks)
for table, path, schema in zip(
    scan.tables(),
    (output.entities, output.facts, output.rejected, output.counts),
    (ENTITY_SCHEMA, FACT_SCHEMA, REJECTION_SCHEMA, COUNT_SCHEMA),
):
    write_parquet(table, path, schema)
log.info("chunk %d of %d: %s", params.chunk, params.n_chunks, scan.counts)
for row in scan.rejections:
    log.warning("rejected %s line %d: %s: %s", row["file"], row["line"], row["field"], row["reason"])

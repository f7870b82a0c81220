"""Rule build_subset: one conflict type's samples -> its unified Parquet table (and the rejections)."""

from conflictlab.contextconflict.dataset import REJECTION_SCHEMA, SAMPLE_SCHEMA, load_hub, load_released
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

conflict_type = snakemake.wildcards.conflict_type
data = snakemake.params.data
log = configure_logging(snakemake.log[0], f"build_subset.{conflict_type}")

options = dict(max_per_subset=data.get("max_per_subset"), seed=data["seed"], on_error=data["on_error"])
if data["source"] == "released":
    log.info("reading %s from released folder %s", conflict_type, data["root"])
    build = load_released(data["root"], conflict_type, **options)
else:
    log.info("reading %s from hub dataset %s", conflict_type, data["hf_dataset"])
    build = load_hub(data["hf_dataset"], conflict_type, revision=data.get("hf_revision"), **options)

samples, rejected = build.tables()
write_parquet(samples, snakemake.output.samples, SAMPLE_SCHEMA)
write_parquet(rejected, snakemake.output.rejected, REJECTION_SCHEMA)
log.info(
    "read %d files: wrote %d samples to %s, rejected %d (%s)",
    build.files_seen, samples.num_rows, snakemake.output.samples, rejected.num_rows, snakemake.output.rejected,
)
for row in build.rejections:
    log.warning("rejected %s: %s", row["source_path"], row["reason"])

"""Rule build_subset: one conflict type's samples -> its unified Parquet table (and the rejections)."""

from conflictlab.contextconflict.dataset import REJECTION_SCHEMA, SAMPLE_SCHEMA, load_hub, load_released
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

conflict_type = snakemake.wildcards.conflict_type
data = snakemake.params.data
log = configure_logging(snakemake.log[0], f"build_subset.{conflict_type}")

# on_error is read from the config, not params: see data_params in rules/common.smk.
options = dict(
    max_per_subset=data.get("max_per_subset"), seed=data["seed"], on_error=snakemake.config["data"]["on_error"]
)
if data["source"] == "released":
    log.info("reading %s from released folder %s", conflict_type, data["root"])
    build = load_released(data["root"], conflict_type, subsets=data.get("subsets"), **options)
    for path in build.ignored:
        log.info("ignored %s", path)
else:
    log.info("reading %s from hub dataset %s", conflict_type, data["hf_dataset"])
    build = load_hub(data["hf_dataset"], conflict_type, revision=data.get("hf_revision"), **options)

samples, rejected = build.tables()
for row in build.rejections:
    log.warning("rejected %s: %s", row["source_path"], row["reason"])
if not samples.num_rows:
    raise ValueError(f"{conflict_type}: no sample was accepted ({rejected.num_rows} rejected, reasons above)")
write_parquet(samples, snakemake.output.samples, SAMPLE_SCHEMA)
write_parquet(rejected, snakemake.output.rejected, REJECTION_SCHEMA)
log.info(
    "read %d files: wrote %d samples to %s, rejected %d (%s)",
    build.files_seen,
    samples.num_rows,
    snakemake.output.samples,
    rejected.num_rows,
    snakemake.output.rejected,
)

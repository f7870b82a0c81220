"""Rule steering_split: one type's samples -> calibration and test splits."""

from conflictlab.contextconflict.steering import steering_split
from conflictlab.io import read_tables, write_parquet
from conflictlab.logs import configure_logging, value_counts

log = configure_logging(snakemake.log[0], f"steering_split.{snakemake.wildcards.conflict_type}")
samples = read_tables(snakemake.input.samples)
calibration, test = steering_split(
    samples, calibration_fraction=snakemake.params.calibration_fraction, seed=snakemake.params.seed
)
write_parquet(calibration, snakemake.output.calibration, samples.schema)
write_parquet(test, snakemake.output.test, samples.schema)
log.info(
    "%d samples: %d calibration %s, %d test %s",
    samples.num_rows,
    calibration.num_rows,
    value_counts(calibration.column("subset")),
    test.num_rows,
    value_counts(test.column("subset")),
)

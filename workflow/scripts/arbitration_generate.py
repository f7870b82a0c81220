"""Rule arbitration_generate: every instance of the main run and the sensitivity sweeps."""

import pyarrow as pa

from conflictlab.arbitration.prompts import (
    INSTANCE_SCHEMA,
    config_from_mapping,
    generate_instances,
    sensitivity_variants,
)
from conflictlab.io import write_parquet
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "arbitration_generate")
settings = snakemake.params.settings
main = generate_instances(
    config_from_mapping(settings, n_per_setting=settings["n_per_setting"], seeds=settings["seeds"])
)
sweep = settings["sensitivity"]
base = config_from_mapping(settings, n_per_setting=sweep["n_per_setting"], seeds=sweep["seeds"])
sensitivity = pa.concat_tables(generate_instances(cfg, tag=tag) for tag, cfg in sensitivity_variants(base, sweep))
write_parquet(main, snakemake.output.main, INSTANCE_SCHEMA)
write_parquet(sensitivity, snakemake.output.sensitivity, INSTANCE_SCHEMA)
log.info("%d main prompts, %d sensitivity prompts", main.num_rows, sensitivity.num_rows)

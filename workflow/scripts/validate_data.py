"""Rule validate_data: every selected benchmark's input read whole (conflictlab.validate_data); exits 1 where a
run with on_error: fail would stop."""

import sys

from conflictlab import validate_data
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "validate_data")
checks = validate_data.check(snakemake.params.config)
reports = snakemake.params.summary, snakemake.params.rejections
validate_data.write_reports(checks, *reports)
log.info("data check (reports: %s, %s):\n%s", *reports, validate_data.report_text(checks))
if validate_data.stops_run(checks):
    sys.exit(1)

"""Rule conflicts_download: the CONFLICTS release file, fetched and checked."""

from conflictlab.conflicts.dataset import RELEASE_SHA256, download_release
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "conflicts_download")
params = snakemake.params
digest = download_release(params.url, snakemake.output.queries, sha256=RELEASE_SHA256 if params.check_release else None)
log.info("fetched %s to %s (SHA-256 %s)", params.url, snakemake.output.queries, digest)

"""Rule judge_cache: the judge reply cache folder (conflictlab.judges.cache),
created once; its files, written by the judge jobs, are kept across reruns."""

from pathlib import Path

from conflictlab.judges.cache import cache_files
from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "judge_cache")
folder = Path(snakemake.output.folder)
folder.mkdir(parents=True, exist_ok=True)
log.info("%s: %d cache files kept", folder, len(cache_files(folder)))

"""Rule request_cache: the endpoint request cache folder (conflictlab.lm.endpoint),
created once; its files, appended to by every job that talks to a hosted model,
are kept across reruns."""

from pathlib import Path

from conflictlab.logs import configure_logging

log = configure_logging(snakemake.log[0], "request_cache")
folder = Path(snakemake.output.folder)
folder.mkdir(parents=True, exist_ok=True)
log.info("%s: %d request cache files kept", folder, len(list(folder.glob("*.jsonl"))))

"""Rule prepare_model: a configured model -> resources/models/{model}/."""

from conflictlab.logs import configure_logging
from conflictlab.lm.registry import prepare_model

name = snakemake.wildcards.model
spec = snakemake.params.spec
log = configure_logging(snakemake.log[0], f"prepare_model.{name}")

log.info("preparing %s from %s as %s", name, spec["source"], spec.get("dtype", "bfloat16"))
manifest = prepare_model(name, spec["source"], snakemake.output.folder, dtype=spec.get("dtype", "bfloat16"))
log.info("wrote %s: %s", snakemake.output.folder, manifest)

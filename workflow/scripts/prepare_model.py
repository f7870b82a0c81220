"""Rule prepare_model: a configured model -> resources/models/{model}/."""

from conflictlab.lm.registry import check_encoder_decoder, prepare_model, prepare_random_model
from conflictlab.logs import configure_logging

name = snakemake.wildcards.model
spec = snakemake.params.spec
log = configure_logging(snakemake.log[0], f"prepare_model.{name}")

log.info(
    "preparing %s from %s (revision %s) as %s",
    name,
    spec["source"],
    spec.get("revision") or "default",
    spec.get("dtype", "bfloat16"),
)
if spec["source"].startswith("hf:") and not spec.get("revision"):
    log.warning(
        "%s is not pinned to a revision: the hub's default branch may change (set models.%s.revision)", name, name
    )
if spec["source"].startswith("random:"):
    manifest = prepare_random_model(name, snakemake.input.like, snakemake.output.folder, **spec.get("shape", {}))
else:
    manifest = prepare_model(
        name,
        spec["source"],
        snakemake.output.folder,
        dtype=spec.get("dtype", "bfloat16"),
        revision=spec.get("revision"),
    )
check_encoder_decoder(name, snakemake.output.folder, spec.get("encoder_decoder", False))
log.info("wrote %s, resolved to %s: %s", snakemake.output.folder, manifest.get("source_revision"), manifest)

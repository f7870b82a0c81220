"""Rule conflictbank_train: continued pre-training of one model on default and
conflicting evidence text at one ratio (ConflictBank's embedded knowledge)."""

import pyarrow.parquet as pq

from conflictlab.conflictbank.training import TrainingSettings, continue_pretraining, mixture_corpus, parse_ratio
from conflictlab.logs import configure_logging

model, ratio_name = snakemake.wildcards.model, snakemake.wildcards.ratio
log = configure_logging(snakemake.log[0], f"conflictbank_train.{model}.{ratio_name}")
options = snakemake.params.options
ratio = parse_ratio(ratio_name.replace("-", ":"))
texts = mixture_corpus(pq.read_table(snakemake.input.records), ratio, seed=options["seed"])
settings = TrainingSettings(**{key: options[key] for key in TrainingSettings.__dataclass_fields__})
log.info("training %s on %d texts (default:conflicting = %d:%d), %s", model, len(texts), *ratio, settings)
manifest = continue_pretraining(
    snakemake.input.model,
    texts,
    snakemake.output.folder,
    checkpoint_dir=snakemake.params.checkpoints,
    settings=settings,
    name=f"{model}@cpt-{ratio_name}",
    provenance={"ratio": f"{ratio[0]}:{ratio[1]}"},
)
losses = manifest["training"]["loss"]
log.info("saved %s; loss %.3f at step 1, %.3f at step %d", snakemake.output.folder, losses[0], losses[-1], len(losses))

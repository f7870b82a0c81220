"""Rule conflictbank_train: continued pre-training of one model on default and
conflicting evidence text at one ratio (ConflictBank's embedded knowledge).
With distributed.processes > 1 the library starts the training processes
(torch.distributed.run) from here and forwards their output to this log."""

from conflictlab.conflictbank.ratio import MixtureRatio
from conflictlab.conflictbank.training import TrainingSettings, continue_pretraining, mixture_corpus
from conflictlab.io import read_tables
from conflictlab.logs import configure_logging

model, ratio_name = snakemake.wildcards.model, snakemake.wildcards.ratio
log = configure_logging(snakemake.log[0], f"conflictbank_train.{model}.{ratio_name}")
options = snakemake.params.options
ratio = MixtureRatio.parse(ratio_name)
records = read_tables(snakemake.input.records)
texts = mixture_corpus(records, ratio.parts(), seed=options["seed"])
settings = TrainingSettings(**{key: options[key] for key in TrainingSettings.__dataclass_fields__})
processes, strategy = snakemake.resources.training_processes, snakemake.resources.training_strategy
log.info(
    "training %s on %d texts (default:conflicting = %s), %s, %d %s process(es)",
    model,
    len(texts),
    ratio.label(),
    settings,
    processes,
    strategy,
)
manifest = continue_pretraining(
    snakemake.input.model,
    texts,
    snakemake.output.folder,
    checkpoint_dir=snakemake.log.checkpoints,
    settings=settings,
    name=f"{model}@cpt-{ratio.format()}",
    provenance={
        "ratio": ratio.label(),
        "default_texts": records.num_rows,
        "conflicting_texts": len(texts) - records.num_rows,
    },
    processes=processes,
    strategy=strategy,
)
training = manifest["training"]
losses = training["loss"]
log.info(
    "%d packed blocks, %d tokens per step, %.1f passes over the corpus",
    training["corpus_blocks"],
    training["tokens_per_step"],
    training["epochs"],
)
log.info("saved %s; loss %.3f at step 1, %.3f at step %d", snakemake.output.folder, losses[0], losses[-1], len(losses))

"""Rule nq_swap_respond: one model's NQ-Swap answers under every setting, method and the steered run."""

from conflictlab.io import read_tables, write_parquet
from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load
from conflictlab.lm.registry import context_limit
from conflictlab.logs import configure_logging
from conflictlab.nq_swap.generation import RESPONSE_SCHEMA, answer_items

model, params = snakemake.wildcards.model, snakemake.params
settings = params.settings
log = configure_logging(snakemake.log[0], f"nq_swap_respond.{model}")
items = read_tables(snakemake.input.data).to_pylist()
lm = load(snakemake.input.model, dtype=settings["dtype"])
steering = {**params.steering, "batch_size": settings["batch_size"]} if params.steering else None
responses = answer_items(
    lm,
    HFBackend(lm, batch_size=settings["batch_size"]),
    items,
    model=model,
    methods=params.methods,
    steering=steering,
    params=DecodingParams(max_new_tokens=settings["max_new_tokens"], seed=settings["seed"]),
    limit=context_limit(snakemake.input.model, settings["max_model_len"]),
    original_methods=params.original_methods,
)
write_parquet(responses, snakemake.output.responses, RESPONSE_SCHEMA)
log.info(
    "%d items x %d runs (%s); finish reasons %s",
    len(items),
    len(set(responses.column("run").to_pylist())),
    ", ".join(dict.fromkeys(responses.column("run").to_pylist())),
    responses.column("finish_reason").value_counts().to_pylist(),
)

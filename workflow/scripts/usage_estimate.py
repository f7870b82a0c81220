"""Rule usage_estimate: the requests and tokens this config would send to its
hosted generators, from the built inputs, before any is sent."""

from conflictlab.arbitration.evaluation import arbitration_conversations
from conflictlab.conflictbank.evaluation import conflictbank_conversations
from conflictlab.conflictbank.prompts import settings_named
from conflictlab.conflicts.responses import TASK1_MAX_NEW_TOKENS, conflicts_conversations
from conflictlab.contextconflict.generation import hosted_requests
from conflictlab.io import read_tables
from conflictlab.lm.chat import CHOICE_REPLY_TOKENS
from conflictlab.logs import configure_logging
from conflictlab.report.tables import markdown, write_markdown_and_csv
from conflictlab.report.usage import estimate_row, estimate_table

log = configure_logging(snakemake.log[0], "usage_estimate")
inputs, params = snakemake.input, snakemake.params
prices, jobs, rows = params.prices, params.jobs, []
for model in jobs["generate"]:
    requests = [r for path in inputs.samples for r in hosted_requests(read_tables(path), params.templates)]
    rows.append(
        estimate_row(
            f"generate/{model}",
            model,
            [r.messages for r in requests],
            params.max_new_tokens["generate"],
            prices.get(model),
        )
    )
for model in jobs["conflicts_respond"]:
    task1, task2 = conflicts_conversations(read_tables(inputs.conflicts).to_pylist(), params.strategies)
    rows.append(
        estimate_row(f"conflicts_respond/{model} (Task 1)", model, task1, TASK1_MAX_NEW_TOKENS, prices.get(model))
    )
    rows.append(
        estimate_row(
            f"conflicts_respond/{model} (Task 2)", model, task2, params.max_new_tokens["conflicts"], prices.get(model)
        )
    )
for model in jobs["arbitration_evaluate"]:
    instances = read_tables([inputs.arbitration, inputs.arbitration_sensitivity])
    rows.append(
        estimate_row(
            f"arbitration_evaluate/{model}",
            model,
            arbitration_conversations(instances),
            CHOICE_REPLY_TOKENS,
            prices.get(model),
        )
    )
for model in jobs["conflictbank_evaluate"]:
    conversations = conflictbank_conversations(
        read_tables(inputs.conflictbank), settings_named(params.conflictbank_settings)
    )
    rows.append(
        estimate_row(f"conflictbank_evaluate/{model}", model, conversations, CHOICE_REPLY_TOKENS, prices.get(model))
    )
table = estimate_table(rows)
caption = (
    "Estimated endpoint usage of the hosted generators, before any request is sent: requests, prompt tokens "
    "(characters / 4, "
    "the providers' rule of thumb for English), completion tokens and cost if every reply used its whole token limit. "
    "Judge requests depend on the responses and are not estimated; results/tables/usage.* counts them after a run."
)
write_markdown_and_csv(table, snakemake.output.md, snakemake.output.csv, caption=caption)
log.info("\n%s", markdown(table, caption=caption))

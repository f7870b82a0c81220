"""Construction's generator: the project's model layer, and the budget check before paid requests.

A construction step sends chat conversations (the paper's prompts are
messages). A hosted model goes through :class:`conflictlab.lm.chat.ChatBackend`
over a client whose :class:`~conflictlab.lm.endpoint.RequestCache` stores every
completed request (a killed job resumes without resending one); a local
model through :func:`conflictlab.lm.builders.generation_backend` with the
conversation rendered by its chat template.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping, Sequence

import pyarrow as pa

from conflictlab.lm.generation import Completion, DecodingParams
from conflictlab.report.usage import estimate_row, estimate_table

log = logging.getLogger(__name__)

Conversation = Sequence[Mapping[str, str]]


class BudgetError(RuntimeError):
    """The estimated cost of a job's paid requests exceeds the configured budget."""


def check_budget(
    job: str,
    model: str,
    conversations: Sequence[Conversation],
    max_new_tokens: int,
    *,
    price: Mapping[str, float] | None,
    budget_usd: float | None,
    hosted: bool,
) -> pa.Table:
    """The estimate table of ``job``'s requests (the hosted backends' own
    estimate, :func:`conflictlab.report.usage.estimate_row`), logged before
    anything is sent. For a hosted model it raises :class:`BudgetError` when
    the model has no price, no budget is set, or the upper bound of the cost
    exceeds ``budget_usd``; a local model costs nothing and is not checked."""
    table = estimate_table([estimate_row(job, model, conversations, max_new_tokens, price)])
    total = table.to_pylist()[-1]
    log.info(
        "%s: %d requests, about %d prompt tokens, at most %d completion tokens, at most $%s",
        job,
        total["requests"],
        total["prompt_tokens"],
        total["max_completion_tokens"],
        "?" if total["max_cost_usd"] is None else f"{total['max_cost_usd']:.4f}",
    )
    print(
        f"{job}: {total['requests']} requests to {model}; estimated cost at most "
        f"{'unknown (no price)' if total['max_cost_usd'] is None else '${:.4f}'.format(total['max_cost_usd'])}",
        flush=True,
    )
    if not hosted or total["requests"] == 0:
        return table
    if total["max_cost_usd"] is None:
        raise BudgetError(
            f"{job}: models.{model}.prices is not set, so the cost of {total['requests']} paid requests "
            "cannot be checked "
            "against construction.budget_usd"
        )
    if budget_usd is None or total["max_cost_usd"] > budget_usd:
        raise BudgetError(
            f"{job}: {total['requests']} paid requests may cost up to ${total['max_cost_usd']:.4f}, "
            f"more than construction.budget_usd ({budget_usd}); raise the budget or lower the sample"
        )
    return table


@contextlib.contextmanager
def open_generator(
    model_dir: str | os.PathLike | None,
    hosted: Mapping | None,
    settings: Mapping,
    *,
    cache_dir: str | os.PathLike | None,
    writer: str,
):
    """(backend, tokenizer) of the job's model for a ``with`` block:
    tokenizer None for a hosted model (its backend takes messages).
    ``settings``: the generation settings (``backend``, ``batch_size``, ``dtype``, ...)."""
    with contextlib.ExitStack() as stack:
        if hosted:
            from conflictlab.lm.builders import hosted_backend

            yield hosted_backend(hosted, stack=stack, request_cache=cache_dir, writer=writer), None
        else:
            from conflictlab.lm.builders import generation_backend

            backend = generation_backend(
                model_dir, dict(settings), limit=settings.get("max_model_len") or 4096, stack=stack
            )
            yield backend, backend.lm.tokenizer


@contextlib.contextmanager
def budgeted_generator(
    job: str,
    conversations: Sequence[Conversation],
    settings: Mapping,
    *,
    model_dir: str | os.PathLike | None,
    cache_dir: str | os.PathLike | None,
):
    """:func:`open_generator` for a ``with`` block, entered only after
    :func:`check_budget` has logged and passed ``conversations``, the job's
    requests. ``settings``: a construction rule's generator params, a mapping
    with ``model``, ``hosted`` (endpoint mapping or None), ``price``,
    ``budget_usd``, ``generation`` (settings mapping) and ``max_new_tokens``."""
    check_budget(
        job,
        settings["model"],
        conversations,
        settings["max_new_tokens"],
        price=settings["price"],
        budget_usd=settings["budget_usd"],
        hosted=bool(settings["hosted"]),
    )
    with open_generator(
        model_dir, settings["hosted"], settings["generation"], cache_dir=cache_dir, writer=job
    ) as backend_and_tokenizer:
        yield backend_and_tokenizer


def complete(
    backend, tokenizer, conversations: Sequence[Conversation], *, max_new_tokens: int, seed: int, rows: Sequence[str]
) -> list[Completion]:
    """One greedy completion per conversation (``rows`` name them in a hosted endpoint's errors)."""
    if not conversations:
        return []
    params = DecodingParams(max_new_tokens=max_new_tokens, seed=seed)
    if tokenizer is None:
        return backend.generate(list(conversations), params, rows=list(rows))
    from conflictlab.lm.guided import chat_token_ids

    return backend.generate([chat_token_ids(tokenizer, c) for c in conversations], params)

"""What the run asked of hosted endpoints: requests, retries and tokens per
job (the ``usage`` Parquet each endpoint job writes,
:data:`conflictlab.lm.endpoint.USAGE_SCHEMA`), and their cost under a price
table (US dollars per million prompt / completion tokens, per endpoint model)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

COUNTS = ("requests", "cache_hits", "sent", "answered", "retries", "failed", "prompt_tokens", "completion_tokens")

SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("job", pa.string(), nullable=False),  # "total" on the last row
        pa.field("model", pa.string(), nullable=False),  # the endpoint's model id ("all" on the total row)
        *[pa.field(name, pa.int64(), nullable=False) for name in COUNTS],
        pa.field("cost_usd", pa.float64()),  # null: no price for the model (the total: null if any job's is)
    ]
)


def cost_usd(prompt_tokens: int, completion_tokens: int, price: Mapping[str, float] | None) -> float | None:
    """Dollars for the tokens at ``price`` ({"prompt": $/M, "completion": $/M}); None without a price."""
    if price is None:
        return None
    return (prompt_tokens * price["prompt"] + completion_tokens * price["completion"]) / 1e6


def usage_summary(usage: pa.Table, prices: Mapping[str, Mapping[str, float]]) -> pa.Table:
    """One row per (job, endpoint model) of ``usage`` with its counts summed and
    its cost (``prices``: endpoint model id -> price), and a total row; jobs
    that sent nothing to an endpoint (local models) have no rows."""
    grouped = (
        usage.group_by(["job", "model"])
        .aggregate([(name, "sum") for name in COUNTS])
        .sort_by([("job", "ascending"), ("model", "ascending")])
    )
    rows = []
    for row in grouped.to_pylist():  # one row per job and endpoint: a few dozen at most
        counts = {name: int(row[f"{name}_sum"]) for name in COUNTS}
        rows.append(
            {
                "job": row["job"],
                "model": row["model"],
                **counts,
                "cost_usd": cost_usd(counts["prompt_tokens"], counts["completion_tokens"], prices.get(row["model"])),
            }
        )
    costs = [r["cost_usd"] for r in rows]
    total = {name: int(pc.sum(usage[name]).as_py() or 0) for name in COUNTS}
    rows.append({"job": "total", "model": "all", **total, "cost_usd": None if None in costs else float(sum(costs))})
    return pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA)


# Characters per token of English text under GPT-style BPE tokenizers: the
# providers' rule of thumb. The estimate cannot tokenise exactly (the
# endpoint's tokenizer is not available offline); it is a budget, not a bill.
CHARS_PER_TOKEN = 4.0

ESTIMATE_SCHEMA = pa.schema(
    [
        pa.field("job", pa.string(), nullable=False),  # "total" on the last row
        pa.field("model", pa.string(), nullable=False),  # the configured model name
        pa.field("requests", pa.int64(), nullable=False),
        pa.field("prompt_tokens", pa.int64(), nullable=False),  # estimated: characters / CHARS_PER_TOKEN
        pa.field(
            "max_completion_tokens", pa.int64(), nullable=False
        ),  # requests x each request's token limit: an upper bound
        pa.field(
            "max_cost_usd", pa.float64()
        ),  # at the model's price, with every completion at its limit; null without a price
    ]
)


def conversation_chars(conversation) -> int:
    """Characters of a conversation's message contents."""
    return sum(len(message["content"]) for message in conversation)


def estimate_row(job: str, model: str, conversations, max_tokens: int, price: Mapping[str, float] | None) -> dict:
    """One estimate row: the requests of ``job`` (``conversations``, each with
    ``max_tokens`` reply tokens); identical conversations count once, as the
    client sends them once."""
    conversations = list({json.dumps(c, sort_keys=True): c for c in conversations}.values())
    prompt = int(round(sum(conversation_chars(c) for c in conversations) / CHARS_PER_TOKEN))
    completion = len(conversations) * max_tokens
    return {
        "job": job,
        "model": model,
        "requests": len(conversations),
        "prompt_tokens": prompt,
        "max_completion_tokens": completion,
        "max_cost_usd": cost_usd(prompt, completion, price),
    }


def estimate_table(rows: list[dict]) -> pa.Table:
    """The rows and their total (a null cost if any row has no price)."""
    costs = [row["max_cost_usd"] for row in rows]
    total = {
        "job": "total",
        "model": "all",
        **{k: sum(row[k] for row in rows) for k in ("requests", "prompt_tokens", "max_completion_tokens")},
        "max_cost_usd": None if None in costs else float(sum(costs)),
    }
    return pa.Table.from_pylist([*rows, total], schema=ESTIMATE_SCHEMA)

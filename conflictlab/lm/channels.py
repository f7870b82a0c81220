"""Output channels of models that reason before they answer (GPT-OSS's harmony
format).

A harmony completion is a sequence of messages,
``<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>``:
the analysis channel holds the reasoning trace, the final channel the answer.
Only the final channel is the model's response (what accuracy, Shapley
attribution and the causal intervention score); the rest is kept beside it.
The markers are single special tokens, so the split is done on token ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

CHANNEL, MESSAGE, END, RETURN, START = "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|start|>"


@dataclass(frozen=True)
class HarmonyTokens:
    """The ids the split needs: the five markers and the tokens of the word "final"."""

    channel: int
    message: int
    end: int
    return_: int
    start: int
    final: tuple[int, ...]

    @classmethod
    def of(cls, tokenizer) -> "HarmonyTokens | None":
        """The tokenizer's harmony ids, or None when it has no such markers."""
        vocab = tokenizer.get_vocab()
        if not all(marker in vocab for marker in (CHANNEL, MESSAGE, END, RETURN, START)):
            return None
        final = tuple(tokenizer("final", add_special_tokens=False)["input_ids"])
        return cls(vocab[CHANNEL], vocab[MESSAGE], vocab[END], vocab[RETURN], vocab[START], final)


@dataclass(frozen=True)
class Channels:
    final_ids: list[int] | None  # None: the completion never reached the final channel
    other_ids: list[int]  # everything before the final message (analysis, commentary, markers)


def split_channels(token_ids: Sequence[int], tokens: HarmonyTokens) -> Channels:
    """Split one completion's ids at its last ``<|channel|>final<|message|>``;
    the final message ends at ``<|return|>`` or ``<|end|>`` (excluded)."""
    ids = list(token_ids)
    marker = [tokens.channel, *tokens.final, tokens.message]
    for start in range(len(ids) - len(marker), -1, -1):
        if ids[start : start + len(marker)] == marker:
            body = ids[start + len(marker) :]
            stop = next((i for i, t in enumerate(body) if t in (tokens.return_, tokens.end)), len(body))
            return Channels(body[:stop], ids[:start])
    return Channels(None, ids)


def separate_final_channel(
    rows: list[dict], tokens: HarmonyTokens, decode: Callable[[list[int]], str]
) -> list[dict]:
    """Response rows (``RESPONSE_SCHEMA``) with ``response`` and
    ``response_token_ids`` cut to the final channel and the rest decoded into
    ``reasoning``. A completion that ended before its final channel (the token
    limit hit inside the analysis) gets status ``no_final_channel``."""
    out = []
    for row in rows:
        if row["response_token_ids"] is None:
            out.append(row)
            continue
        parts = split_channels(row["response_token_ids"], tokens)
        row = {**row, "reasoning": decode(parts.other_ids)}
        if parts.final_ids is None:
            row.update(response=None, response_token_ids=None, status="no_final_channel",
                       message="generation ended before the final channel (raise max_new_tokens)")
        else:
            row.update(response=decode(parts.final_ids), response_token_ids=parts.final_ids)
        out.append(row)
    return out

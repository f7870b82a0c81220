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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

CHANNEL, MESSAGE, END, RETURN, START = "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|start|>"
# Where a final message's text begins: a prompt ending in it (after the chat
# template's "<|start|>assistant") is answered in the final channel directly.
FINAL_HEADER = f"{CHANNEL}final{MESSAGE}"


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
    def of(cls, tokenizer) -> HarmonyTokens | None:
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


def final_message(
    token_ids: Sequence[int], tokens: HarmonyTokens, decode: Callable[[list[int]], str]
) -> tuple[str | None, list[int] | None, str]:
    """(final channel text, its ids, everything before it decoded) of one
    completion; text and ids are None when it never reached the final channel.
    The one split every task uses (ContextConflict, CONFLICTS)."""
    parts = split_channels(token_ids, tokens)
    final = None if parts.final_ids is None else decode(parts.final_ids)
    return final, parts.final_ids, decode(parts.other_ids)


NO_FINAL_CHANNEL = "no_final_channel"  # status of a completion cut inside its analysis


def separate_final_channel(rows: list[dict], tokens: HarmonyTokens, decode: Callable[[list[int]], str]) -> list[dict]:
    """Response rows (``RESPONSE_SCHEMA``) with ``response`` and
    ``response_token_ids`` cut to the final channel and the rest decoded into
    ``reasoning``. A completion that ended before its final channel (the token
    limit hit inside the analysis) gets status ``no_final_channel``."""
    out = []
    for row in rows:
        if row["response_token_ids"] is None:
            out.append(row)
            continue
        final, final_ids, reasoning = final_message(row["response_token_ids"], tokens, decode)
        row = {**row, "reasoning": reasoning}
        if final is None:
            row.update(
                response=None,
                response_token_ids=None,
                status=NO_FINAL_CHANNEL,
                message="generation ended before the final channel (raise max_new_tokens)",
            )
        else:
            row.update(response=final, response_token_ids=final_ids)
        out.append(row)
    return out

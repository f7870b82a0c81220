"""Chat models behind an OpenAI-compatible ``/chat/completions`` endpoint as
generators: a hosted API, or vLLM's server on a prepared model.

A chat backend takes the benchmark's own messages (system and user roles as
the paper gives them), never token ids: the endpoint renders them with its
model's template. Decoding is greedy (temperature 0 and a seed, where the
endpoint takes them: :meth:`conflictlab.lm.endpoint.Endpoint.decoding_fields`).

* :meth:`ChatBackend.generate`: one completion per conversation, the same
  :class:`~conflictlab.lm.generation.Completion` the local backends return,
  with no token ids (the endpoint's tokenizer is not ours) and the endpoint's
  own token counts.
* :meth:`ChatBackend.read_choices`: a closed read-out over single-letter
  options (arbitration's A/B, ConflictBank's A-D). With ``logprobs`` the
  log-probabilities of the options among the first reply token's
  ``top_logprobs``; an option not listed gets ``MISSING_LOGPROB`` = -100, the
  ConflictBank authors' value for a label outside vLLM's top list (all we
  know is that it is less likely than every listed token). Otherwise, or when
  no option is listed, the letter the reply starts with
  (:func:`parse_choice`) gets 0 and the others -100: the ``generation``
  read-out, recorded per row. A reply with neither (a refusal, no letter) is
  the ``none`` read-out: every option -100, no choice.

Refusals (``message.refusal``) and content-filter stops come back with
``finish_reason`` ``refusal`` / ``content_filter`` and no text: the callers
record them as such, never as answers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from conflictlab.lm.endpoint import Endpoint, EndpointClient, RequestCache
from conflictlab.lm.generation import Completion, DecodingParams

Conversation = Sequence[Mapping[str, str]]  # [{"role": ..., "content": ...}, ...]

# finish_reason values that carry no answer.
REFUSAL, CONTENT_FILTER = "refusal", "content_filter"
NO_ANSWER = (REFUSAL, CONTENT_FILTER)

# Reply tokens of a choice read-out: the letter, and room for "Answer: (A)".
CHOICE_REPLY_TOKENS = 8
# top_logprobs asked for: OpenAI's maximum is 20.
TOP_LOGPROBS = 20

READ_OUT_LOGPROBS, READ_OUT_GENERATION, READ_OUT_NONE = "logprobs", "generation", "none"
MISSING_LOGPROB = -100.0


def hosted_client(spec: Mapping, *, cache_dir: str | os.PathLike, writer: str) -> EndpointClient:
    """The client of a hosted model's endpoint settings (a ``models.*.hosted``
    mapping), its completed requests cached under ``cache_dir`` as ``writer``."""
    return EndpointClient(Endpoint.from_settings(spec), cache=RequestCache(cache_dir, writer=writer))


@dataclass(frozen=True)
class ChoiceReadOut:
    logprobs: tuple[float, ...]  # one per option; MISSING_LOGPROB where unknown (see the module docstring)
    read_out: str  # READ_OUT_LOGPROBS | READ_OUT_GENERATION | READ_OUT_NONE (nothing to read: refusal, no letter)
    reply: str | None
    finish_reason: str | None

    @property
    def chosen(self) -> int | None:
        """The index of the most likely option; None when none is known or two tie."""
        best = max(self.logprobs)
        if self.read_out == READ_OUT_NONE or sum(v == best for v in self.logprobs) > 1:
            return None
        return self.logprobs.index(best)


_LEADING_CHOICE = re.compile(r"^\W*(?:(?:the\s+)?answer\s*(?:is)?\s*[:\-]?\s*)?\(?([A-Za-z])\b", re.IGNORECASE)


def parse_choice(text: str | None, options: Sequence[str]) -> int | None:
    """The option a reply starts with: "A", "A.", "(B)", "Answer: C", "The
    answer is D" (case of the letter kept as the options spell it), else None."""
    if not text:
        return None
    match = _LEADING_CHOICE.match(text.strip())
    if not match:
        return None
    letter = match.group(1)
    return options.index(letter) if letter in options else None


class ChatBackend:
    """Greedy chat completions of conversations through one endpoint client.

    ``rows`` label each request in errors (a sample or record id).
    """

    name = "chat"

    def __init__(self, client: EndpointClient):
        self.client = client
        self.endpoint = client.endpoint

    def _body(self, conversation: Conversation, max_new_tokens: int, seed: int, **extra) -> dict:
        return {
            "model": self.endpoint.model,
            "messages": [dict(message) for message in conversation],
            **self.endpoint.decoding_fields(max_new_tokens, seed),
            **extra,
        }

    def generate(
        self, prompts: Sequence[Conversation], params: DecodingParams, *, rows: Sequence[str] | None = None
    ) -> list[Completion]:
        """One completion per conversation (``prompts``: message lists)."""
        rows = list(rows) if rows is not None else [str(i) for i in range(len(prompts))]
        bodies = [self._body(conversation, params.max_new_tokens, params.seed) for conversation in prompts]
        return [
            _completion(reply, self.endpoint) for reply in self.client.post_many("/chat/completions", bodies, rows=rows)
        ]

    def read_choices(
        self,
        prompts: Sequence[Conversation],
        options: Sequence[str],
        *,
        rows: Sequence[str],
        seed: int = 0,
        max_new_tokens: int = CHOICE_REPLY_TOKENS,
    ) -> list[ChoiceReadOut]:
        """The closed read-out of every conversation over ``options`` (single
        letters): one request each, its logprobs and its text."""
        extra = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if self.endpoint.logprobs else {}
        bodies = [self._body(conversation, max_new_tokens, seed, **extra) for conversation in prompts]
        return [
            _choice(reply, options, self.endpoint)
            for reply in self.client.post_many("/chat/completions", bodies, rows=list(rows))
        ]


def _first_choice(reply: dict, endpoint: Endpoint) -> dict:
    try:
        return reply["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise RuntimeError(f"endpoint {endpoint.base_url}: no choice in reply {json.dumps(reply)[:300]}") from None


def _text_and_reason(choice: dict) -> tuple[str | None, str | None]:
    message = choice.get("message") or {}
    reason = choice.get("finish_reason")
    if message.get("refusal"):
        return None, REFUSAL
    if reason == CONTENT_FILTER:
        return None, CONTENT_FILTER
    return message.get("content") or "", reason


def _completion(reply: dict, endpoint: Endpoint) -> Completion:
    choice = _first_choice(reply, endpoint)
    text, reason = _text_and_reason(choice)
    usage = reply.get("usage") or {}
    return Completion(
        token_ids=[],
        text=text,
        finish_reason=reason,
        n_prompt_tokens=usage.get("prompt_tokens"),
        n_tokens=usage.get("completion_tokens"),
    )


def _first_token_logprobs(choice: dict) -> dict[str, float]:
    """Stripped token -> log-probability among the first reply token's alternatives."""
    content = ((choice.get("logprobs") or {}).get("content")) or []
    if not content:
        return {}
    first = content[0]
    found: dict[str, float] = {}
    for alternative in [first, *(first.get("top_logprobs") or [])]:
        token = (alternative.get("token") or "").strip()
        if token and token not in found and alternative.get("logprob") is not None:
            found[token] = float(alternative["logprob"])
    return found


def _choice(reply: dict, options: Sequence[str], endpoint: Endpoint) -> ChoiceReadOut:
    choice = _first_choice(reply, endpoint)
    text, reason = _text_and_reason(choice)
    if reason in NO_ANSWER:
        return ChoiceReadOut(tuple([MISSING_LOGPROB] * len(options)), READ_OUT_NONE, None, reason)
    listed = _first_token_logprobs(choice)
    if any(option in listed for option in options):
        return ChoiceReadOut(
            tuple(listed.get(option, MISSING_LOGPROB) for option in options), READ_OUT_LOGPROBS, text, reason
        )
    index = parse_choice(text, options)
    if index is None:
        return ChoiceReadOut(tuple([MISSING_LOGPROB] * len(options)), READ_OUT_NONE, text, reason)
    return ChoiceReadOut(
        tuple(0.0 if i == index else MISSING_LOGPROB for i in range(len(options))), READ_OUT_GENERATION, text, reason
    )

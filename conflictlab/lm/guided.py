"""Schema-constrained chat completions: outputs that cannot fail to parse.

A guided backend answers chat conversations with JSON that follows a given
JSON schema (grammar-constrained decoding), greedily::

    chat.complete_json(conversations, schema, max_new_tokens=...) -> list[str]

* :class:`VLLMGuidedChat`: an in-process vLLM engine
  (``StructuredOutputsParams(json=schema)``); the conversation is rendered
  with the model's chat template, as vLLM's server renders it.
* :class:`EndpointGuidedChat`: an OpenAI-compatible ``/v1/chat/completions``
  endpoint with ``response_format`` ``json_schema`` (vLLM's server, started by
  :func:`conflictlab.lm.server.serve_vllm`, or a hosted API).

A reply cut by ``max_new_tokens`` is returned as it is; the caller's parser
records it as unparseable.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from typing import Protocol

from conflictlab.lm.chat_template import render_chat
from conflictlab.lm.endpoint import Endpoint, EndpointClient, RequestCache

Conversation = Sequence[dict]  # [{"role": ..., "content": ...}, ...]


class GuidedChat(Protocol):
    name: str

    def complete_json(
        self, conversations: Sequence[Conversation], schema: dict, *, max_new_tokens: int
    ) -> list[str]: ...


class VLLMGuidedChat:
    """Guided decoding in an in-process vLLM engine on a prepared model folder."""

    name = "vllm"

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        dtype: str = "bfloat16",
        max_model_len: int | None = None,
        seed: int = 0,
        **engine_args,
    ):
        from vllm import LLM

        self.seed = seed
        self.llm = LLM(model=str(model_dir), dtype=dtype, max_model_len=max_model_len, seed=seed, **engine_args)
        self.tokenizer = self.llm.get_tokenizer()

    def complete_json(self, conversations: Sequence[Conversation], schema: dict, *, max_new_tokens: int) -> list[str]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        sampling = SamplingParams(
            temperature=0.0,
            max_tokens=max_new_tokens,
            seed=self.seed,
            structured_outputs=StructuredOutputsParams(json=schema),
        )
        prompts = [{"prompt_token_ids": chat_token_ids(self.tokenizer, c)} for c in conversations]
        return [output.outputs[0].text for output in self.llm.generate(prompts, sampling, use_tqdm=False)]


def chat_token_ids(tokenizer, conversation: Conversation) -> list[int]:
    """The conversation rendered by the tokenizer's chat template, ready for the assistant's reply."""
    return render_chat(tokenizer, conversation, tokenize=True)


class EndpointGuidedChat:
    """``/v1/chat/completions`` with a JSON-schema ``response_format``, greedy.

    Requests go through an :class:`~conflictlab.lm.endpoint.EndpointClient`
    (retries, rate limits, answers reused from ``cache`` when given; its
    ``stats`` count them), ``endpoint.concurrency`` in flight at once (a vLLM
    server batches them); ``concurrency``, when given, replaces the
    endpoint's. The decoding fields are those the endpoint accepts
    (:meth:`~conflictlab.lm.endpoint.Endpoint.decoding_fields`).
    """

    name = "openai"

    def __init__(
        self, endpoint: Endpoint, *, seed: int = 0, concurrency: int | None = None, cache: RequestCache | None = None
    ):
        if concurrency is not None:
            endpoint = dataclasses.replace(endpoint, concurrency=concurrency)
        self.endpoint = endpoint
        self.seed = seed
        self.client = EndpointClient(endpoint, cache=cache)

    def complete_json(self, conversations: Sequence[Conversation], schema: dict, *, max_new_tokens: int) -> list[str]:
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "judgement", "schema": schema, "strict": True},
        }
        bodies = [
            {
                "model": self.endpoint.model,
                "messages": list(conversation),
                **self.endpoint.decoding_fields(max_new_tokens, self.seed),
                "response_format": response_format,
            }
            for conversation in conversations
        ]
        replies = self.client.post_many(
            "/chat/completions", bodies, rows=[f"conversation {i}" for i in range(len(bodies))]
        )
        return [self._content(reply) for reply in replies]

    def _content(self, reply: dict) -> str:
        try:
            return reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise RuntimeError(
                f"endpoint {self.endpoint.base_url}: no message in reply {json.dumps(reply)[:500]}"
            ) from None

    def close(self) -> None:
        self.client.close()

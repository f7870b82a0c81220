"""The judge: one ``ask(requests) -> replies`` over the model layer's backends.

* :class:`HFJudge` (transformers, in process). Closed verdicts: the
  conversation rendered by the chat template, then the reply written field
  by field, each option read from the next-token logits of the first token
  that tells the options apart (found by tokenising text + option, so a token
  that merges across the boundary is handled); the argmax option is the
  verdict, never unparseable. Free JSON: greedy generation after the
  request's prefilled prefix.
* :class:`GuidedJudge` over a :class:`conflictlab.lm.guided.GuidedChat`:
  JSON-schema constrained decoding through vLLM in process, vLLM's
  OpenAI-compatible server started for the job, or a hosted endpoint.

:func:`open_judge` builds the configured one (``judges`` settings) for the
length of a ``with`` block, stopping a started server at its end.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from conflictlab.judges.requests import JudgeRequest, closed_reply
from conflictlab.lm.backends import backend_spec
from conflictlab.lm.builders import generation_backend, guided_chat, precision
from conflictlab.lm.chat_template import render_chat
from conflictlab.lm.shared_prefix import FedTokens, common_prefix_length, has_sliding_window

log = logging.getLogger(__name__)


class Judge(Protocol):
    name: str  # identity in the cache: model, backend, precision

    def ask(self, requests: Sequence[JudgeRequest]) -> list[str]: ...


class HFJudge:
    """A judge run in process by transformers (the CPU default)."""

    def __init__(self, lm, *, name: str, batch_size: int = 8):
        if not lm.has_chat_template:
            raise ValueError(f"judge model {lm.path} has no chat template; a judge must be an instruct model")
        self.lm = lm
        self.name = name
        self.batch_size = batch_size
        self.tokens_fed = 0  # closed verdicts' prompt tokens run through the model, all asks

    def _chat(self, request: JudgeRequest) -> str:
        return render_chat(self.lm.tokenizer, request.conversation(), tokenize=False)

    def _encode(self, text: str) -> list[int]:
        return self.lm.tokenizer(text, add_special_tokens=False)["input_ids"]

    def option_read_out(self, request: JudgeRequest, text: str) -> tuple[list[int], tuple[int, ...]]:
        """(context ids, one token id per option) after ``text``: the encodings
        of ``text + option`` agree up to a position and differ there."""
        encoded = [self._encode(text + option) for option in request.options]
        common = common_prefix_length(encoded)
        firsts = tuple(e[common] if len(e) > common else None for e in encoded)
        if None in firsts or len(set(firsts)) < len(firsts):
            raise ValueError(
                f"judge template {request.template}: options {request.options} share their first token "
                f"under {self.lm.path}'s tokenizer; a closed verdict needs options that differ in it"
            )
        return encoded[0][:common], firsts

    def _closed(self, request: JudgeRequest, state: FedTokens) -> str:
        """Field by field: the argmax option after the reply so far, one
        forward of only the tokens not already in ``state``'s cache (a
        request's n verdicts cost one prompt pass; consecutive requests that
        share a prompt prefix, such as one template's instructions and
        examples, share its pass)."""
        import torch

        text, chosen = self._chat(request), []
        state.new_request()
        for index in range(len(request.fields)):
            text += request.field_opening(index)
            context, firsts = self.option_read_out(request, text)
            cache, keep = state.reuse(context)
            with torch.inference_mode():
                out = self.lm.model(
                    input_ids=torch.tensor([context[keep:]], device=self.lm.device),
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
            scores = out.logits[0, -1, list(firsts)].float().cpu().numpy()
            chosen.append(request.options[int(np.argmax(scores))])
            text += chosen[-1]
        return closed_reply(request, chosen)

    def ask(self, requests: Sequence[JudgeRequest]) -> list[str]:
        from conflictlab.lm.generation import DecodingParams, HFBackend

        replies: list[str | None] = [None] * len(requests)
        free: dict[int, list[int]] = defaultdict(list)
        closed = [i for i, request in enumerate(requests) if request.closed]
        # In prompt order, so that requests sharing a prefix are neighbours.
        closed.sort(key=lambda i: self._chat(requests[i]))
        state = FedTokens(self.lm.model.config, across_requests=not has_sliding_window(self.lm.model.config))
        for i in closed:
            replies[i] = self._closed(requests[i], state)
        self.tokens_fed += state.tokens_fed
        if closed:
            log.info("judge %s: %d closed requests, %d prompt tokens fed", self.name, len(closed), state.tokens_fed)
        for i, request in enumerate(requests):
            if not request.closed:
                free[request.max_new_tokens].append(i)
        backend = HFBackend(self.lm, batch_size=self.batch_size)
        for max_new_tokens, members in free.items():
            prompts = [self._encode(self._chat(requests[i]) + requests[i].prefix) for i in members]
            for i, completion in zip(members, backend.generate(prompts, DecodingParams(max_new_tokens=max_new_tokens))):
                replies[i] = requests[i].prefix + completion.text
        return replies


class GuidedJudge:
    """A judge whose replies are decoded under their JSON schema."""

    def __init__(self, chat, *, name: str):
        self.chat = chat
        self.name = name

    def ask(self, requests: Sequence[JudgeRequest]) -> list[str]:
        replies: list[str | None] = [None] * len(requests)
        groups: dict[tuple[str, int], list[int]] = defaultdict(list)
        for i, request in enumerate(requests):
            groups[json.dumps(request.schema(), sort_keys=True), reply_budget(request)].append(i)
        for (schema, max_new_tokens), members in groups.items():
            texts = self.chat.complete_json(
                [requests[i].conversation() for i in members], json.loads(schema), max_new_tokens=max_new_tokens
            )
            for i, text in zip(members, texts):
                replies[i] = text
        return replies


def reply_budget(request: JudgeRequest) -> int:
    """Tokens a guided reply may take: a closed reply's JSON (field names,
    quotes, the whitespace a grammar allows) grows with its fields."""
    return 8 + 12 * len(request.fields) if request.closed else request.max_new_tokens


def judge_name(settings: dict) -> str:
    """The judge's identity in the cache: what changes its replies (the
    precision resolved on this machine, so that ``auto`` on a CPU with and one
    without native bfloat16 never share replies; a hosted judge's endpoint)."""
    spec = backend_spec(settings["backend"])
    model = settings["endpoint"]["model"] if spec.hosted_model else settings["model"]
    return f"{model}|{spec.name}|{precision(settings)}"


@contextlib.contextmanager
def open_judge(
    settings: dict,
    model_dir: str | os.PathLike | None,
    *,
    server_log: str | os.PathLike | None = None,
    request_cache: str | os.PathLike | None = None,
    writer: str = "judge",
) -> Iterator[Judge]:
    """The judge ``settings`` configure (keys as in the ``judges`` config section),
    on backend ``backend`` (:mod:`conflictlab.lm.backends`, built by :mod:`conflictlab.lm.builders`): one with
    ``guided_json`` answers under each request's JSON schema
    (:class:`GuidedJudge`: vLLM in process, vLLM's server on this machine for
    the block with its output in ``server_log``, or a hosted model's endpoint
    in ``endpoint``, its requests cached in ``request_cache`` as
    ``judge-{writer}``); one with ``logits`` reads closed verdicts from them
    (:class:`HFJudge`).
    """
    name, spec = judge_name(settings), backend_spec(settings["backend"])
    if spec.has("guided_json"):
        with contextlib.ExitStack() as stack:
            yield GuidedJudge(
                guided_chat(
                    model_dir, settings, stack=stack, server_log=server_log, request_cache=request_cache, writer=writer
                ),
                name=name,
            )
    else:
        spec.require("logits", model=settings["model"], purpose="a judge without guided JSON")
        backend = generation_backend(model_dir, settings)
        yield HFJudge(backend.lm, name=name, batch_size=settings["batch_size"])


def judge_session(
    settings: dict,
    model_dir: str | os.PathLike | None,
    *,
    cache_dir: str | os.PathLike,
    writer: str,
    server_log: str | os.PathLike | None = None,
    request_cache: str | os.PathLike | None = None,
):
    """A :class:`conflictlab.judges.cache.JudgeSession` for the configured judge,
    its replies cached under ``cache_dir`` (this job's new replies:
    ``{writer}-{digest}.parquet``); a hosted judge's requests also in ``request_cache``."""
    from conflictlab.judges.cache import JudgeCache, JudgeSession

    cache = JudgeCache(cache_dir, judge=judge_name(settings), writer=writer)
    opener = functools.partial(
        open_judge, settings, model_dir, server_log=server_log, request_cache=request_cache, writer=writer
    )
    return JudgeSession(opener, cache)

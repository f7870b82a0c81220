"""Greedy generation: one narrow backend interface, three implementations.

A backend turns token-id prompts into completions::

    backend.generate(prompts: list[list[int]], params: DecodingParams) -> list[Completion]

* :class:`HFBackend` (transformers; the CPU default) runs a
  :class:`~conflictlab.lm.loading.LoadedModel` in padded batches (left-padded; an encoder-decoder
  model's encoder inputs right-padded, :func:`prompt_padding_side`) cut by
  :func:`conflictlab.lm.batching.batches` (longest first, halving on
  out-of-memory); optional steering hooks (:class:`conflictlab.lm.steering.Steering`).
* :class:`conflictlab.lm.vllm_engine.VLLMBackend` sends every prompt to an
  in-process vLLM engine in one ``LLM.generate`` call (the throughput path on
  GPU; its own module, so that only the rules that may run vLLM import it).
* :class:`OpenAIBackend` sends them to an OpenAI-compatible ``/v1/completions``
  endpoint: a vLLM server started by :func:`conflictlab.lm.server.serve_vllm`,
  or a hosted API.

:func:`generate_with_method` runs a conflict-resolution method
(:mod:`conflictlab.lm.methods`); CAD and AdaCAD only on :class:`HFBackend`
(:meth:`HFBackend.generate_contrastive`, both passes in one batch).

All three receive identical token ids (rendered once by the caller) and strip
the end-of-sequence token from ``token_ids``, so outputs compare token for token.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from conflictlab.lm.batching import BatchPolicy, batches, map_batches, pad_batch
from conflictlab.lm.loading import LoadedModel, require_decoder_only
from conflictlab.lm.shared_prefix import FORWARD_COST_TOKENS, MIN_SHARED_TOKENS, shared_prefill, shared_prefix_order

if TYPE_CHECKING:
    from conflictlab.lm.endpoint import Endpoint, RequestCache


@dataclass(frozen=True)
class DecodingParams:
    """Greedy decoding (the paper's setting), the one generation config of
    every backend and every method: the length, and a repetition penalty
    (HF's: a seen token's positive logit divided by it, a negative one
    multiplied) only where a config asks for one; 1.0 is none. A model's own
    ``generation_config`` (Qwen2.5's asks for 1.05) is not consulted:
    :func:`conflictlab.lm.loading.load` replaces it with a plain one, vLLM
    gets explicit sampling parameters and a served model ``--generation-config vllm``."""

    max_new_tokens: int = 512
    seed: int = 0
    repetition_penalty: float = 1.0

    def __post_init__(self):
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0 (1.0: none), got {self.repetition_penalty!r}")

    def to_json(self) -> str:
        return json.dumps({"do_sample": False, **asdict(self)}, sort_keys=True)


def decoding_params(settings: dict, *, max_new_tokens: int | None = None) -> DecodingParams:
    """The :class:`DecodingParams` of a config's generation settings
    (``max_new_tokens`` unless given, ``seed``, and ``repetition_penalty``
    where the config asks for one, else 1.0: none)."""
    return DecodingParams(
        max_new_tokens=settings["max_new_tokens"] if max_new_tokens is None else max_new_tokens,
        seed=settings["seed"],
        repetition_penalty=settings.get("repetition_penalty", 1.0),
    )


@dataclass
class Completion:
    token_ids: list[
        int
    ]  # generated tokens, without the stop token (empty from a chat endpoint, whose tokenizer is not ours)
    text: str | None  # None when the endpoint refused or filtered the reply
    finish_reason: str  # "stop" | "length"; from a chat endpoint also "refusal" | "content_filter"
    n_prompt_tokens: int | None = None  # the endpoint's counts (chat endpoints); None: count the token ids
    n_tokens: int | None = None


class Backend(Protocol):
    name: str

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]: ...


def strip_stop(tokens: Sequence[int], eos_ids: frozenset[int] | set[int]) -> tuple[list[int], str]:
    """Tokens up to the first end-of-sequence id, and the finish reason."""
    tokens = list(tokens)
    stop = next((i for i, tok in enumerate(tokens) if tok in eos_ids), None)
    return (tokens, "length") if stop is None else (tokens[:stop], "stop")


def prompt_padding_side(lm: LoadedModel) -> str:
    """How a batch of prompts is padded: on the left for a decoder-only model (its continuation follows the
    last column), on the right for an encoder-decoder one (the encoder's input; the decoder starts apart)."""
    return "right" if lm.is_encoder_decoder else "left"


class CausalStream:
    """The rows of one contrastive batch on a decoder-only model, decoded step by step: left-padded prompts
    with their keys and values cached, positions as ``generate`` numbers them under left padding. ``seen``:
    the tokens ``generate``'s repetition penalty sees before the first new one (the prompts, padding included)."""

    def __init__(self, lm: LoadedModel, rows: Sequence[Sequence[int]]):
        from transformers import DynamicCache

        ids, mask = pad_batch(rows, lm.pad_id, side="left")
        self.lm, self.ids, self.mask = lm, ids.to(lm.device), mask.to(lm.device)
        self.positions = (self.mask.cumsum(-1) - 1).masked_fill(self.mask == 0, 1)
        self.cache = DynamicCache(config=lm.model.config)
        self.seen = self.ids

    def next_logits(self, last):
        """Next-token logits of every row, shape (rows, vocab), after appending ``last`` (a long tensor of
        shape (rows,); None at the first step)."""
        import torch

        if last is not None:
            self.ids = last[:, None]
            self.mask = torch.cat([self.mask, self.mask.new_ones((self.mask.shape[0], 1))], dim=1)
            self.positions = self.positions[:, -1:] + 1
        return self.lm.model(
            input_ids=self.ids,
            attention_mask=self.mask,
            position_ids=self.positions,
            past_key_values=self.cache,
            use_cache=True,
            logits_to_keep=1,
        ).logits[:, -1]


class EncoderDecoderStream:
    """The rows of one contrastive batch on an encoder-decoder model: the prompts encoded once (right-padded,
    masked), then the decoder steps from its start token with its own keys and values cached. ``seen``: the
    decoder start tokens, which ``generate``'s repetition penalty sees on such a model."""

    def __init__(self, lm: LoadedModel, rows: Sequence[Sequence[int]]):
        import torch
        from transformers import DynamicCache, EncoderDecoderCache

        ids, mask = pad_batch(rows, lm.pad_id, side="right")
        self.lm, self.mask = lm, mask.to(lm.device)
        self.encoded = lm.model.get_encoder()(input_ids=ids.to(lm.device), attention_mask=self.mask)
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        self.seen = torch.full((len(rows), 1), lm.decoder_start_id, dtype=torch.long, device=lm.device)
        self.ids = self.seen

    def next_logits(self, last):
        """As :meth:`CausalStream.next_logits`, the decoder fed ``last``."""
        if last is not None:
            self.ids = last[:, None]
        return self.lm.model(
            encoder_outputs=self.encoded,
            attention_mask=self.mask,
            decoder_input_ids=self.ids,
            past_key_values=self.cache,
            use_cache=True,
        ).logits[:, -1]


class HFBackend:
    """transformers ``generate`` on a loaded model, batched and padded
    (:func:`prompt_padding_side`), decoder-only or encoder-decoder.

    ``steering`` (a :class:`conflictlab.lm.steering.Steering`) is hooked into
    every ``generate`` call; an encoder-decoder model refuses it, and
    :meth:`generate_variants`, :meth:`loglikelihoods` and :meth:`hidden_states`
    (:class:`~conflictlab.lm.loading.DecoderOnlyOperation`).
    """

    name = "hf"

    def __init__(
        self,
        lm: LoadedModel,
        *,
        batch_size: int = 8,
        steering=None,
        min_shared: int = MIN_SHARED_TOKENS,
        forward_cost: int = FORWARD_COST_TOKENS,
    ):
        if steering is not None:
            require_decoder_only(lm, "activation steering")
        self.lm = lm
        self.policy = BatchPolicy(batch_size=batch_size)
        self.steering = steering
        self.min_shared = min_shared
        self.forward_cost = forward_cost

    def _batches_sharing_prefixes(self, prompts: Sequence[Sequence[int]], run) -> list:
        """``run`` over batches of ``prompts`` (one result per prompt, in input order) in which prompts that
        share a prefix of at least ``min_shared`` tokens are neighbours
        (:func:`conflictlab.lm.shared_prefix.shared_prefix_order`)."""
        order = None if self.lm.is_encoder_decoder else shared_prefix_order(prompts, min_shared=self.min_shared)
        return map_batches([len(p) for p in prompts], run, self.policy, order=order)

    def _generate_batch(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        ids, mask = pad_batch(prompts, self.lm.pad_id, side=prompt_padding_side(self.lm))
        # Steering hooks may steer prompt positions (schedule all_tokens), which a shared prefill would not see.
        shared = self.steering is None and not self.lm.is_encoder_decoder
        cache = (
            shared_prefill(self.lm, prompts, min_shared=self.min_shared, forward_cost=self.forward_cost)
            if shared
            else None
        )
        return self._decode(ids, mask, params, self.steering, cache=cache)

    def _decode(self, ids, mask, params: DecodingParams, steering, cache=None) -> list[Completion]:
        """Greedy ``generate`` of one left-padded batch under ``steering`` (a
        Steering, one per row, or None), continuing ``cache`` when given."""
        import torch

        from conflictlab.lm.steering import Steering, steering_hooks

        lm = self.lm
        # generate() returns a decoder-only model's prompt and its continuation, an encoder-decoder model's
        # decoder start token and its continuation.
        width = 1 if lm.is_encoder_decoder else ids.shape[1]
        torch.manual_seed(params.seed)
        if steering is None:
            steered = contextlib.nullcontext()
        else:
            steered = steering.hooks(lm.model) if isinstance(steering, Steering) else steering_hooks(lm.model, steering)
        with steered, torch.inference_mode():
            out = lm.model.generate(
                input_ids=ids.to(lm.device),
                attention_mask=mask.to(lm.device),
                past_key_values=cache,
                max_new_tokens=params.max_new_tokens,
                do_sample=False,
                repetition_penalty=params.repetition_penalty,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=lm.pad_id,
                eos_token_id=sorted(lm.eos_ids),
            )
        return self._completions(out[:, width:].tolist())

    def _completions(self, rows: list[list[int]]) -> list[Completion]:
        completions = []
        for row in rows:
            tokens, reason = strip_stop(row, self.lm.eos_ids)
            completions.append(Completion(tokens, self.lm.tokenizer.decode(tokens, skip_special_tokens=True), reason))
        return completions

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        return self._batches_sharing_prefixes(
            prompts, lambda batch: self._generate_batch([prompts[i] for i in batch], params)
        )

    def loglikelihoods(self, contexts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]]) -> list:
        """Per pair, float32 log-probabilities of each continuation token, shape
        (len(continuation),): :func:`conflictlab.lm.likelihood.loglikelihoods`."""
        from conflictlab.lm.likelihood import loglikelihoods

        return loglikelihoods(self.lm, contexts, continuations)

    def hidden_states(self, prompts: Sequence[Sequence[int]]):
        """Every decoder layer's hidden state at each prompt's last token, float32
        of shape (prompts, layers, hidden size): :func:`conflictlab.lm.hidden.hidden_states`."""
        from conflictlab.lm.hidden import hidden_states

        return hidden_states(self.lm, prompts, batch_size=self.policy.batch_size)

    def generate_contrastive(
        self, prompts: Sequence[Sequence[int]], context_free: Sequence[Sequence[int]], params: DecodingParams, method
    ) -> list[Completion]:
        """Greedy completions of ``prompts`` decoded from a contrast with
        their context-free versions (CAD, AdaCAD: :mod:`conflictlab.lm.methods`).

        ``context_free[i]``: prompt i without its context, token ids.
        ``method``: a contrastive :class:`~conflictlab.lm.methods.Method`, or
        a callable (contextual logits, context-free logits), both of shape
        (rows, vocab), -> the logits of shape (rows, vocab) whose argmax is
        the next token. Each batch of k pairs is one batch of 2k rows (the k
        prompts, then their k context-free versions: a :class:`CausalStream`,
        or on an encoder-decoder model an :class:`EncoderDecoderStream`), each
        row with its own keys and values along the batch dimension, so one
        forward per step serves both passes; the token chosen for row i is
        appended to rows i and k + i. A row stops at its first
        end-of-sequence token, a batch when every row has stopped or after
        ``params.max_new_tokens``. A batch holds at most ``batch_size`` rows,
        i.e. half as many pairs. The backend's own ``steering`` is not used here.
        ``params.repetition_penalty`` applies to the contrasted logits over
        the contextual rows' tokens (prompt, padding and generated, as
        ``generate`` sees them), so at α = 0 this loop is ``generate``'s
        greedy decoding token for token.
        """
        if len(prompts) != len(context_free):
            raise ValueError(f"{len(prompts)} prompts but {len(context_free)} context-free prompts")
        if callable(method):
            contrast = method
        else:
            from conflictlab.lm.methods import ADACAD_LONG_FORM_FLOOR, as_method, contrast_logits

            method = as_method(method)
            if not method.contrastive:
                raise ValueError(f"method {method.format()} has no context-free pass; use generate")

            def contrast(with_context, without_context):  # generated text: AdaCAD's long-form floor
                return contrast_logits(method, with_context, without_context, floor=ADACAD_LONG_FORM_FLOOR)[0]

        pairs = BatchPolicy(batch_size=max(1, self.policy.batch_size // 2))
        return map_batches(
            [max(len(p), len(q)) for p, q in zip(prompts, context_free)],
            lambda batch: self._decode_contrastive(
                [prompts[i] for i in batch], [context_free[i] for i in batch], params, contrast
            ),
            pairs,
        )

    def _decode_contrastive(self, prompts, context_free, params: DecodingParams, contrast) -> list[Completion]:
        import torch

        lm = self.lm
        k = len(prompts)
        stream = (EncoderDecoderStream if lm.is_encoder_decoder else CausalStream)(
            lm, list(prompts) + list(context_free)
        )
        eos = torch.tensor(sorted(lm.eos_ids), dtype=torch.long, device=lm.device)
        done = torch.zeros(k, dtype=torch.bool, device=lm.device)
        steps = []
        penalty = None
        if params.repetition_penalty != 1.0:
            from transformers import RepetitionPenaltyLogitsProcessor

            penalty, seen = RepetitionPenaltyLogitsProcessor(params.repetition_penalty), stream.seen[:k]
        token = None
        with torch.inference_mode():
            for _ in range(params.max_new_tokens):
                logits = stream.next_logits(None if token is None else torch.cat([token, token]))
                scores = contrast(logits[:k], logits[k:])
                if penalty is not None:
                    scores = penalty(seen, scores)
                token = scores.argmax(-1).masked_fill(done, lm.pad_id)
                steps.append(token)
                if penalty is not None:
                    seen = torch.cat([seen, token[:, None]], dim=1)
                done |= torch.isin(token, eos)
                if bool(done.all()):
                    break
        return self._completions(torch.stack(steps, dim=1).tolist())

    def generate_variants(
        self, prompts: Sequence[Sequence[int]], steerings: Sequence[Sequence], params: DecodingParams
    ) -> list[list[Completion]]:
        """Completions of every prompt under each of several steering variants.

        ``steerings[v][i]``: prompt i's :class:`~conflictlab.lm.steering.Steering`
        under variant v, or None (unsteered). Returns ``[v][i]``. No variant
        touches a position before a prompt's last one (the hooks steer the last
        prompt position and later ones), so each batch is forwarded once
        without its last column, and every variant generates on a copy of that
        cache: one prefill per prompt instead of one per variant (a prefix tree
        where a batch's prompts share a prefix: :func:`conflictlab.lm.shared_prefix.shared_prefill`).
        The backend's own ``steering`` is not used here.
        """
        import copy

        import torch
        from transformers import DynamicCache

        lm = self.lm
        require_decoder_only(lm, "steered generation")

        def run(batch: list[int]) -> list[list[Completion]]:
            ids, mask = pad_batch([prompts[i] for i in batch], lm.pad_id, side="left")
            prefix = shared_prefill(
                lm, [prompts[i] for i in batch], min_shared=self.min_shared, forward_cost=self.forward_cost
            )
            if prefix is None and ids.shape[1] > 1:  # one-token prompts have no prefix to share
                head, head_mask = ids[:, :-1].to(lm.device), mask[:, :-1].to(lm.device)
                # Positions as generate() numbers them under left padding.
                positions = (head_mask.long().cumsum(-1) - 1).masked_fill(head_mask == 0, 0)
                prefix = DynamicCache(config=lm.model.config)
                with torch.inference_mode():
                    lm.model.get_decoder()(
                        input_ids=head,
                        attention_mask=head_mask,
                        position_ids=positions,
                        past_key_values=prefix,
                        use_cache=True,
                    )
            per_variant = [
                self._decode(ids, mask, params, [variant[i] for i in batch], cache=copy.deepcopy(prefix))
                for variant in steerings
            ]
            return [list(row) for row in zip(*per_variant)]

        per_prompt = self._batches_sharing_prefixes(prompts, run)
        return [[per_prompt[i][v] for i in range(len(prompts))] for v in range(len(steerings))]


def hf_backend(model_dir, settings) -> HFBackend:
    """The ``hf`` backend of :mod:`conflictlab.lm.backends` built from its
    settings (``dtype``; ``batch_size``, default 8) on the prepared folder
    ``model_dir``: :data:`conflictlab.lm.builders.BUILDERS` builds it with this,
    and so do the scripts that only ever run it (steered and method
    generation), which import it here rather than through the builders so
    that their code hash and environment do not take in vLLM."""
    from conflictlab.lm.loading import load

    return HFBackend(load(model_dir, dtype=settings.get("dtype")), batch_size=settings.get("batch_size", 8))


def generate_with_method(
    backend: Backend,
    prompts: Sequence[Sequence[int]],
    params: DecodingParams,
    method,
    *,
    context_free: Sequence[Sequence[int]] | None = None,
) -> list[Completion]:
    """Completions of ``prompts`` under a :class:`~conflictlab.lm.methods.Method`.

    CAD and AdaCAD contrast each prompt with ``context_free[i]`` (its
    version without context) on a backend that can
    (:meth:`HFBackend.generate_contrastive`; others raise ValueError, see
    :func:`conflictlab.lm.methods.check_method_backend`). Greedy decoding
    and the context-faithful prompts are plain ``backend.generate``: a
    prompting method's prompts are the benchmark's, already rewritten with
    :mod:`conflictlab.lm.methods`' templates.
    """
    from conflictlab.lm.methods import as_method, check_method_backend

    method = as_method(method)
    if not method.contrastive:
        return backend.generate(prompts, params)
    check_method_backend(method, backend)
    if context_free is None:
        raise ValueError(f"method {method.format()} needs the context-free version of every prompt")
    return backend.generate_contrastive(prompts, context_free, params, method)


class MethodBackend:
    """A backend that generates under a conflict-resolution method
    (:func:`generate_with_method`): ``generate(prompts, params)`` as any
    backend, so the sharded runner (:func:`conflictlab.lm.shards.run_sharded`)
    drives it unchanged. ``context_free`` maps a prompt's token ids (as a
    tuple) to its context-free version's, for CAD and AdaCAD; two samples
    with the same prompt have the same question, hence the same
    context-free prompt."""

    def __init__(self, backend: Backend, method, context_free: dict[tuple[int, ...], Sequence[int]] | None = None):
        from conflictlab.lm.methods import as_method, check_method_backend

        self.backend = backend
        self.method = check_method_backend(as_method(method), backend)
        self.context_free = context_free or {}
        self.name = backend.name

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        context_free = [self.context_free[tuple(p)] for p in prompts] if self.method.contrastive else None
        return generate_with_method(self.backend, prompts, params, self.method, context_free=context_free)


class OpenAIBackend:
    """Greedy completions from an OpenAI-compatible ``/v1/completions`` endpoint.

    Prompts go as token-id lists (vLLM's server and OpenAI's completions API
    accept them); ``eos_ids`` are the model's end-of-sequence ids. The
    returned token ids are the server's (``return_token_ids``, a vLLM
    extension); a server without it gets the text re-tokenised by
    ``tokenizer``. ``prompts_per_request`` prompts share one request, and
    ``endpoint.concurrency`` requests are in flight at once through an
    :class:`~conflictlab.lm.endpoint.EndpointClient` (retries, rate limits;
    answers reused from ``cache`` when given). ``client.stats`` counts them.
    """

    name = "openai"

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        eos_ids: frozenset[int],
        tokenizer=None,
        prompts_per_request: int = 64,
        cache: RequestCache | None = None,
    ):
        from conflictlab.lm.endpoint import EndpointClient

        self.endpoint = endpoint
        self.client = EndpointClient(endpoint, cache=cache)
        self.eos_ids = frozenset(eos_ids)
        self.tokenizer = tokenizer
        self.prompts_per_request = prompts_per_request

    def generate(self, prompts: Sequence[Sequence[int]], params: DecodingParams) -> list[Completion]:
        # Requests group prompts of similar length (longest first), as the
        # in-process backends batch them; the groups then go out concurrently.
        groups = [
            chunk
            for chunk, _ in batches(
                [len(p) for p in prompts], lambda chunk: None, BatchPolicy(batch_size=self.prompts_per_request)
            )
        ]
        bodies = [
            {
                "model": self.endpoint.model,
                "prompt": [list(prompts[i]) for i in group],
                "max_tokens": params.max_new_tokens,
                "temperature": 0.0,
                "seed": params.seed,
                "return_token_ids": True,
                # a vLLM extension: sent only when a config asks, since a hosted API may refuse it
                **({"repetition_penalty": params.repetition_penalty} if params.repetition_penalty != 1.0 else {}),
            }
            for group in groups
        ]
        rows = [
            f"prompt {group[0]}" if len(group) == 1 else f"{len(group)} prompts from prompt {group[0]}"
            for group in groups
        ]
        results: list = [None] * len(prompts)
        for group, response in zip(groups, self.client.post_many("/completions", bodies, rows=rows)):
            choices = sorted(response["choices"], key=lambda c: c["index"])
            if len(choices) != len(group):
                raise RuntimeError(
                    f"endpoint {self.endpoint.base_url}: {len(choices)} completions for {len(group)} prompts"
                )
            for i, choice in zip(group, choices):
                results[i] = self._completion(choice)
        return results

    def close(self) -> None:
        self.client.close()

    def _completion(self, choice: dict) -> Completion:
        ids = choice.get("token_ids")
        if ids is None:
            if self.tokenizer is None:
                raise RuntimeError(f"endpoint {self.endpoint.base_url} returns no token ids; pass a tokenizer")
            ids = self.tokenizer(choice["text"], add_special_tokens=False)["input_ids"]
        tokens, reason = strip_stop(ids, self.eos_ids)
        return Completion(tokens, choice["text"], choice.get("finish_reason") or reason)

"""Closed read-outs: next-token logits over a fixed set of answer tokens,
and the log-likelihoods of multi-token options.

:func:`choice_logits`: one forward per batch of left-padded prompts, the LM
head at the last position only; the read-out of arbitration's A/B and
ConflictBank's A–D. :func:`option_loglikelihoods`: options that share their
first tokens (CONFLICTS' category names), each scored in full from one
cached pass over the prompt. :func:`contrastive_choice_logits`: the choice
read-out under CAD or AdaCAD (:mod:`conflictlab.lm.methods`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflictlab.lm.batching import BatchPolicy, map_batches
from conflictlab.lm.loading import LoadedModel, require_decoder_only
from conflictlab.lm.shared_prefix import FedTokens, last_column_forward, shared_prefix_order


def single_token_ids(tokenizer, texts: Sequence[str]) -> list[int]:
    """The token id of each of ``texts``, each of which must encode to exactly
    one token (no special tokens), else ValueError naming it."""
    ids = []
    for text in texts:
        encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(encoded) != 1:
            raise ValueError(
                f"answer option {text!r} is {len(encoded)} tokens for {type(tokenizer).__name__} "
                f"({tokenizer.name_or_path}); a choice read-out needs exactly one"
            )
        ids.append(encoded[0])
    return ids


def _last_position_logits(lm: LoadedModel, prompts: Sequence[Sequence[int]]):
    """Next-token logits after each of ``prompts`` (one left-padded forward,
    the prompts' shared prefixes forwarded once:
    :func:`conflictlab.lm.shared_prefix.last_column_forward`), shape
    (len(prompts), vocab), on the model's device. Each row's positions
    count from its first real token, as ``generate`` numbers them, so a
    padded row reads what it reads alone (a model with absolute position
    embeddings would otherwise shift every padded row)."""
    require_decoder_only(lm, "option logits at the last prompt position")
    return last_column_forward(lm, prompts, logits_to_keep=1).logits[:, -1]


def choice_logits(
    lm: LoadedModel, prompts: Sequence[Sequence[int]], token_ids: Sequence[int], *, batch_size: int = 8
) -> np.ndarray:
    """Logits of ``token_ids`` at the position after each prompt, float64,
    shape (len(prompts), len(token_ids)). A softmax over a row equals the
    next-token distribution renormalised over those tokens. Identical
    prompts (a sensitivity baseline that repeats a main setting) are
    forwarded once."""
    import torch

    select = torch.tensor(list(token_ids), device=lm.device)
    row_of: dict[tuple[int, ...], int] = {}
    for prompt in prompts:
        row_of.setdefault(tuple(prompt), len(row_of))
    distinct = list(row_of)

    def run(batch: list[int]) -> np.ndarray:
        logits = _last_position_logits(lm, [distinct[i] for i in batch])
        return logits[:, select].float().cpu().numpy().astype(np.float64)

    policy = BatchPolicy(batch_size=batch_size)
    rows = map_batches([len(p) for p in distinct], run, policy, order=shared_prefix_order(distinct))
    logits = np.array(rows, dtype=np.float64).reshape(len(distinct), len(token_ids))
    return logits[[row_of[tuple(prompt)] for prompt in prompts]].reshape(len(prompts), len(token_ids))


def contrastive_choice_logits(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    context_free: Sequence[Sequence[int]],
    token_ids: Sequence[int],
    method,
    *,
    batch_size: int = 8,
) -> np.ndarray:
    """:func:`choice_logits` under CAD or AdaCAD (a contrastive
    :class:`~conflictlab.lm.methods.Method`): float64, shape (len(prompts),
    len(token_ids)), the contrast of each prompt's next-token logits with
    those after ``context_free[i]`` (its version without context), read at
    ``token_ids``. AdaCAD's weight is the JSD of the two full next-token
    distributions, as in generation, not of their renormalisations over the
    options. For CAD this equals
    :func:`conflictlab.lm.methods.contrast_option_logits` of the two
    :func:`choice_logits`."""
    from conflictlab.lm.methods import as_method

    method = as_method(method)
    if not method.contrastive:
        raise ValueError(f"method {method.format()} has no context-free pass; use choice_logits")
    return choice_logits_under(lm, prompts, context_free, token_ids, [method], batch_size=batch_size)[0]


def choice_logits_under(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    context_free: Sequence[Sequence[int]],
    token_ids: Sequence[int],
    methods: Sequence,
    *,
    batch_size: int = 8,
) -> list[np.ndarray]:
    """The read-out of ``prompts`` under each of ``methods`` (greedy
    decoding, CAD, AdaCAD: the methods that read the prompts as they are),
    from one pass over the prompts and one over their context-free versions
    shared by all: per method, float64 of shape (len(prompts), len(token_ids)).

    Each batch of at most ``batch_size`` pairs is two left-padded forwards,
    the prompts' and their context-free versions', so that the short
    context-free prompts are not padded to the long ones' width (in one
    batch of both, arbitration's read-out took 4x greedy's time on the
    2-core CPU instead of 2x)."""
    import torch

    from conflictlab.lm.methods import ADACAD_SHORT_ANSWER_FLOOR, as_method, contrast_logits

    methods = [as_method(m) for m in methods]
    if any(m.prompt_style is not None for m in methods):
        raise ValueError("a prompting method reads prompts of its own: use choice_logits on them")
    if len(prompts) != len(context_free):
        raise ValueError(f"{len(prompts)} prompts but {len(context_free)} context-free prompts")
    if not any(m.contrastive for m in methods):  # greedy alone: the plain read-out
        return [choice_logits(lm, prompts, token_ids, batch_size=batch_size)] * len(methods)
    select = torch.tensor(list(token_ids), device=lm.device)

    def run(batch: list[int]) -> np.ndarray:
        with_context = _last_position_logits(lm, [prompts[i] for i in batch])
        without_context = _last_position_logits(lm, [context_free[i] for i in batch])
        per_method = [
            contrast_logits(m, with_context, without_context, floor=ADACAD_SHORT_ANSWER_FLOOR)[0]
            if m.contrastive
            else with_context.float()
            for m in methods
        ]
        return (
            torch.stack([logits[:, select] for logits in per_method], dim=1).double().cpu().numpy()
        )  # (batch, methods, options)

    policy = BatchPolicy(batch_size=batch_size)
    rows = np.array(map_batches([len(p) for p in prompts], run, policy, order=shared_prefix_order(prompts)))
    rows = rows.astype(np.float64).reshape(len(prompts), len(methods), len(token_ids))
    return [rows[:, k, :] for k in range(len(methods))]


def option_loglikelihoods(
    lm: LoadedModel, prompt: Sequence[int], options: Sequence[Sequence[int]], *, fed: FedTokens | None = None
) -> np.ndarray:
    """Summed log p(option | prompt) of each multi-token option, float64,
    shape (len(options),): one pass over the prompt, whose keys and values
    every option then continues from (the read-out of labels that share
    their first tokens, such as CONFLICTS' five category names). ``fed``:
    the cache of the prompt scored before (a :class:`~conflictlab.lm.shared_prefix.FedTokens`
    without a model config, left holding this prompt), so that prompts
    scored one after another forward only what they do not share with the
    one before (CONFLICTS' Task 1 prompts share their instructions and taxonomy)."""
    import torch

    require_decoder_only(lm, "option log-likelihoods")
    if not prompt or any(not option for option in options):
        raise ValueError("option_loglikelihoods needs a non-empty prompt and non-empty options")
    # No per-layer config: every layer keeps every position, so the crop back
    # to the prompt is valid past a sliding window too (the model's masks
    # still apply the window); a sliding layer's cache cannot be cropped.
    fed = fed or FedTokens(None, across_requests=True)
    if fed.config is not None:
        raise ValueError("option_loglikelihoods crops its cache: pass a FedTokens without a model config")
    cache, keep = fed.reuse(list(prompt))
    with torch.inference_mode():
        out = lm.model(
            input_ids=torch.tensor([list(prompt)[keep:]], device=lm.device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        scores = []
        for option in options:
            total = float(first[option[0]])
            if len(option) > 1:
                rest = lm.model(
                    input_ids=torch.tensor([list(option[:-1])], device=lm.device), past_key_values=cache, use_cache=True
                )
                logprobs = torch.log_softmax(rest.logits[0].float(), dim=-1)
                total += float(logprobs[torch.arange(len(option) - 1), torch.tensor(list(option[1:]))].sum())
                cache.crop(len(prompt))
            scores.append(total)
    return np.array(scores, dtype=np.float64)

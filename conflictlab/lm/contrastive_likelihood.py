"""Log-likelihoods of given continuations under greedy reading, CAD and AdaCAD.

A multiple-choice read-out by likelihood (MemoTrap's classes) asks how probable each candidate continuation is;
under CAD or AdaCAD (:mod:`conflictlab.lm.methods`) the probability of each token is the one of the contrasted
distribution, ``softmax[(1 + α) ℓ(y_t | c, x, y<t) − α ℓ(y_t | x, y<t)]``, with both passes fed the candidate's
own earlier tokens (teacher forcing, as :func:`conflictlab.lm.likelihood.loglikelihoods` does for one pass).
AdaCAD's α_t is the Jensen-Shannon divergence of the two full next-token distributions at that position.

:func:`continuation_logprobs_under` reads every method from the same passes. Per batch of prompts and per pass
(with context, without): one left-padded forward over the prompts that keeps their keys and values and the logits
of the last position (each candidate's first token), then one forward of every candidate's remaining tokens on
its prompt's cached keys and values. A prompt is read once however many candidates it has: the candidates are a
few tokens, the prompts tens, so this halves the work of two candidates read as two full rows. On an
encoder-decoder model (FLAN-T5) a prompt is encoded once and every candidate is one decoder row from the decoder's
start token over its prompt's encoding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflictlab.lm.batching import BatchPolicy, map_batches, pad_batch
from conflictlab.lm.loading import LoadedModel
from conflictlab.lm.methods import ADACAD_SHORT_ANSWER_FLOOR, as_method, contrast_logits


def _candidate_logits(lm: LoadedModel, prompts: Sequence[Sequence[int]], candidates: Sequence[Sequence[int]], owner):
    """Next-token logits at every position of each candidate, shape (len(candidates), longest candidate, vocab),
    on the model's device: row p predicts ``candidates[p]`` after ``prompts[owner[p]]`` (position t from the
    prompt and the candidate's first t tokens). ``owner``: a long tensor of shape (len(candidates),).

    The prompts are one left-padded forward whose keys and values every candidate of the prompt continues from;
    positions count from each prompt's first real token, so a padded row reads what it reads alone. The cache has
    no per-layer config: every layer keeps every position (a sliding-window layer's mask still applies its window).
    """
    import torch
    from transformers import DynamicCache

    if lm.is_encoder_decoder:
        return _encoder_decoder_candidate_logits(lm, prompts, candidates, owner)
    ids, mask = pad_batch(prompts, lm.pad_id, side="left")
    ids, mask = ids.to(lm.device), mask.to(lm.device)
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    cache = DynamicCache()
    with torch.inference_mode():
        first = lm.model(
            input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache, logits_to_keep=1
        ).logits[:, -1]
        width = max(len(c) for c in candidates)
        logits = first[owner][:, None].expand(-1, width, -1).clone()
        if width > 1:
            owner = owner.to(lm.device)
            cache.batch_select_indices(owner)
            rest, rest_mask = pad_batch([list(c[:-1]) or [lm.pad_id] for c in candidates], lm.pad_id, side="right")
            rest_mask[[len(c) == 1 for c in candidates]] = 0  # a one-token candidate has no rest
            rest, rest_mask = rest.to(lm.device), rest_mask.to(lm.device)
            rest_positions = mask.sum(-1)[owner][:, None] + torch.arange(rest.shape[1], device=lm.device)
            logits[:, 1:] = lm.model(
                input_ids=rest,
                attention_mask=torch.cat([mask[owner], rest_mask], dim=1),
                position_ids=rest_positions,
                past_key_values=cache,
            ).logits
    return logits


def _encoder_decoder_candidate_logits(lm: LoadedModel, prompts, candidates, owner):
    """:func:`_candidate_logits` of an encoder-decoder model: the prompts encoded in one right-padded, masked
    batch; row p decodes ``[decoder start] + candidates[p][:-1]`` (right-padded, causal) over the encoding of
    ``prompts[owner[p]]``."""
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    ids, mask = pad_batch(prompts, lm.pad_id, side="right")
    ids, mask, owner = ids.to(lm.device), mask.to(lm.device), owner.to(lm.device)
    steps, steps_mask = pad_batch([[lm.decoder_start_id, *c[:-1]] for c in candidates], lm.pad_id, side="right")
    with torch.inference_mode():
        encoded = lm.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        return lm.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded[owner]),
            attention_mask=mask[owner],
            decoder_input_ids=steps.to(lm.device),
            decoder_attention_mask=steps_mask.to(lm.device),
        ).logits


def continuation_logprobs_under(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    context_free: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[Sequence[int]]],
    methods: Sequence,
    *,
    batch_size: int = 8,
    floor: float = ADACAD_SHORT_ANSWER_FLOOR,
) -> list[list[list[np.ndarray]]]:
    """Per method, per prompt i, per candidate k: float64 log p(continuations[i][k][t] | prompt, candidate[:t])
    under that method, shape (len(continuations[i][k]),).

    ``prompts[i]``: token ids with the context; ``context_free[i]``: the same without it (read only when a method
    is contrastive); ``continuations[i]``: the candidate continuations of prompt i; ``methods``:
    :class:`~conflictlab.lm.methods.Method` or their names, greedy reading, CAD or AdaCAD (a prompting method
    reads prompts of its own: ValueError); ``floor``: AdaCAD's floor on α
    (:data:`~conflictlab.lm.methods.ADACAD_SHORT_ANSWER_FLOOR` for answers of a few tokens, the authors' QA
    setting); ``batch_size``: prompts per forward. Prompts and candidates must be non-empty.
    """
    import torch

    methods = [as_method(m) for m in methods]
    if any(m.prompt_style is not None for m in methods):
        raise ValueError("a prompting method reads prompts of its own; score those prompts under greedy reading")
    if not (len(prompts) == len(context_free) == len(continuations)):
        raise ValueError(
            f"{len(prompts)} prompts, {len(context_free)} context-free prompts, {len(continuations)} candidate lists"
        )
    contrastive = any(m.contrastive for m in methods)
    for i, (prompt, free, candidates) in enumerate(zip(prompts, context_free, continuations)):
        if not prompt or (contrastive and not free) or not candidates or not all(candidates):
            raise ValueError(f"prompt {i}: an empty prompt, context-free prompt or candidate")

    def run(batch: list[int]) -> list[np.ndarray]:
        candidates = [c for i in batch for c in continuations[i]]
        owner = torch.tensor([j for j, i in enumerate(batch) for _ in continuations[i]])
        with_context = _candidate_logits(lm, [prompts[i] for i in batch], candidates, owner)
        if contrastive:
            without_context = _candidate_logits(lm, [context_free[i] for i in batch], candidates, owner)
        scored = []  # per candidate: (methods, its length)
        for p, candidate in enumerate(candidates):
            n, targets = len(candidate), torch.tensor(list(candidate), device=with_context.device)[:, None]
            rows = []
            for method in methods:
                logits = with_context[p, :n].float()
                if method.contrastive:
                    logits = contrast_logits(method, logits, without_context[p, :n], floor=floor)[0]
                rows.append(torch.log_softmax(logits.double(), dim=-1).gather(1, targets)[:, 0])
            scored.append(torch.stack(rows).cpu().numpy())
        out, start = [], 0
        for i in batch:
            out.append(scored[start : start + len(continuations[i])])
            start += len(continuations[i])
        return out

    per_prompt = map_batches([len(p) for p in prompts], run, BatchPolicy(batch_size=batch_size))
    return [[[candidate[k] for candidate in item] for item in per_prompt] for k in range(len(methods))]

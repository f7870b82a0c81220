"""Log-likelihoods of continuations under a causal LM.

:func:`loglikelihoods` is the general operation (lm-evaluation-harness's
``loglikelihood``): for each (context, continuation) pair of token ids, the
log-probability of every continuation token. Rows are ``context +
continuation[:-1]``, right-padded (causal attention never looks at trailing
padding, so no mask is needed) and cut into batches by
:func:`conflictlab.lm.batching.batches`. The decoder returns hidden states and
the LM head runs only at the positions that predict continuation tokens, in
tiles of rows × vocabulary (:func:`token_logprobs`), so no (positions ×
vocabulary) logits tensor is ever allocated. The prefix-sharing Shapley scorer
(:mod:`conflictlab.lm.subsets`) is the fast path for many contexts that share
pieces; it uses the same head.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflictlab.lm.batching import BatchPolicy, map_batches, pad_batch
from conflictlab.lm.loading import LoadedModel, require_decoder_only


def loglikelihoods(
    lm: LoadedModel,
    contexts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    *,
    policy: BatchPolicy | None = None,
) -> list[np.ndarray]:
    """Per pair, float32 log p(continuation[t] | context, continuation[:t]), shape (len(continuation),).

    Contexts must be non-empty (the first continuation token needs a
    position to be predicted from). ``policy`` defaults to 4,096 padded
    tokens per forward.
    """
    import torch

    require_decoder_only(lm, "loglikelihoods (context and continuation as one decoder row)")
    if len(contexts) != len(continuations):
        raise ValueError(f"{len(contexts)} contexts but {len(continuations)} continuations")
    for context, continuation in zip(contexts, continuations):
        if not context or not continuation:
            raise ValueError("loglikelihoods needs a non-empty context and continuation for every pair")
    rows = [list(c) + list(r)[:-1] for c, r in zip(contexts, continuations)]
    policy = policy or BatchPolicy(token_budget=4096)

    def run(batch: list[int]) -> list[np.ndarray]:
        ids, _ = pad_batch([rows[i] for i in batch], int(continuations[batch[0]][-1]), side="right")
        with torch.inference_mode():
            hidden = lm.model.get_decoder()(input_ids=ids.to(lm.device)).last_hidden_state
        lengths = [len(continuations[i]) for i in batch]
        row_index = torch.tensor([j for j, n in enumerate(lengths) for _ in range(n)], device=hidden.device)
        col_index = torch.tensor(
            [len(contexts[i]) - 1 + t for i, n in zip(batch, lengths) for t in range(n)], device=hidden.device
        )
        targets = torch.tensor([tok for i in batch for tok in continuations[i]], dtype=torch.long, device=hidden.device)
        logprobs = token_logprobs(lm.model, hidden[row_index, col_index], targets).cpu().numpy()
        return np.split(logprobs, np.cumsum(lengths)[:-1])

    return map_batches([len(r) for r in rows], run, policy)


def response_means(model, hidden, rows: Sequence[int], starts: Sequence[int], response: Sequence[int]) -> list[float]:
    """Mean log-probability of ``response`` in each of ``rows``.

    ``hidden``: final hidden states, shape (batch, width, d); in row
    ``rows[k]`` the response's first token sits at position ``starts[k]``,
    so positions ``starts[k] - 1 .. starts[k] + len(response) - 2`` predict it.
    """
    import torch

    if not rows:
        return []
    n = len(response)
    offsets = torch.arange(n, device=hidden.device)
    row_index = torch.tensor(list(rows), device=hidden.device).repeat_interleave(n)
    col_index = (torch.tensor(list(starts), device=hidden.device)[:, None] - 1 + offsets).reshape(-1)
    targets = torch.tensor(list(response), dtype=torch.long, device=hidden.device).repeat(len(rows))
    logprobs = token_logprobs(model, hidden[row_index, col_index], targets)
    return logprobs.reshape(len(rows), n).mean(dim=1).tolist()


def token_logprobs(model, hidden, targets, *, row_tile: int | None = None, vocab_tile: int | None = None):
    """log p(targets[k] | hidden[k]) under ``model``'s LM head, float32, shape (m,).

    ``hidden``: final hidden states, shape (m, d); ``targets``: token ids,
    shape (m,); both are moved to the head's device (on a split model the
    final norm and a head tied to the input embedding can sit on different
    GPUs), where the result is. The logits are formed tile by tile (``row_tile`` ×
    ``vocab_tile``; defaults 512 × 2048 on CPU, 4096 × 65536 on GPU; a head
    packed by :func:`conflictlab.lm.packed_linear.pack_linear_layers` brings its
    own vocabulary blocks) and reduced by log-sum-exp per tile, then across
    tiles. The head's final logit soft-capping (Gemma 2/3) is applied; other
    logit rescalings raise ValueError.
    """
    import torch

    from conflictlab.lm.packed_linear import PackedLinear

    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    for name in ("logit_scale", "logits_scaling"):
        if getattr(config, name, None) not in (None, 1, 1.0):
            raise ValueError(
                f"token_logprobs: the scorer's config sets {name}={getattr(config, name)!r}; only "
                "final_logit_softcapping is applied"
            )
    cap = getattr(config, "final_logit_softcapping", None)
    head = model.get_output_embeddings()
    if not isinstance(head, PackedLinear):
        if head.weight.device.type == "meta":
            raise ValueError(
                "token_logprobs: the LM head is offloaded (its weight is on the meta device); keep it on a device"
            )
        hidden, targets = hidden.to(head.weight.device), targets.to(head.weight.device)
    on_gpu = hidden.device.type == "cuda"
    row_tile = row_tile or (4096 if on_gpu else 512)
    vocab_tile = vocab_tile or (65536 if on_gpu else 2048)

    def logit_tiles(block):
        """(first vocabulary id, logits) per vocabulary tile of ``block``."""
        if isinstance(head, PackedLinear):
            yield from head.block_outputs(block)
            return
        weight, bias = head.weight, head.bias
        for v in range(0, weight.shape[0], vocab_tile):
            yield (
                v,
                torch.nn.functional.linear(
                    block, weight[v : v + vocab_tile], None if bias is None else bias[v : v + vocab_tile]
                ),
            )

    out = torch.empty(hidden.shape[0], device=hidden.device)
    with torch.inference_mode():
        for r in range(0, hidden.shape[0], row_tile):
            block, wanted = hidden[r : r + row_tile], targets[r : r + row_tile]
            parts, picked = [], torch.zeros(block.shape[0], device=hidden.device)
            for v, logits in logit_tiles(block):
                logits = logits.float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
                parts.append(torch.logsumexp(logits, dim=-1))
                inside = (wanted >= v) & (wanted < v + logits.shape[1])
                column = (wanted - v).clamp(0, logits.shape[1] - 1)
                picked = torch.where(inside, logits.gather(1, column[:, None]).squeeze(1), picked)
            out[r : r + row_tile] = picked - torch.logsumexp(torch.stack(parts, dim=1), dim=-1)
    return out

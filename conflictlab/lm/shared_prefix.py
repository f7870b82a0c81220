"""Prompts that share a prefix: batched together, the prefix forwarded once.

A batch of prompts often repeats long runs of tokens: the four CONFLICTS
Task 2 strategies of one query share its instructions and search results
and differ only in their last lines; a judge's prompts share its
instructions. :func:`shared_prefix_order` orders prompts so that those
sharing at least ``min_shared`` tokens are neighbours (and so land in one
batch of :func:`conflictlab.lm.batching.batches`), and
:func:`shared_prefill` forwards a batch's prompts as a prefix tree: each
shared run once (batch of one, unpadded), each row's own tail on top of a
copy of its parent's keys and values, then all rows' keys and values laid
out as a left-padded batch (zeros under the padding, which the attention
mask hides), positions as ``generate`` numbers them under left padding.
``generate`` then continues that cache from each prompt's last token, as
it does for :meth:`conflictlab.lm.generation.HFBackend.generate_variants`;
a read-out at the last prompt position (:func:`last_column_forward`: choice
logits) forwards only that column on top of it. Not the last-token states of
:mod:`conflictlab.lm.hidden`: ContextConflict's pair prompts share runs with
long distinct tails, where the tree saved nothing measurable (activations job
70.0 -> 71.3 CPU s, AMD EPYC Zen 3).
Greedy outputs and read-outs equal the padded batch's up to float rounding
(matrix products of other shapes).
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_SHARED_TOKENS = 64  # shorter shared runs (a chat template's system prompt) are not worth a tree's extra forwards
# What a forward costs beyond its tokens, in tokens (mostly reading every weight once): SmolLM2 on one thread of
# the AMD EPYC Zen 3, 17 by a linear fit over forwards of 4-256 tokens, 23 for a 4-token forward alone
# (benchmarks/forward_cost.py). A prefix tree of many short runs costs more than the padded batch it replaces.
FORWARD_COST_TOKENS = 20


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every sequence has in common."""
    length = min(len(s) for s in sequences)
    for i in range(length):
        if len({s[i] for s in sequences}) > 1:
            return i
    return length


def has_sliding_window(config) -> bool:
    """Whether a model has sliding-window attention layers (their cache cannot hold a whole prefix)."""
    text_config = getattr(config, "text_config", None) or config
    layer_types = getattr(text_config, "layer_types", None)
    if layer_types is not None:
        return any(t != "full_attention" for t in layer_types)
    return bool(getattr(text_config, "sliding_window", None))


def window_drops(config, length: int) -> bool:
    """Whether a cache of ``length`` positions may lose some on a sliding-window
    layer of the model (a layer keeps its window less one position; the test
    leaves a position to spare), or the model has layers that are neither full
    nor sliding attention; a model without such layers keeps every position."""
    if not has_sliding_window(config):
        return False
    text_config = getattr(config, "text_config", None) or config
    layer_types = getattr(text_config, "layer_types", None) or ()
    if any(t not in ("full_attention", "sliding_attention") for t in layer_types):
        return True  # layers without keys and values to lay out (linear attention, state spaces)
    window = getattr(text_config, "sliding_window", None)
    return window is None or length >= window - 1


class FedTokens:
    """The token ids whose keys and values a DynamicCache holds, and how many
    of a new context's tokens it can keep: contexts fed one after another
    (in token order, so that neighbours share the most) forward only what
    they do not share with the one before. ``across_requests=False`` starts
    a fresh cache for every request (models with sliding-window layers:
    their cache cannot be cropped back once past the window). ``model_config``
    None: a cache without per-layer types, every layer keeping every
    position, which can be cropped on any model (the model's masks still
    apply its window)."""

    def __init__(self, model_config, *, across_requests: bool):
        self.config = model_config
        self.across_requests = across_requests
        self.fed: list[int] = []
        self.cache = None
        self.tokens_fed = 0

    def new_request(self) -> None:
        if not self.across_requests:
            self.fed, self.cache = [], None

    def reuse(self, context: list[int]):
        """(cache holding a prefix of ``context``, its length); at least one
        token of ``context`` is left to feed, whose logits are read."""
        from transformers import DynamicCache

        keep = common_prefix_length([self.fed, context]) if self.fed and self.cache is not None else 0
        keep = min(keep, len(context) - 1)
        if keep == 0:
            self.cache = DynamicCache(config=self.config)  # sliding-window layers where a config has them
        elif keep < len(self.fed):
            self.cache.crop(keep - len(self.fed))  # negative: drop the tokens after the shared prefix
        self.fed = context
        self.tokens_fed += len(context) - keep
        return self.cache, keep


def shared_prefix_order(prompts: Sequence[Sequence[int]], *, min_shared: int = MIN_SHARED_TOKENS) -> list[int]:
    """Indices of ``prompts``: in token order, cut into runs whose neighbours
    share at least ``min_shared`` leading tokens; runs longest first (a
    prompt sharing with none is a run of its own, so those keep the order
    :func:`~conflictlab.lm.batching.batches` gives them), each run in token
    order, so that prompts sharing a prefix sit in one batch."""
    ordered = sorted(range(len(prompts)), key=lambda i: list(prompts[i]))
    runs: list[list[int]] = []
    for i in ordered:
        if runs and common_prefix_length([prompts[runs[-1][-1]], prompts[i]]) >= min_shared:
            runs[-1].append(i)
        else:
            runs.append([i])
    runs.sort(key=lambda run: (-max(len(prompts[i]) for i in run), min(run)))  # ties in input order, as batches()
    return [i for run in runs for i in run]


def shared_tokens(rows: Sequence[Sequence[int]]) -> int:
    """Tokens a prefix tree of ``rows`` forwards fewer than the rows one by one
    (each row's own tokens less those it shares with its neighbour in token order)."""
    ordered = sorted(list(r) for r in rows)
    return sum(common_prefix_length([a, b]) for a, b in zip(ordered, ordered[1:]))


def prefix_tree(rows: Sequence[Sequence[int]]) -> tuple[list[tuple[int, int, int, int]], list[int]]:
    """The runs a prefix tree of ``rows`` forwards, parents before children:
    ``(row, start, end, parent)`` per node, the tokens ``rows[row][start:end]``
    that every row below the node shares, on top of node ``parent`` (-1: the
    root); and per row the node it ends at (-1: an empty row)."""
    nodes: list[tuple[int, int, int, int]] = []
    ends_at = [-1] * len(rows)
    stack = [(list(range(len(rows))), 0, -1)]
    while stack:
        members, start, parent = stack.pop()
        end = common_prefix_length([rows[i] for i in members])
        if end > start:
            nodes.append((members[0], start, end, parent))
            parent = len(nodes) - 1
        children: dict[int, list[int]] = {}
        for i in members:
            if len(rows[i]) == end:
                ends_at[i] = parent
            else:
                children.setdefault(rows[i][end], []).append(i)
        stack.extend((child, end, parent) for child in children.values())
    return nodes, ends_at


def prefix_tree_pays(rows: Sequence[Sequence[int]], *, min_shared: int, forward_cost: int) -> bool:
    """Whether forwarding ``rows`` as a prefix tree (one forward per node,
    unpadded) costs less than one left-padded forward of them all: the
    tokens the tree leaves out (padding and shared runs) against
    ``forward_cost`` token-equivalents for each forward it adds (one per
    node: the rows' last tokens then take a forward of their own, which the
    padded batch folds into its one); and the rows share at least
    ``min_shared`` tokens."""
    if shared_tokens(rows) < min_shared:
        return False
    nodes, _ = prefix_tree(rows)
    padded = len(rows) * max(len(r) for r in rows)
    in_tree = sum(end - start for _, start, end, _ in nodes)
    return padded - in_tree > len(nodes) * forward_cost


def shared_prefill(
    lm, rows: Sequence[Sequence[int]], *, min_shared: int = MIN_SHARED_TOKENS, forward_cost: int = FORWARD_COST_TOKENS
):
    """A DynamicCache holding every row but its last token, left-padded to
    the longest row less one token, forwarded as a prefix tree; None where
    the padded batch costs no more (:func:`prefix_tree_pays`), where a
    sliding-window layer would drop positions of the longest row
    (:func:`window_drops`: rows within the window leave such a layer the
    whole prefix), or when no row has more than one token."""
    import torch
    from transformers import DynamicCache

    config = lm.model.config
    heads = [list(r)[:-1] for r in rows]  # generate() feeds each row's last token itself
    width = max(len(h) for h in heads)
    if (
        width == 0
        or window_drops(config, width + 1)
        or not prefix_tree_pays(heads, min_shared=min_shared, forward_cost=forward_cost)
    ):
        return None
    decoder = lm.model.get_decoder()

    def forward(tokens: list[int], start: int, past):
        """Per layer (keys, values) of ``past`` (a prefix's, or None) extended by ``tokens`` at positions
        from ``start``."""
        cache = DynamicCache(config=config)
        for layer, (keys, values) in enumerate(past or ()):
            cache.update(keys, values, layer)
        end = start + len(tokens)
        decoder(
            input_ids=torch.tensor([tokens], dtype=torch.long, device=lm.device),
            attention_mask=torch.ones((1, end), dtype=torch.long, device=lm.device),
            position_ids=torch.arange(start, end, device=lm.device)[None],
            past_key_values=cache,
            use_cache=True,
        )
        return [(layer.keys, layer.values) for layer in cache.layers]

    # Each node's run on top of its parent's keys and values; a row's are those of the node it ends at.
    with torch.inference_mode():
        nodes, ends_at = prefix_tree(heads)
        states: list = []
        for row, start, end, parent in nodes:
            states.append(forward(heads[row][start:end], start, states[parent] if parent >= 0 else None))
        leaves = [states[node] if node >= 0 else None for node in ends_at]
        cache = DynamicCache(config=config)
        for layer, (keys, values) in enumerate(next(leaf for leaf in leaves if leaf is not None)):
            shape = (len(heads), keys.shape[1], width, keys.shape[3])
            padded_keys, padded_values = keys.new_zeros(shape), values.new_zeros(shape)
            for row, (head, leaf) in enumerate(zip(heads, leaves)):
                if head:
                    padded_keys[row, :, width - len(head) :] = leaf[layer][0][0]
                    padded_values[row, :, width - len(head) :] = leaf[layer][1][0]
            cache.update(padded_keys, padded_values, layer)
    return cache


def last_column_forward(
    lm,
    rows: Sequence[Sequence[int]],
    *,
    min_shared: int = MIN_SHARED_TOKENS,
    forward_cost: int = FORWARD_COST_TOKENS,
    **forward_kwargs,
):
    """``lm.model``'s output for ``rows`` left-padded into one batch, whose last
    position reads each row's last token: the padded batch forwarded whole, or,
    where a prefix tree costs less (:func:`prefix_tree_pays`), only its last column on
    top of :func:`shared_prefill`'s cache (so the output has one position:
    index it at -1 either way). Positions count from each row's first real
    token, as ``generate`` numbers them. ``forward_kwargs`` go to the model
    (``logits_to_keep=1``: the LM head at the last position only). Runs under
    ``torch.inference_mode``."""
    import torch

    from conflictlab.lm.batching import pad_batch

    ids, mask = pad_batch(rows, lm.pad_id, side="left")
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    cache = shared_prefill(lm, rows, min_shared=min_shared, forward_cost=forward_cost)
    if cache is not None:  # every position but the last already in the cache
        ids, positions = ids[:, -1:], positions[:, -1:]
    with torch.inference_mode():
        return lm.model(
            input_ids=ids.to(lm.device),
            attention_mask=mask.to(lm.device),
            position_ids=positions.to(lm.device),
            past_key_values=cache,
            **forward_kwargs,
        )

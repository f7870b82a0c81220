"""Coalition values of many games per forward: packed rows, tree masks, a KV store.

The walk of :class:`conflictlab.lm.subsets.SubsetScorer` forwards one trie
node's children at a time, per game: forwards of a few rows, which leave a
GPU idle between kernel launches. This path forwards the tries of many games
level by level instead, every node of one depth (across games) in the same
forwards, so a forward holds as many tokens as the budget allows.

A *unit* is one trie node S of one job (a set of games that differ only in
their response, as in ``values_shared``): its new piece (the prefix for the
root) followed by one tail ``suffix + response[:-1]`` per game when S is
wanted. Its *context* is the KV of ``prefix + E_parent``, kept in a store
(per layer, shape (kv_heads, stored tokens, head_dim)) by the unit that
forwarded each piece. Units are packed one after another into rows of at
most ``row_width`` new tokens and as many context tokens; siblings in a row
share one copy of their parent's context. A row is one batch entry: its contexts
are gathered from the store as the cache's past, its new tokens are the
input, and a boolean mask (batch, 1, new, past + new) lets each token see its
unit's context, the unit's piece causally, and its own tail causally:
block-diagonal causal attention over variable-length sequences, with
position ids that restart per unit at its context length. Only the end of a
row is padding (rows are filled to about the same width and sorted by
length); a padding query sees itself alone, so it stays finite. Sliding-window
layers (Gemma) get the same mask cut to the window in positions.

Every piece is forwarded once per trie node and every tail once per wanted
coalition, as in the walk; values equal :func:`conflictlab.lm.subsets.reference_values`
up to float rounding. Games are taken in groups whose stored pieces fit
``kv_budget`` tokens (the store's memory), longest first.

The mask is dense, so attention costs rows x new x (contexts + new) whatever
a row holds: wider rows mean fewer, larger forwards (what a GPU needs) and
more masked-out attention (what a CPU pays for); ``row_width`` trades one
for the other (:data:`conflictlab.lm.subsets.ROW_WIDTH`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from conflictlab.lm.batching import BatchPolicy, batches
from conflictlab.lm.games import Game, ScoreStats
from conflictlab.lm.likelihood import token_logprobs


class Scorer(Protocol):
    """What the packed path reads of the :class:`conflictlab.lm.subsets.SubsetScorer`
    that calls it (named by its attributes, so that this module needs nothing of
    the walk's module, which imports this one)."""

    model: object
    device: str
    policy: BatchPolicy
    stats: ScoreStats


# Rows' new and context widths are rounded up to these, CPU then GPU: the
# memory-efficient SDPA kernel wants a mask whose rows are aligned, and an
# unaligned one may fall back to the kernel that forms every score.
ALIGN = {False: 1, True: 8}


@dataclass
class _Unit:
    job: int
    node: int  # the coalition mask S
    parent: int | None  # S without its highest piece; None for the root
    piece: list[int]  # the prefix for the root, else the piece S adds
    start: int  # position of the piece's first token (its context's length)
    tails: list[tuple[int, list[int]]]  # (game of the job, suffix + response[:-1])
    store_at: int | None  # offset of the piece's KV in the store; None: no child needs it

    @property
    def new(self) -> int:
        return len(self.piece) + sum(len(t) for _, t in self.tails)


@dataclass
class _Row:
    units: list[_Unit] = field(default_factory=list)
    contexts: dict = field(default_factory=dict)  # (job, parent) -> slot number
    past: int = 0
    new: int = 0


@dataclass
class _Job:
    games: Sequence[Game]
    wanted: set[int]
    visit: set[int]
    parents: set[int]  # nodes whose piece KV a child needs

    @property
    def head(self) -> Game:
        return self.games[0]

    def stored_tokens(self) -> int:
        return sum(len(self.piece(m)) for m in self.parents)

    def new_tokens(self) -> int:
        tail = len(self.head.suffix) + sum(len(g.response) - 1 for g in self.games)
        return sum(len(self.piece(m)) for m in self.visit | {0}) + tail * len(self.wanted)

    def piece(self, mask: int) -> list[int]:
        if not mask:
            return self.head.prefix
        return self.head.piece(mask.bit_length() - 1, bin(mask).count("1"))


def make_job(games: Sequence[Game], masks, walk_plan) -> _Job:
    head = games[0]
    if any((g.prefix, g.pieces, g.suffix) != (head.prefix, head.pieces, head.suffix) for g in games):
        raise ValueError("values_shared: the games differ in more than their response")
    if any(not g.response for g in games):
        raise ValueError("cannot score an empty response")
    if not head.prefix:
        raise ValueError("the packed scorer needs a non-empty prefix (the first response token is predicted from it)")
    wanted, visit = walk_plan(head.n, masks)
    return _Job(games, wanted, visit, {_parent(m) for m in visit})


def _parent(mask: int) -> int:
    """The trie parent of a non-empty coalition: without its highest piece."""
    return mask & ~(1 << (mask.bit_length() - 1))


class PackedRunner:
    """One run of the packed path for :meth:`SubsetScorer.score` (see the module docstring)."""

    def __init__(self, scorer: Scorer, row_width: int, kv_budget: int):
        import torch

        self.scorer, self.model, self.torch = scorer, scorer.model, torch
        self.row_width, self.kv_budget = row_width, kv_budget
        config = (
            self.model.config.get_text_config() if hasattr(self.model.config, "get_text_config") else self.model.config
        )
        self.layer_types = list(getattr(config, "layer_types", None) or [])
        self.window = getattr(config, "sliding_window", None)
        self.eager = getattr(config, "_attn_implementation", "sdpa") == "eager"

    def run(self, jobs: list[_Job]) -> list[list[dict[int, float]]]:
        results = [[{} for _ in job.games] for job in jobs]
        order = sorted(range(len(jobs)), key=lambda j: -jobs[j].new_tokens())
        group, stored = [], 0
        for j in order:
            size = jobs[j].stored_tokens()
            if group and stored + size > self.kv_budget:
                self._run_group(jobs, group, results)
                group, stored = [], 0
            group.append(j)
            stored += size
        if group:
            self._run_group(jobs, group, results)
        return [[{m: r[m] for m in sorted(job.wanted)} for r in res] for job, res in zip(jobs, results)]

    # -- one group of games: levels of units --------------------------------
    def _run_group(self, jobs, group, results) -> None:
        offsets, chains, total = {}, {}, 0
        for j in group:
            for m in sorted(jobs[j].parents, key=lambda m: (bin(m).count("1"), m)):
                offsets[j, m] = total
                total += len(jobs[j].piece(m))
        self.store: list = []  # per layer (keys, values), allocated by the first forward that stores
        self.total = total
        depth = 0
        while True:
            units = []
            for j in group:
                job = jobs[j]
                # siblings next to each other, so that a row holds their parent's context once
                nodes = (
                    [0]
                    if depth == 0
                    else sorted((m for m in job.visit if bin(m).count("1") == depth), key=lambda m: (_parent(m), m))
                )
                for m in nodes:
                    parent = None if m == 0 else _parent(m)
                    start = 0 if parent is None else len(chains[j, parent])
                    tails = (
                        [(g, job.head.suffix + game.response[:-1]) for g, game in enumerate(job.games)]
                        if m in job.wanted
                        else []
                    )
                    units.append(_Unit(j, m, parent, job.piece(m), start, tails, offsets.get((j, m))))
            if not units:
                break
            for u in units:
                if u.store_at is not None:
                    before = chains[u.job, u.parent] if u.parent is not None else np.zeros(0, dtype=np.int64)
                    chains[u.job, u.node] = np.concatenate([before, np.arange(u.store_at, u.store_at + len(u.piece))])
            rows = self._pack(units, chains)

            def run(idx, rows=rows):
                return self._forward([rows[i] for i in idx], jobs, chains, results)

            for _ in batches([r.new for r in rows], run, self.scorer.policy):
                pass
            depth += 1
        self.store = []

    def _pack(self, units: list[_Unit], chains) -> list[_Row]:
        """Units in (job, parent) order, next-fit into rows of at most
        ``row_width`` new tokens and as many context tokens (or one unit's).

        New tokens and contexts are bounded apart: a row's new tokens are
        padded up to its batch's widest (linear-layer work), while its
        contexts cost attention only."""
        width = max([self.row_width] + [u.new for u in units])
        past_width = max([self.row_width] + [u.start for u in units])
        rows, row = [], _Row()
        for u in units:
            key = (u.job, u.parent)
            context = u.start if u.parent is not None and key not in row.contexts else 0
            if row.units and (row.new + u.new > width or row.past + context > past_width):
                rows.append(row)
                row = _Row()
            if u.parent is not None and key not in row.contexts:
                row.contexts[key] = len(row.contexts)
                row.past += u.start
            row.units.append(u)
            row.new += u.new
        rows.append(row)
        return sorted(rows, key=lambda r: -r.new)

    # -- one forward over rows ---------------------------------------------
    def _forward(self, rows: list[_Row], jobs, chains, results) -> None:
        torch = self.torch
        scorer = self.scorer
        align = ALIGN[torch.device(scorer.device).type == "cuda"]
        n_rows, width = len(rows), -(-max(r.new for r in rows) // align) * align
        past = -(-max(r.past for r in rows) // align) * align
        ids = np.zeros((n_rows, width), dtype=np.int64)
        pos = np.zeros((n_rows, width), dtype=np.int64)
        unit_of = np.full((n_rows, width), -1, dtype=np.int64)  # row-local unit number; -1 padding
        seg = np.zeros((n_rows, width), dtype=np.int64)  # 0 piece, 1 + g the tail of game g
        slot_of = np.full((n_rows, width), -2, dtype=np.int64)  # the unit's context slot; -2 none
        past_slot = np.full((n_rows, past), -1, dtype=np.int64)
        past_pos = np.zeros((n_rows, past), dtype=np.int64)
        gather = np.zeros((n_rows, past), dtype=np.int64)
        store_rows, store_cols, store_dest = [], [], []
        pred_rows, pred_cols, targets, tail_of, tails = [], [], [], [], []
        for r, row in enumerate(rows):
            for (j, parent), slot in row.contexts.items():
                chain = chains[j, parent]
                at = sum(len(chains[k]) for k, s in row.contexts.items() if s < slot)
                past_slot[r, at : at + len(chain)] = slot
                past_pos[r, at : at + len(chain)] = np.arange(len(chain))
                gather[r, at : at + len(chain)] = chain
            col = 0
            for k, u in enumerate(row.units):
                slot = row.contexts.get((u.job, u.parent), -2)
                lp = len(u.piece)
                ids[r, col : col + lp] = u.piece
                pos[r, col : col + lp] = np.arange(u.start, u.start + lp)
                unit_of[r, col : col + u.new] = k
                slot_of[r, col : col + u.new] = slot
                if u.store_at is not None:
                    store_rows += [r] * lp
                    store_cols += range(col, col + lp)
                    store_dest += range(u.store_at, u.store_at + lp)
                piece_end = col + lp  # the piece's last token sits at piece_end - 1
                col = piece_end
                for g, tail in u.tails:
                    response = jobs[u.job].games[g].response
                    ids[r, col : col + len(tail)] = tail
                    pos[r, col : col + len(tail)] = np.arange(u.start + lp, u.start + lp + len(tail))
                    seg[r, col : col + len(tail)] = 1 + g
                    first = len(jobs[u.job].head.suffix) - 1  # tail index predicting response[0]
                    for t in range(len(response)):
                        pred_cols.append(col + first + t if first + t >= 0 else piece_end - 1)
                    pred_rows += [r] * len(response)
                    targets += response
                    tail_of += [len(tails)] * len(response)
                    tails.append((u.job, g, u.node))
                    col += len(tail)
        device = scorer.device
        mask = self._mask(*(torch.from_numpy(a).to(device) for a in (pos, unit_of, seg, slot_of, past_slot, past_pos)))

        from transformers import DynamicCache

        cache = DynamicCache()
        if past:
            index = torch.from_numpy(gather).to(device)
            for i, (keys, values) in enumerate(self.store):
                cache.update(
                    keys[:, index.to(keys.device)].transpose(0, 1), values[:, index.to(keys.device)].transpose(0, 1), i
                )
        with torch.inference_mode():
            out = self.model.get_decoder()(
                input_ids=torch.from_numpy(ids).to(device),
                position_ids=torch.from_numpy(pos).to(device),
                attention_mask=mask,
                past_key_values=cache,
                use_cache=True,
            )
        cache = out.past_key_values
        if store_dest:
            self._store(cache, past, store_rows, store_cols, store_dest)
        real = sum(r.new for r in rows)
        scorer.stats.forwards += 1
        scorer.stats.tokens_forwarded += real
        scorer.stats.tokens_padded += n_rows * width - real
        scorer.stats.head_positions += len(targets)
        if not tails:
            return
        hidden = out.last_hidden_state
        h = hidden[torch.tensor(pred_rows, device=hidden.device), torch.tensor(pred_cols, device=hidden.device)]
        logprobs = token_logprobs(self.model, h, torch.tensor(targets, dtype=torch.long, device=hidden.device))
        index = torch.tensor(tail_of, device=logprobs.device)
        sums = torch.zeros(len(tails), dtype=torch.float64, device=logprobs.device).index_add_(
            0, index, logprobs.double()
        )
        counts = torch.bincount(index, minlength=len(tails)).double()
        for (j, g, node), value in zip(tails, (sums / counts).tolist()):
            results[j][g][node] = value

    def _mask(self, pos, unit_of, seg, slot_of, past_slot, past_pos):
        """Boolean (rows, 1, new, past + new) mask; a dict per layer type where layers differ."""
        torch = self.torch
        width = pos.shape[1]
        q = torch.arange(width, device=pos.device)
        real = unit_of >= 0
        sees_past = (slot_of[:, :, None] == past_slot[:, None, :]) & real[:, :, None]
        same_unit = (unit_of[:, :, None] == unit_of[:, None, :]) & real[:, :, None]
        causal = q[None, :] <= q[:, None]
        sees_new = same_unit & causal & ((seg[:, None, :] == 0) | (seg[:, None, :] == seg[:, :, None]))
        sees_new |= torch.eye(width, dtype=torch.bool, device=pos.device) & ~real[:, :, None]  # padding sees itself
        full = torch.cat([sees_past, sees_new], dim=2)[:, None]
        masks = {"full_attention": full}
        if self.window and any(t == "sliding_attention" for t in self.layer_types):
            key_pos = torch.cat([past_pos, pos], dim=1)
            near = (pos[:, :, None] - key_pos[:, None, :]) < self.window
            masks["sliding_attention"] = full & near[:, None]
        if self.eager:
            dtype = next(self.model.parameters()).dtype
            masks = {
                k: torch.zeros(m.shape, dtype=dtype, device=m.device).masked_fill(~m, torch.finfo(dtype).min)
                for k, m in masks.items()
            }
        return masks if len(masks) > 1 else masks["full_attention"]

    def _store(self, cache, past: int, rows, cols, dest) -> None:
        torch = self.torch
        for i, layer in enumerate(cache.layers):
            keys, values = layer.keys[:, :, past:], layer.values[:, :, past:]
            if len(self.store) <= i:
                shape = (keys.shape[1], self.total, keys.shape[3])
                self.store.append(
                    (keys.new_empty(shape), values.new_empty((values.shape[1], self.total, values.shape[3])))
                )
            r = torch.tensor(rows, device=keys.device)
            c = torch.tensor(cols, device=keys.device)
            d = torch.tensor(dest, device=keys.device)
            store_keys, store_values = self.store[i]
            store_keys[:, d] = keys[r, :, c].transpose(0, 1)
            store_values[:, d] = values[r, :, c].transpose(0, 1)

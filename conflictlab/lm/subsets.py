"""Coalition values v(S) for Shapley attribution, batched and prefix-sharing.

A game is one response R to a context made of a prefix, any subset S of n
pieces, and a suffix, as token segments (:class:`Game`); how a benchmark
renders them is its own (ContextConflict: :mod:`conflictlab.contextconflict.scoring`).
The value of S is the length-normalised log-likelihood of R:

    v(S) = (1/|R|) Σ_t log p(r_t | r_<t, prefix, E_S, suffix)

:class:`SubsetScorer` walks the subsets depth-first in piece order. The
first forward is the empty set's full row (prefix, suffix, response); its
cache, cut back to the prefix, is the root. A node S holds the KV cache of
``prefix + E_S``; all its children S ∪ {i} (i > max S) are scored in one
batched forward of ``piece_i + suffix + response`` rows on top of that shared
cache, right-padded (causal attention never looks at the padding), and each
child's cache is the row's cache cropped after its piece. So each piece
segment is forwarded once per trie node, never re-forwarded for every
superset. Rows stop at the response's second-to-last token (the last one
predicts nothing); the LM head runs only at the positions that predict
response tokens (:func:`conflictlab.lm.likelihood.token_logprobs`). Rows are
cut into forwards by :func:`conflictlab.lm.batching.batches` under a token
budget (rows × row length; the shared cache is not counted).

That walk is :class:`SubsetScorer`'s ``walk`` mode. Its default path,
``packed`` (:mod:`conflictlab.lm.packed_subsets`), forwards the same tokens
level by level over many games at once, in packed rows with tree masks, so
that a forward holds a token budget's worth of work instead of one node's
children; :meth:`SubsetScorer.score` takes many jobs (games) in one call.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from conflictlab.lm.batching import BatchPolicy, batches, pad_batch
from conflictlab.lm.games import Game, ScoreStats
from conflictlab.lm.likelihood import response_means
from conflictlab.lm.placement import input_device


def _fork(cache, rows=None, keep: int | None = None, repeat: int | None = None):
    """A new cache sharing ``cache``'s tensors: selected rows, cut to ``keep``
    positions, or repeated ``repeat`` times along the batch.

    The layers' ``update`` concatenates into new tensors, so a fork never
    changes its parent.
    """
    new = copy.copy(cache)
    new.layers = [copy.copy(layer) for layer in cache.layers]
    for layer in new.layers:
        keys, values = layer.keys, layer.values
        if rows is not None:
            keys, values = keys[rows], values[rows]
        if keep is not None:
            keys, values = keys[..., :keep, :], values[..., :keep, :]
        if repeat is not None:
            keys = keys.expand(repeat, *keys.shape[1:])
            values = values.expand(repeat, *values.shape[1:])
        layer.keys, layer.values = keys, values
    return new


@dataclass
class _Row:
    mask: int
    tokens: list[int]
    piece_len: int  # tokens of the new piece
    scored: bool  # whether this row's subset needs a value


@dataclass
class SubsetScorer:
    """Coalition values of many games under one causal LM.

    ``token_budget`` bounds rows × row length of one batched forward (the
    shared cache is not counted); it halves on out-of-memory. ``mode``:
    :func:`resolve_mode`; ``row_width`` and ``kv_bytes`` size the packed
    path's rows and KV store (defaults per device: :data:`ROW_WIDTH`,
    :data:`KV_BYTES`). ``workers``: how many jobs the walk scores at once on
    a CPU, each in a thread of its own with one intra-op thread (None:
    torch's thread count; 1 on a GPU); see :meth:`_walk_jobs`.
    """

    model: object
    token_budget: int = 4096
    stats: ScoreStats = field(default_factory=ScoreStats)
    mode: str = "auto"  # "walk", "packed" or "auto" (see resolve_mode)
    row_width: int | None = None  # packed rows' new tokens (and context tokens); None: per device
    kv_bytes: int | None = None  # the packed path's KV store for one group of games; None: per device
    workers: int | None = None  # walk jobs scored at once on a CPU; None: torch.get_num_threads()

    def __post_init__(self):
        import torch

        from conflictlab.lm.loading import require_decoder_only

        require_decoder_only(self.model, "Shapley coalition values (prefix-shared decoder rows)")
        self.device = input_device(self.model)
        self.policy = BatchPolicy(token_budget=self.token_budget)
        self._torch = torch
        self.mode = resolve_mode(self.mode, torch.device(self.device))
        on_gpu = torch.device(self.device).type == "cuda"
        if self.row_width is None:
            self.row_width = ROW_WIDTH[on_gpu]
        if self.kv_bytes is None:
            self.kv_bytes = KV_BYTES[on_gpu]
        if self.workers is None:
            self.workers = 1 if on_gpu else torch.get_num_threads()

    def score(self, jobs: Sequence[tuple[Sequence[Game], Iterable[int] | None]]) -> list[list[dict[int, float]]]:
        """:meth:`values_shared` of many jobs (games, masks) at once: per job,
        per game, {mask: v}. The packed path puts games of different jobs in
        the same forwards; the walk scores them one job after another, or
        several at once on a CPU (:meth:`_walk_jobs`)."""
        if self.mode == "walk":
            return self._walk_jobs(jobs)
        from conflictlab.lm.packed_subsets import PackedRunner, make_job

        planned = [make_job(games, masks, _walk_plan) for games, masks in jobs]
        budget = self.kv_bytes // kv_bytes_per_token(self.model)
        # A job whose trie alone outgrows the store (exact values of many long
        # pieces) is walked: the walk holds one path of caches, not the trie.
        packed = [k for k, job in enumerate(planned) if job.stored_tokens() <= budget]
        for k in packed:
            for g in planned[k].games:
                self.stats.naive_tokens += g.naive_tokens(planned[k].wanted)
        results = dict(zip(packed, PackedRunner(self, self.row_width, budget).run([planned[k] for k in packed])))
        walked = [k for k in range(len(jobs)) if k not in results]
        results.update(zip(walked, self._walk_jobs([jobs[k] for k in walked])))
        return [results[k] for k in range(len(jobs))]

    def _walk_jobs(self, jobs) -> list[list[dict[int, float]]]:
        """:meth:`_walk_shared` of every job; on a CPU with ``workers`` > 1,
        that many jobs at once, each in a thread with one intra-op thread,
        largest job first.

        Why: the walk's forwards are small (one trie node's children), and
        part of their time goes outside the linear layers (attention, norms,
        rotary and other element-wise work, the LM head's reductions), which
        a second intra-op thread speeds little.
        Independent jobs on single-threaded streams keep both cores busy; the
        kernels release the GIL. README, Shapley attribution, gives the
        measured gain. Values are those of the serial walk to the bit (each
        job's forwards are unchanged).
        """
        streams = min(self.workers, len(jobs))
        if streams <= 1:
            return [self._walk_shared(games, masks) for games, masks in jobs]
        torch = self._torch
        order = sorted(range(len(jobs)), key=lambda k: -_walk_cost(jobs[k]))
        pending, lock, failed = iter(order), threading.Lock(), threading.Event()
        results: list = [None] * len(jobs)
        scorers = [copy.copy(self) for _ in range(streams)]
        for scorer in scorers:
            scorer.stats = ScoreStats()

        def work(scorer):
            while not failed.is_set():
                with lock:
                    k = next(pending, None)
                if k is None:
                    return
                try:
                    results[k] = scorer._walk_shared(*jobs[k])
                except BaseException:
                    failed.set()
                    raise

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # read by each new thread at its first parallel op
        try:
            with ThreadPoolExecutor(streams, thread_name_prefix="walk") as pool:
                for future in [pool.submit(work, scorer) for scorer in scorers]:
                    future.result()
        finally:
            torch.set_num_threads(threads)
        for scorer in scorers:
            for name, value in vars(scorer.stats).items():
                setattr(self.stats, name, getattr(self.stats, name) + value)
        return results

    # -- one batched forward over rows sharing a cache ---------------------
    def _forward_rows(self, cache, rows: list[_Row], game: Game):
        torch = self._torch
        # Right padding with any id: causal attention never looks at it.
        ids, _ = pad_batch([r.tokens for r in rows], game.response[-1], side="right")
        width = ids.shape[1]
        batch_cache = _fork(cache, repeat=len(rows))
        with torch.inference_mode():
            out = self.model.get_decoder()(input_ids=ids.to(self.device), past_key_values=batch_cache, use_cache=True)
        self.stats.forwards += 1
        self.stats.tokens_forwarded += sum(len(r.tokens) for r in rows)
        self.stats.tokens_padded += sum(width - len(r.tokens) for r in rows)
        scored = [(j, r) for j, r in enumerate(rows) if r.scored]
        self.stats.head_positions += len(scored) * len(game.response)
        means = response_means(
            self.model,
            out.last_hidden_state,
            [j for j, _ in scored],
            [r.piece_len + len(game.suffix) for _, r in scored],
            game.response,
        )
        return {r.mask: m for (_, r), m in zip(scored, means)}, out.past_key_values

    def _run_rows(self, cache, rows: list[_Row], game: Game):
        """Rows in order, in forwards within the token budget; yields (chunk, values, cache)."""
        run = lambda idx: self._forward_rows(cache, [rows[i] for i in idx], game)  # noqa: E731
        for idx, (values, new_cache) in batches(
            [len(r.tokens) for r in rows], run, self.policy, order=range(len(rows))
        ):
            yield [rows[i] for i in idx], values, new_cache

    # -- the depth-first walk ---------------------------------------------
    def values(self, game: Game, masks: Iterable[int] | None = None) -> dict[int, float]:
        """v(S) for every mask in ``masks`` (default: all 2**n subsets)."""
        if self.mode == "packed":
            return self.score([([game], masks)])[0][0]
        return self._walk_values(game, masks)

    def _walk_values(self, game: Game, masks: Iterable[int] | None = None) -> dict[int, float]:
        torch = self._torch
        from transformers import DynamicCache

        if not game.response:
            raise ValueError("cannot score an empty response")
        wanted, visit = _walk_plan(game.n, masks)
        self.stats.naive_tokens += game.naive_tokens(wanted)

        # The root forward is the empty set's row, prefix + tail, whose cache
        # is then cut back to the prefix: v(∅) costs no forward and no padding
        # of its own. A cache without per-layer config: full (non-sliding)
        # layers that keep every position, so crops are always valid.
        tail = game.suffix + game.response[:-1]  # the last response token predicts nothing
        first_row = game.prefix + (tail if 0 in wanted else [])
        cache = DynamicCache()
        with torch.inference_mode():
            out = self.model.get_decoder()(
                input_ids=torch.tensor([first_row], device=self.device), past_key_values=cache, use_cache=True
            )
        self.stats.forwards += 1
        self.stats.tokens_forwarded += len(first_row)
        results: dict[int, float] = {}
        if 0 in wanted:
            self.stats.head_positions += len(game.response)
            start = len(game.prefix) + len(game.suffix)
            results[0] = response_means(self.model, out.last_hidden_state, [0], [start], game.response)[0]

        stack = [
            (0, _fork(out.past_key_values, keep=len(game.prefix)), len(game.prefix), 0)
        ]  # (mask, cache, cache length, depth)
        while stack:
            mask, node_cache, node_len, depth = stack.pop()
            first = mask.bit_length()  # children add pieces after the last one in S
            rows = []
            for i in range(first, game.n):
                child = mask | 1 << i
                if child not in visit:
                    continue
                piece = game.piece(i, depth + 1)
                scored = child in wanted
                rows.append(_Row(child, piece + tail if scored else piece, len(piece), scored))
            if not rows:
                continue
            children = []
            for chunk, values, batch_cache in self._run_rows(node_cache, rows, game):
                results.update(values)
                for j, r in enumerate(chunk):
                    if r.mask.bit_length() < game.n and any(
                        (r.mask | 1 << i) in visit for i in range(r.mask.bit_length(), game.n)
                    ):
                        children.append(
                            (
                                r.mask,
                                _fork(batch_cache, rows=slice(j, j + 1), keep=node_len + r.piece_len),
                                node_len + r.piece_len,
                                depth + 1,
                            )
                        )
            stack.extend(reversed(children))
        return {m: results[m] for m in sorted(wanted)}

    # -- several responses to one context ------------------------------------
    def _score_tails(self, cache, games: Sequence[Game]) -> list[float]:
        """v of the coalition whose cache is ``cache`` for each game: rows
        ``suffix + response[:-1]`` on top of the shared cache."""
        torch = self._torch
        suffix = games[0].suffix
        tails = [suffix + g.response[:-1] for g in games]
        values: list[float] = [0.0] * len(games)

        def run(idx: list[int]):
            ids, _ = pad_batch([tails[g] for g in idx], games[idx[0]].response[-1], side="right")
            with torch.inference_mode():
                out = self.model.get_decoder()(
                    input_ids=ids.to(self.device), past_key_values=_fork(cache, repeat=len(idx)), use_cache=True
                )
            self.stats.forwards += 1
            self.stats.tokens_forwarded += sum(len(tails[g]) for g in idx)
            self.stats.tokens_padded += sum(ids.shape[1] - len(tails[g]) for g in idx)
            for k, g in enumerate(idx):
                self.stats.head_positions += len(games[g].response)
                values[g] = response_means(self.model, out.last_hidden_state, [k], [len(suffix)], games[g].response)[0]

        for _ in batches([len(t) for t in tails], run, self.policy, order=range(len(tails))):
            pass
        return values

    def values_shared(self, games: Sequence[Game], masks: Iterable[int] | None = None) -> list[dict[int, float]]:
        """:meth:`values` of several games that differ only in their response
        (one sample answered by several steering variants or generators).

        Each trie node's pieces are forwarded once for all games (rows of the
        new pieces alone), and each coalition's ``suffix + response`` rows of
        every game then run on top of the coalition's cache; so a piece costs
        one pass instead of one per game. One game takes :meth:`values`'
        fused rows. Values equal those of :meth:`values` up to float rounding
        (the forwards are cut differently)."""
        return self.score([(games, masks)])[0]

    def _walk_shared(self, games: Sequence[Game], masks: Iterable[int] | None = None) -> list[dict[int, float]]:
        from transformers import DynamicCache

        torch = self._torch
        head = games[0]
        if len(games) == 1:
            return [self._walk_values(head, masks)]
        if any((g.prefix, g.pieces, g.suffix) != (head.prefix, head.pieces, head.suffix) for g in games):
            raise ValueError("values_shared: the games differ in more than their response")
        if not head.suffix or any(not g.response for g in games):
            raise ValueError("values_shared needs a non-empty suffix and non-empty responses")
        wanted, visit = _walk_plan(head.n, masks)
        for g in games:
            self.stats.naive_tokens += g.naive_tokens(wanted)
        results: list[dict[int, float]] = [{} for _ in games]

        def record(mask, cache):
            if mask in wanted:
                for g, value in enumerate(self._score_tails(cache, games)):
                    results[g][mask] = value

        root = DynamicCache()
        with torch.inference_mode():
            self.model.get_decoder()(
                input_ids=torch.tensor([head.prefix], device=self.device), past_key_values=root, use_cache=True
            )
        self.stats.forwards += 1
        self.stats.tokens_forwarded += len(head.prefix)
        record(0, root)
        stack = [(0, root, len(head.prefix), 0)]
        while stack:
            mask, node_cache, node_len, depth = stack.pop()
            rows = [
                _Row(mask | 1 << i, head.piece(i, depth + 1), len(head.piece(i, depth + 1)), False)
                for i in range(mask.bit_length(), head.n)
                if mask | 1 << i in visit
            ]
            if not rows:
                continue
            children = []
            for chunk, _, batch_cache in self._run_rows(node_cache, rows, head):
                for j, r in enumerate(chunk):
                    child_cache = _fork(batch_cache, rows=slice(j, j + 1), keep=node_len + r.piece_len)
                    record(r.mask, child_cache)
                    children.append((r.mask, child_cache, node_len + r.piece_len, depth + 1))
            stack.extend(reversed(children))
        return [{m: result[m] for m in sorted(wanted)} for result in results]


# Packed rows' new tokens (and context tokens) by device, CPU then CUDA; 0:
# the widest unit of the level. The dense mask makes attention cost
# new x (context + new) per row whatever a row holds, which a GPU absorbs for
# fuller forwards and a CPU pays for.
ROW_WIDTH = {False: 0, True: 2048}
# The packed path's KV store per group of games, CPU then CUDA (bytes).
KV_BYTES = {False: 1 << 30, True: 16 << 30}


def kv_bytes_per_token(model) -> int:
    """Bytes of keys and values one token leaves in every layer's cache."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    weight = next(iter(model.parameters()), None)
    size = weight.element_size() if weight is not None else 4
    return 2 * config.num_hidden_layers * kv_heads * head_dim * size


def resolve_mode(mode: str, device=None) -> str:
    """The scoring path: ``walk`` (the depth-first walk, one node's children
    per forward, one game at a time) or ``packed``
    (:mod:`conflictlab.lm.packed_subsets`, many games per forward). ``auto``
    is ``packed`` on a GPU, which the walk's small forwards leave idle, and
    ``walk`` on a CPU (``device`` None or not CUDA): there the walk's
    forwards already keep the cores busy; packed took 1.4-1.6x less time on
    200 paper-shaped games of a narrow random model but the same on 6 games
    of SmolLM2-135M's shape, with 27% of its rows' width padding
    (``benchmarks/shapley.py --synthetic``, README), and the demo scores a
    handful of games per job. What differs between devices in the packed
    path is the rows' width and the store's size (:data:`ROW_WIDTH`,
    :data:`KV_BYTES`)."""
    if mode not in ("auto", "walk", "packed"):
        raise ValueError(f"scorer mode must be auto, walk or packed, got {mode!r}")
    if mode != "auto":
        return mode
    return "packed" if getattr(device, "type", None) == "cuda" else "walk"


def _walk_cost(job) -> int:
    """Tokens one full forward per wanted subset would take for a job
    (games, masks): the order in which :meth:`SubsetScorer._walk_jobs` hands jobs out."""
    games, masks = job
    wanted, _ = _walk_plan(games[0].n, masks)
    return sum(game.naive_tokens(wanted) for game in games)


def _walk_plan(n: int, masks: Iterable[int] | None) -> tuple[set[int], set[int]]:
    """The wanted masks and the trie nodes to visit: every wanted mask and
    each of its prefixes in evidence order (drop the highest piece repeatedly)."""
    wanted = set(range(1 << n)) if masks is None else set(masks)
    visit = set()
    for m in wanted:
        while m:
            visit.add(m)
            m &= ~(1 << (m.bit_length() - 1))
    return wanted, visit


def reference_values(model, game: Game, masks: Iterable[int] | None = None) -> dict[int, float]:
    """The plain way (the paper code's): one full forward per subset, batch 1,
    log-softmax over the whole sequence. Slow; used to check the scorer."""
    import torch

    masks = range(1 << game.n) if masks is None else masks
    device = input_device(model)
    values = {}
    for mask in masks:
        ids = game.sequence(mask)
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids], device=device)).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        start = len(ids) - len(game.response)
        target = torch.tensor(game.response, device=device)
        values[mask] = float(logprobs[start - 1 : len(ids) - 1].gather(1, target[:, None]).mean())
    return values

"""Coalition values v(S) for Shapley attribution, batched and prefix-sharing.

For a response R to a sample with evidence e_1..e_n, the value of a subset S
is the length-normalised log-likelihood of R under a frozen scorer LM:

    v(S) = (1/|R|) Σ_t log p(r_t | r_<t, question, E_S)

Scorer rendering (what a reader must know to compare numbers). Plain text,
no chat template, each segment tokenised on its own and the token ids
concatenated, so every segment has identical tokens in every subset::

    [Question]: {question}\\n            <- tokenizer's special tokens (BOS) once, here
    [Evidence {k}]: {e_i}\\n             <- one segment per i in S, in the sample's order
    [Answer]:\\n                         <- suffix
    {response}                          <- tokenised alone, no special tokens

``k`` numbers the pieces consecutively within the subset (1..|S|) by
default; ``renumber=False`` keeps each piece's original number. v(∅) is the
question, suffix and response alone. The question comes first so that every
subset of a sample shares one prefix.

:class:`SubsetScorer` walks the subsets depth-first in evidence order. The
first forward is the empty set's full row (prefix, suffix, response); its
cache, cut back to the prefix, is the root. A node S holds the KV cache of
``prefix + E_S``; all its children S ∪ {i} (i > max S) are scored in one
batched forward of ``piece_i + suffix + response`` rows on top of that shared
cache, right-padded (causal attention never looks at the padding), and each
child's cache is the row's cache cropped after its piece. So each piece
segment is forwarded once per trie node, never re-forwarded for every
superset. Rows stop at the response's second-to-last token (the last one
predicts nothing); the decoder returns hidden states and the LM head runs
only at the positions that predict response tokens, in tiles of rows ×
vocabulary (:func:`token_logprobs`), so no (positions × vocabulary) logits
tensor is ever allocated.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from conflictlab.batching import pad_batch

log = logging.getLogger(__name__)

SUFFIX = "[Answer]:\n"

VALUE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("response_sha256", pa.string(), nullable=False),
        pa.field("mask", pa.int64(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
        pa.field("n_response_tokens", pa.int32(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
    ]
)


def response_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Game:
    """Token segments of one (sample, response) attribution game."""

    prefix: list[int]
    pieces: list[list[list[int]]]  # pieces[i][k - 1]: piece i rendered as the k-th of its subset
    suffix: list[int]
    response: list[int]

    @property
    def n(self) -> int:
        return len(self.pieces)

    def piece(self, i: int, k: int) -> list[int]:
        return self.pieces[i][k - 1]

    def sequence(self, mask: int) -> list[int]:
        """The full token sequence of subset ``mask`` (the plain, unshared form)."""
        ids = list(self.prefix)
        k = 0
        for i in range(self.n):
            if mask >> i & 1:
                k += 1
                ids += self.piece(i, k)
        return ids + self.suffix + self.response

    def naive_tokens(self, masks: Iterable[int]) -> int:
        return sum(len(self.sequence(m)) for m in masks)


def build_game(tokenizer, question: str, evidence: Sequence[str], response: str, *, renumber: bool = True) -> Game:
    """Tokenise the segments of one game (see the module docstring)."""

    def ids(text: str, special: bool = False) -> list[int]:
        return list(tokenizer(text, add_special_tokens=special)["input_ids"])

    n = len(evidence)
    pieces = []
    for i, text in enumerate(evidence):
        numbers = range(1, n + 1) if renumber else [i + 1] * n
        cache: dict[int, list[int]] = {}
        pieces.append([cache.setdefault(k, ids(f"[Evidence {k}]: {text}\n")) for k in numbers])
    return Game(ids(f"[Question]: {question}\n", special=True), pieces, ids(SUFFIX), ids(response))


@dataclass
class ScoreStats:
    tokens_forwarded: int = 0  # real (unpadded) tokens through the model
    tokens_padded: int = 0  # padding added to batch rows
    naive_tokens: int = 0  # what one full forward per subset would process
    forwards: int = 0
    head_positions: int = 0  # positions where the LM head ran (those predicting response tokens)


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
    shared cache is not counted); it halves on out-of-memory.
    """

    model: object
    token_budget: int = 4096
    stats: ScoreStats = field(default_factory=ScoreStats)

    def __post_init__(self):
        import torch

        self.device = next(self.model.parameters()).device
        self._torch = torch

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
            self.model, out.last_hidden_state, [j for j, _ in scored],
            [r.piece_len + len(game.suffix) for _, r in scored], game.response,
        )
        return {r.mask: m for (_, r), m in zip(scored, means)}, out.past_key_values

    def _run_rows(self, cache, rows: list[_Row], game: Game):
        """Rows in chunks within the token budget; yields (chunk, values, cache)."""
        start = 0
        while start < len(rows):
            chunk = [rows[start]]
            for r in rows[start + 1 :]:
                width = max(len(x.tokens) for x in chunk + [r])
                if (len(chunk) + 1) * width > self.token_budget:
                    break
                chunk.append(r)
            try:
                values, new_cache = self._forward_rows(cache, chunk, game)
            except (RuntimeError, MemoryError) as err:
                if "out of memory" not in str(err).lower() or self.token_budget <= 64:
                    raise
                self.token_budget //= 2
                log.warning("out of memory; token budget halved to %d", self.token_budget)
                if self._torch.cuda.is_available():
                    self._torch.cuda.empty_cache()
                continue
            yield chunk, values, new_cache
            start += len(chunk)

    # -- the depth-first walk ---------------------------------------------
    def values(self, game: Game, masks: Iterable[int] | None = None) -> dict[int, float]:
        """v(S) for every mask in ``masks`` (default: all 2**n subsets)."""
        torch = self._torch
        from transformers import DynamicCache

        if not game.response:
            raise ValueError("cannot score an empty response")
        wanted = set(range(1 << game.n)) if masks is None else set(masks)
        # Trie nodes to visit: every wanted mask and each of its prefixes in
        # evidence order (drop the highest piece repeatedly).
        visit = set()
        for m in wanted:
            while m:
                visit.add(m)
                m &= ~(1 << (m.bit_length() - 1))
        self.stats.naive_tokens += game.naive_tokens(wanted)

        # The root forward is the empty set's row, prefix + tail, whose cache
        # is then cut back to the prefix: v(∅) costs no forward and no padding
        # of its own. A cache without per-layer config: full (non-sliding)
        # layers that keep every position, so crops are always valid.
        tail = game.suffix + game.response[:-1]  # the last response token predicts nothing
        first_row = game.prefix + (tail if 0 in wanted else [])
        cache = DynamicCache()
        with torch.inference_mode():
            out = self.model.get_decoder()(input_ids=torch.tensor([first_row], device=self.device), past_key_values=cache, use_cache=True)
        self.stats.forwards += 1
        self.stats.tokens_forwarded += len(first_row)
        results: dict[int, float] = {}
        if 0 in wanted:
            self.stats.head_positions += len(game.response)
            start = len(game.prefix) + len(game.suffix)
            results[0] = response_means(self.model, out.last_hidden_state, [0], [start], game.response)[0]

        stack = [(0, _fork(out.past_key_values, keep=len(game.prefix)), len(game.prefix), 0)]  # (mask, cache, cache length, depth)
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
                        children.append((r.mask, _fork(batch_cache, rows=slice(j, j + 1), keep=node_len + r.piece_len), node_len + r.piece_len, depth + 1))
            stack.extend(reversed(children))
        return {m: results[m] for m in sorted(wanted)}


def reference_values(model, game: Game, masks: Iterable[int] | None = None) -> dict[int, float]:
    """The plain way (the paper code's): one full forward per subset, batch 1,
    log-softmax over the whole sequence. Slow; used to check the scorer."""
    import torch

    masks = range(1 << game.n) if masks is None else masks
    device = next(model.parameters()).device
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


def coalitions(n: int, *, exact_max_n: int, n_permutations: int, seed: int) -> tuple[list[int], np.ndarray | None]:
    """Masks to score for an n-piece game: all of them up to ``exact_max_n``,
    else those visited by antithetic permutations (returned too)."""
    from conflictlab.shapley import antithetic_permutations, permutation_masks

    if n <= exact_max_n:
        return list(range(1 << n)), None
    permutations = antithetic_permutations(n, n_permutations, seed)
    return sorted(permutation_masks(permutations)), permutations


def score_games(
    scorer: SubsetScorer,
    tokenizer,
    samples: pa.Table,
    responses: pa.Table,
    *,
    scorer_name: str,
    renumber: bool = True,
    exact_max_n: int = 10,
    n_permutations: int = 64,
    seed: int = 0,
) -> tuple[pa.Table, list[dict]]:
    """Coalition values of every (sample, response) pair, longest games first.

    Returns the value table (VALUE_SCHEMA) and one skip record per response
    that could not be scored (not generated, empty, or a single piece).
    """
    by_id = {row["sample_id"]: row for row in samples.to_pylist()}
    games, skipped = [], []
    for response in responses.to_pylist():
        sample = by_id.get(response["sample_id"])
        if sample is None:
            raise ValueError(f"response for unknown sample {response['sample_id']!r}")
        text = response["response"]
        reason = None
        if response["status"] != "ok":
            reason = f"response status {response['status']}"
        elif not text or not text.strip():
            reason = "empty response"
        elif sample["n_evidence"] < 2:
            reason = "fewer than two evidence pieces"
        if reason:
            skipped.append({"sample_id": sample["sample_id"], "reason": reason})
            continue
        game = build_game(tokenizer, sample["question"], sample["evidence"], text, renumber=renumber)
        games.append((sample, text, game))
    games.sort(key=lambda item: -len(item[2].sequence((1 << item[2].n) - 1)))

    rows = []
    for index, (sample, text, game) in enumerate(games):
        masks, _ = coalitions(game.n, exact_max_n=exact_max_n, n_permutations=n_permutations, seed=seed)
        values = scorer.values(game, masks)
        digest = response_sha256(text)
        for mask, value in values.items():
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "response_sha256": digest,
                    "mask": mask,
                    "n_evidence": game.n,
                    "value": value,
                    "n_response_tokens": len(game.response),
                    "scorer": scorer_name,
                }
            )
        log.info("game %d/%d %s: n=%d, %d coalitions", index + 1, len(games), sample["sample_id"], game.n, len(masks))
    rows.sort(key=lambda r: (r["sample_id"], r["mask"]))
    return pa.Table.from_pylist(rows, schema=VALUE_SCHEMA), skipped


def response_loglikelihoods(model, prompts: Sequence[Sequence[int]], response: Sequence[int]) -> list[float]:
    """Length-normalised log-likelihood of ``response`` after each prompt
    (one batched, right-padded forward; the head only at response
    positions). Returns one value per prompt."""
    import torch

    device = next(model.parameters()).device
    response = list(response)
    ids, _ = pad_batch([list(p) + response[:-1] for p in prompts], response[-1], side="right")
    with torch.inference_mode():
        hidden = model.get_decoder()(input_ids=ids.to(device)).last_hidden_state
    return response_means(model, hidden, range(len(prompts)), [len(p) for p in prompts], response)


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
    shape (m,). The logits are formed tile by tile (``row_tile`` ×
    ``vocab_tile``; defaults 512 × 2048 on CPU, 4096 × 65536 on GPU; a head
    packed by :func:`conflictlab.packed_linear.pack_linear_layers` brings its
    own vocabulary blocks) and reduced by log-sum-exp per tile, then across
    tiles. The head's final logit soft-capping (Gemma 2/3) is applied; other
    logit rescalings raise ValueError.
    """
    import torch

    from conflictlab.packed_linear import PackedLinear

    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    for name in ("logit_scale", "logits_scaling"):
        if getattr(config, name, None) not in (None, 1, 1.0):
            raise ValueError(f"token_logprobs: the scorer's config sets {name}={getattr(config, name)!r}; only final_logit_softcapping is applied")
    cap = getattr(config, "final_logit_softcapping", None)
    head = model.get_output_embeddings()
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
            yield v, torch.nn.functional.linear(block, weight[v : v + vocab_tile], None if bias is None else bias[v : v + vocab_tile])

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

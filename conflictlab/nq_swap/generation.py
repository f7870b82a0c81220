"""One model's NQ-Swap answers under every setting and every resolution method, the model loaded once.

Runs (the ``run`` column; each answers every item, greedy decoding, one
:class:`~conflictlab.lm.generation.DecodingParams`):

===================  ==============================================================
``closed_book``      the question alone (what the model answers from memory)
``original``         the original passage and the question
``greedy``           the substituted passage and the question: the **baseline** of every method
``cad-a<alpha>``     CAD on the substituted prompt against the closed-book prompt
``original-<method>`` a method of ``nq_swap.original_methods`` (CAD, AdaCAD) on the original
                     prompt against the closed-book prompt: CAD's Table 3 column NQ
``adacad``           AdaCAD likewise, its weight floored at 0 (the authors' QA setting,
                     :data:`conflictlab.lm.methods.ADACAD_SHORT_ANSWER_FLOOR`)
``cfp-<style>``      the substituted prompt rewritten as a context-faithful prompt
``cas-a<alpha>``     the substituted prompt under context-aware steering, directions
                     cross-fitted over folds of the items (:mod:`conflictlab.nq_swap.steering`)
===================  ==============================================================

The prompts are plain text (:mod:`conflictlab.nq_swap.prompts`) encoded with
the tokenizer's own special tokens, so a base model without a chat template
answers them as an instruct model does.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from conflictlab.lm.methods import ADACAD_SHORT_ANSWER_FLOOR, GREEDY, as_method, contrast_logits
from conflictlab.nq_swap.prompts import closed_book_prompt, context_prompt
from conflictlab.nq_swap.runs import CLOSED_BOOK, ORIGINAL, original_run
from conflictlab.nq_swap.steering import cross_fitted_directions, fold_of, run_name

SETTINGS = (CLOSED_BOOK, ORIGINAL, GREEDY)

RESPONSE_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("run", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("finish_reason", pa.string(), nullable=False),
        pa.field("prompt_tokens", pa.int64(), nullable=False),
        pa.field("n_tokens", pa.int64(), nullable=False),
        pa.field("fold", pa.int64()),  # the item's steering fold (cas-* rows only)
    ]
)


def run_names(methods: Sequence[str], steering: dict | None, original_methods: Sequence[str] = ()) -> list[str]:
    """Every run's name in table order: the settings, the methods (``greedy`` in ``methods`` is the baseline,
    not a second run), the contrastive methods on the original context (``original_methods``), the steered run
    when ``steering`` is given (``alpha``)."""
    names = [*SETTINGS, *(as_method(m).format() for m in methods if as_method(m).format() != GREEDY)]
    names += [original_run(as_method(m).format()) for m in original_methods]
    return names + ([run_name(steering["alpha"])] if steering else [])


def answer_items(
    lm,
    backend,
    items: Sequence[dict],
    *,
    model: str,
    methods: Sequence[str],
    steering: dict | None,
    params,
    limit: int,
    original_methods: Sequence[str] = (),
) -> pa.Table:
    """:data:`RESPONSE_SCHEMA` rows of every run of :func:`run_names` on ``items`` (rows of
    :data:`~conflictlab.nq_swap.dataset.ITEM_SCHEMA`).

    ``lm``: the :class:`~conflictlab.lm.loading.LoadedModel` behind ``backend``
    (an :class:`~conflictlab.lm.generation.HFBackend`: CAD's two passes and the
    steering hooks need it); ``params``: the
    :class:`~conflictlab.lm.generation.DecodingParams`; ``steering``: None, or
    ``alpha``, ``layers`` (None: all), ``schedule``, ``folds``, ``seed`` and
    ``batch_size``; ``limit``: the model's context window, which a prompt and
    its answer must fit (ValueError naming the item otherwise); ``original_methods``: contrastive methods also
    run on the original context (:func:`~conflictlab.nq_swap.runs.original_run`).
    """
    from conflictlab.lm.hidden import hidden_states
    from conflictlab.lm.steering import Steering

    def encode(text: str) -> list[int]:
        return lm.tokenizer(text)["input_ids"]

    ids = [item["item_id"] for item in items]
    closed = [encode(closed_book_prompt(item["question"])) for item in items]
    substituted = [encode(context_prompt(item["sub_context"], item["question"])) for item in items]
    prompts = {
        CLOSED_BOOK: closed,
        ORIGINAL: [encode(context_prompt(item["org_context"], item["question"])) for item in items],
        GREEDY: substituted,
    }
    for method in map(as_method, methods):
        if method.prompt_style is not None:
            prompts[method.format()] = [
                encode(context_prompt(item["sub_context"], item["question"], method.prompt_style)) for item in items
            ]
    for run, rows in prompts.items():
        for item, prompt in zip(ids, rows):
            if len(prompt) + params.max_new_tokens > limit:
                raise ValueError(
                    f"NQ-Swap item {item} ({run}): {len(prompt)} prompt tokens + {params.max_new_tokens} new tokens "
                    f"exceed the context window of {limit}"
                )

    completions = {run: backend.generate(rows, params) for run, rows in prompts.items()}
    contrasted = [(method.format(), substituted, method) for method in map(as_method, methods) if method.contrastive]
    contrasted += [(original_run(m.format()), prompts[ORIGINAL], m) for m in map(as_method, original_methods)]
    for run, with_context, method in contrasted:

        def contrast(with_context, without_context, method=method):
            return contrast_logits(method, with_context, without_context, floor=ADACAD_SHORT_ANSWER_FLOOR)[0]

        completions[run] = backend.generate_contrastive(with_context, closed, params, contrast)
    folds = None
    if steering:
        states = hidden_states(lm, substituted + closed, batch_size=steering["batch_size"])
        folds = fold_of(len(items), steering["folds"], steering["seed"])
        directions = cross_fitted_directions(states[: len(items)], states[len(items) :], folds)
        layers = tuple(steering["layers"]) if steering.get("layers") is not None else None
        per_row = [Steering(directions[k], float(steering["alpha"]), steering["schedule"], layers) for k in folds]
        completions[run_name(steering["alpha"])] = backend.generate_variants(substituted, [per_row], params)[0]

    shown = {**{run: with_context for run, with_context, _ in contrasted}, **prompts}  # each run's prompt
    rows = []
    for run in run_names(methods, steering, original_methods):
        source = shown.get(run, substituted)
        steered = run == (run_name(steering["alpha"]) if steering else None)
        for i, (item, prompt, completion) in enumerate(zip(ids, source, completions[run])):
            rows.append(
                {
                    "item_id": item,
                    "model": model,
                    "run": run,
                    "text": completion.text or "",
                    "finish_reason": completion.finish_reason,
                    "prompt_tokens": len(prompt),
                    "n_tokens": len(completion.token_ids),
                    "fold": int(folds[i]) if steered else None,
                }
            )
    return pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA)

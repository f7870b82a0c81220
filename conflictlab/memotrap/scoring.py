"""MemoTrap's read-out: which class a model finds most likely after the prompt, under each method.

A class's score is the **sum** of its tokens' log-probabilities given the prompt, not their mean: the task's own
protocol (the Inverse Scaling Prize's classification tasks, and lm-evaluation-harness's ``acc`` on ``memo-trap``,
which scores ``doc_to_choice`` continuations by their summed log-likelihood) and the probability CAD's or AdaCAD's
distribution gives the whole continuation. The two classes of a MemoTrap prompt are endings of similar length (a
word and its punctuation, " A" and " B"), so a per-token mean would mostly rescale both; the length-normalised
``acc_norm`` is not what the task defines. The CAD paper itself scored MemoTrap by exact match of generated text
(the Hallucination-survey README lists "MemoTrap and NQ-Swap: Exact Match" for it; the paper's text could not be
retrieved here), so the read-out is the issue's, not the paper's: under greedy decoding the first tokens decide
the generated ending, and the summed score decides the same class wherever the classes part at their first token
and the rest follows.

CAD's own metric is offered beside it: each method also **generates** the continuation greedily (CAD and AdaCAD
decoding token by token from the contrast, :meth:`~conflictlab.lm.generation.HFBackend.generate_contrastive`), as
many new tokens as the longest class of the prompt set has, and ``exact_match`` records whether the generated text
begins with the asked-for class (:func:`exact_match`). The accuracy table shows both, and CAD's Table 3 is compared
with the exact match (docs/benchmarks/memotrap.md).

The prompt is read as plain text, without a chat template (the task is a completion), and each class's tokens are
those the tokenizer gives the prompt and class together beyond the prompt's own (lm-evaluation-harness's split),
else, where the two tokenisations disagree at the boundary, the class encoded alone. An encoder-decoder model
(FLAN-T5) reads the prompt in its encoder and the class in its decoder, so there the class is always encoded alone
(and not counted as apart). The context-free prompt
(CAD's ``x``) is the prompt without its instruction (:func:`conflictlab.memotrap.dataset.split_prompt`), followed
by the same class tokens. The highest score is the prediction; an exact tie predicts neither class (index -1,
not correct).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from conflictlab.lm.contrastive_likelihood import continuation_logprobs_under
from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.methods import ADACAD_SHORT_ANSWER_FLOOR, GREEDY, as_method, contrast_logits

SCORE_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),  # a registry model
        pa.field("method", pa.string(), nullable=False),  # conflictlab.lm.methods.Method.format()
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        pa.field("answer_index", pa.int32(), nullable=False),
        pa.field("predicted_index", pa.int32(), nullable=False),  # -1: a tie
        pa.field("correct", pa.bool_(), nullable=False),
        pa.field("loglik", pa.list_(pa.float64()), nullable=False),  # per class, summed over its tokens
        pa.field("tokens", pa.list_(pa.int32()), nullable=False),  # per class
        pa.field("generated", pa.string(), nullable=False),  # the method's greedy continuation
        pa.field("exact_match", pa.bool_(), nullable=False),  # it begins with the asked-for class (exact_match)
    ]
)


def scoring_methods(methods: Sequence[str]) -> list[str]:
    """Greedy reading first (the baseline every method is compared with), then ``methods`` (names), each once;
    ValueError for a method that is neither greedy reading nor contrastive: a context-faithful prompt rewrites a
    context and a question, and MemoTrap's prompt has no question to ask in a narrator's opinion."""
    names = list(dict.fromkeys([GREEDY, *(as_method(m).format() for m in methods)]))
    for name in names:
        method = as_method(name)
        if name != GREEDY and not method.contrastive:
            raise ValueError(
                f"method {name}: MemoTrap reads greedy, CAD and AdaCAD only (a prompt method rewrites a question)"
            )
    return names


def class_tokens(tokenizer, prompt: str, continuation: str) -> tuple[list[int], bool]:
    """(the continuation's token ids after ``prompt``, whether they are the joint tokenisation's tail): the
    tokens of ``prompt + continuation`` past those of ``prompt`` where the latter are its prefix, else
    ``continuation`` encoded alone (False)."""
    alone = tokenizer(prompt)["input_ids"]
    joint = tokenizer(prompt + continuation)["input_ids"]
    if joint[: len(alone)] == alone and len(joint) > len(alone):
        return joint[len(alone) :], True
    return tokenizer(continuation, add_special_tokens=False)["input_ids"], False


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def exact_match(generated: str, ending: str) -> bool:
    """Whether ``generated`` begins with ``ending``, both with whitespace collapsed and trimmed and case folded.
    Generation runs as long as the prompt set's longest class, so text past a shorter class is ignored; the
    class's own punctuation counts (MemoTrap's classes end a quote: " fonder." is not " fonder")."""
    ending = _normal(ending)
    return bool(ending) and _normal(generated).startswith(ending)


def generate_endings(
    lm,
    prompts: Sequence[Sequence[int]],
    free: Sequence[Sequence[int]],
    names: Sequence[str],
    *,
    max_new_tokens: int,
    batch_size: int,
) -> dict[str, list[str]]:
    """Per method name, the greedy continuation of each prompt (``free``: its context-free version, for CAD and
    AdaCAD, whose weight is floored as for NQ-Swap's short answers)."""
    backend = HFBackend(lm, batch_size=batch_size)
    params = DecodingParams(max_new_tokens=max_new_tokens)
    out = {}
    for name in names:
        method = as_method(name)
        if not method.contrastive:
            completions = backend.generate(prompts, params)
        else:

            def contrast(with_context, without_context, method=method):
                return contrast_logits(method, with_context, without_context, floor=ADACAD_SHORT_ANSWER_FLOOR)[0]

            completions = backend.generate_contrastive(prompts, free, params, contrast)
        out[name] = [c.text or "" for c in completions]
    return out


def score(lm, items: pa.Table, methods: Sequence[str], *, model: str, batch_size: int = 8) -> tuple[pa.Table, int]:
    """:data:`SCORE_SCHEMA` rows, one per item of ``items`` (:data:`conflictlab.memotrap.dataset.ITEM_SCHEMA`)
    and method of :func:`scoring_methods` (``methods``), methods in that order; and how many classes were encoded
    alone (:func:`class_tokens`). ``lm``: a :class:`~conflictlab.lm.loading.LoadedModel`; ``model`` its name."""
    names = scoring_methods(methods)
    tokenizer = lm.tokenizer
    rows = items.to_pylist()
    prompts, free, continuations, alone = [], [], [], 0
    for item in rows:
        prompts.append(tokenizer(item["prompt"])["input_ids"])
        free.append(tokenizer(item["query"])["input_ids"])
        if lm.is_encoder_decoder:  # the decoder reads the class apart from the encoder's prompt
            encoded = [(tokenizer(c, add_special_tokens=False)["input_ids"], True) for c in item["classes"]]
        else:
            encoded = [class_tokens(tokenizer, item["prompt"], continuation) for continuation in item["classes"]]
        alone += sum(not joint for _, joint in encoded)
        continuations.append([ids for ids, _ in encoded])
    logprobs = continuation_logprobs_under(lm, prompts, free, continuations, names, batch_size=batch_size)
    longest = max((len(ids) for candidates in continuations for ids in candidates), default=1)
    generated = generate_endings(lm, prompts, free, names, max_new_tokens=longest, batch_size=batch_size)
    out = []
    for name, per_item in zip(names, logprobs):
        for item, candidates, per_class, text in zip(rows, continuations, per_item, generated[name]):
            scores = np.array([float(lp.sum()) for lp in per_class])
            best = np.flatnonzero(scores == scores.max())
            predicted = int(best[0]) if best.size == 1 else -1
            out.append(
                {
                    "model": model,
                    "method": name,
                    "item_id": item["item_id"],
                    "file": item["file"],
                    "answer_index": item["answer_index"],
                    "predicted_index": predicted,
                    "correct": predicted == item["answer_index"],
                    "loglik": scores.tolist(),
                    "tokens": [len(ids) for ids in candidates],
                    "generated": text,
                    "exact_match": exact_match(text, item["classes"][item["answer_index"]]),
                }
            )
    return pa.Table.from_pylist(out, schema=SCORE_SCHEMA), alone

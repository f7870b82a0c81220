"""Synthetic ContextConflict samples in the released folder layout
(``conflictlab.contextconflict.dataset``), at the release's size times a
fraction, for rehearsing the paper configuration's scale (README, Paper
scale). Fake content (``conflictlab.fake_text``); shapes from:

- files per subset: the release's listing (``RELEASE_FILES``: 5,770; the paper
  reports 5,781, and its Table 1 lost its per-type cells in the text copy);
- evidence pieces per sample, words per piece and per question, the answer's
  form and the extra fields: the four files per subset of the shared release
  sample (``../shared/contextconflict_sample``), as :data:`SUBSET_SHAPES`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from conflictlab.contextconflict.accuracy import ABSTAIN, normalize
from conflictlab.contextconflict.causal import CAUSAL_SCHEMA, extreme_pieces
from conflictlab.contextconflict.conflict_types import RELEASE_FILES, ROOT_SUBSET, SUBSETS, TASK_FAMILY, Subset
from conflictlab.contextconflict.pairs import STORED_DTYPE, activation_index, pair_prompts, projection_prompts
from conflictlab.contextconflict.prompts import build_messages, encode_messages
from conflictlab.contextconflict.scoring import SKIP_SCHEMA, VALUE_SCHEMA, coalitions, response_sha256
from conflictlab.contextconflict.steering import direction_prompts
from conflictlab.fake_text import Words, WordTokenizer, chosen, scaled
from conflictlab.judges.faithfulness import FAITHFULNESS_SCHEMA
from conflictlab.lm.shards import RESPONSE_SCHEMA


@dataclass(frozen=True)
class SubsetShape:
    """One subset's sample shape: ``evidence_counts`` {pieces: weight},
    words per piece and per question as (mean, standard deviation), and the
    answer's form: ``none`` (summarization), ``text`` (one short string),
    ``choice`` (one of ``choices``), ``list`` (one short string per piece) or
    ``list_one`` (a list of one); ``labels``: per-piece accuracy labels;
    ``extras``: the release's extra field names."""

    evidence_counts: dict
    evidence_words: tuple[float, float]
    question_words: tuple[float, float]
    answer: str
    choices: tuple[str, ...] = ()
    labels: bool = False
    extras: tuple[str, ...] = ()


# The shared sample's counts as seen (4 files per subset), its lengths' mean and spread.
SUBSET_SHAPES: dict[tuple[str, str], SubsetShape] = {
    ("ambiguity", ROOT_SUBSET): SubsetShape(
        {2: 3, 3: 1}, (100, 5), (6, 2), "list", extras=("ambiguous_entity", "content_pid", "qid")
    ),
    ("granularity", "ROAST-ABSA"): SubsetShape({5: 1, 6: 3}, (87, 14), (7, 1), "none"),
    ("granularity", "medical_qa"): SubsetShape({2: 2, 3: 2}, (230, 50), (173, 38), "none"),
    ("inferential", "entailment_bank"): SubsetShape({5: 1, 6: 3}, (30, 12), (12, 3), "text"),
    ("inferential", "folio"): SubsetShape(
        {5: 1, 7: 1, 8: 2}, (14, 6), (51, 10), "choice", choices=("True", "False", "Uncertain")
    ),
    ("inferential", "medical_qa"): SubsetShape({2: 1, 4: 3}, (150, 60), (174, 60), "list_one", labels=True),
    ("misinformation", "cb_claim_evidence"): SubsetShape({2: 1}, (320, 90), (6, 1), "text", labels=True),
    ("misinformation", "sci_data"): SubsetShape(
        {3: 1, 4: 3}, (27, 6), (33, 8), "choice", choices=("Yes", "No"), labels=True
    ),
    ("perspective", "allsides"): SubsetShape({3: 1}, (750, 350), (35, 5), "none"),
    ("perspective", "perspectrum"): SubsetShape({6: 1}, (60, 15), (8, 4), "none"),
    ("temporal", ROOT_SUBSET): SubsetShape({6: 1}, (220, 110), (8, 2), "text"),
    ("temporal", "cb_claim_evidence_tmp"): SubsetShape({2: 1}, (360, 60), (28, 1), "text"),
}


def sample(words: Words, subset: Subset, number: int) -> dict:
    """One released sample file's JSON object for ``subset``."""
    shape = SUBSET_SHAPES[(subset.conflict_type, subset.name)]
    n = words.weighted(shape.evidence_counts)
    raw = {
        "question": words.sized(shape.question_words, 2) + "?",
        "content": {f"source_{i}": words.sized(shape.evidence_words, 3) for i in range(1, n + 1)},
    }
    if shape.answer == "text":
        raw["answer"] = words.sized((3, 2))
    elif shape.answer == "choice":
        raw["answer"] = words.rng.choice(shape.choices)
    elif shape.answer in ("list", "list_one"):
        raw["answer"] = [words.sized((3, 2)) for _ in range(n if shape.answer == "list" else 1)]
    if shape.labels:
        raw["accuracy_labels"] = [words.rng.random() < 0.5 for _ in range(n)]
    for key in shape.extras:
        raw[key] = words.text(2) if key == "ambiguous_entity" else f"{key}-{number}"
    return raw


def write_release(root: str | Path, fraction: float, seed: int = 0) -> dict[tuple[str, str], int]:
    """The release's ``data/`` folder at ``root``: every subset of every type,
    ``scaled(RELEASE_FILES, fraction)`` files each (1.json, 2.json, ...).
    Returns the files written per (type, subset)."""
    words = Words(seed)
    written = {}
    for conflict_type in TASK_FAMILY:
        for subset in SUBSETS[conflict_type]:
            folder = Path(root) / subset.folder
            folder.mkdir(parents=True, exist_ok=True)
            count = scaled(RELEASE_FILES[(conflict_type, subset.name)], fraction)
            for number in range(1, count + 1):
                (folder / f"{number}.json").write_text(json.dumps(sample(words, subset, number)), encoding="utf-8")
            written[(conflict_type, subset.name)] = count
    return written


# --------------------------------------------------------------------------
# Planted model outputs: what the model rules would write, in their writers'
# schemas, with a known truth, so every analysis rule can run at full size
# without a model (benchmarks/scale.py run --planted). Every row says
# backend/model_checksum "planted", so a planted table is never mistaken for
# a model's.

PLANTED = "planted"
# Said of every wrong planted answer to a non-abstention gold: the scoring
# rules count an answer naming the abstention label as wrong (accuracy.py, 5).
_WRONG = "<answer>insufficient information</answer>"


def plant_responses(
    samples: pa.Table, templates: dict[str, str], *, model: str, correct_share: float = 0.5, seed: int = 0
) -> tuple[pa.Table, np.ndarray]:
    """One :data:`conflictlab.lm.shards.RESPONSE_SCHEMA` row per sample (rule
    ``generate``), in ``samples``' order, every status ``ok``.

    Planted truth: of the samples with a gold answer (the reasoning types),
    exactly ``round(correct_share * n)``, chosen with ``seed``, answer
    ``<answer>{first gold}</answer>`` (right under every scoring rule of
    :mod:`~conflictlab.contextconflict.accuracy`); the others answer the
    abstention label (wrong), or, to an abstention gold, pseudo-words (wrong).
    Summarization samples get pseudo-text. Returns (responses, correct: bool
    array of shape (n,), the planted correctness per sample).
    """

    rng, words, tokenizer = np.random.default_rng(seed), Words(seed), WordTokenizer()
    golds = samples.column("answer").to_pylist()
    graded = np.array([gold is not None for gold in golds])
    correct = np.zeros(samples.num_rows, dtype=bool)
    correct[graded] = chosen(int(graded.sum()), correct_share, rng)
    rows = []
    for sample, gold, right in zip(
        samples.select(["sample_id", "task_family", "question", "evidence"]).to_pylist(), golds, correct
    ):
        template = templates[sample["task_family"]]
        prompt, prompt_ids = encode_messages(
            tokenizer, build_messages(template, sample["question"], sample["evidence"])
        )
        if gold is None:
            text = words.sized((60, 20), 3)
        elif right:
            text = f"<answer>{gold[0]}</answer>"
        else:
            text = f"<answer>{words.sized((3, 1))}</answer>" if normalize(gold[0]) == ABSTAIN else _WRONG
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        rows.append(
            {
                "sample_id": sample["sample_id"],
                "template": template,
                "prompt": prompt,
                "response": text,
                "response_token_ids": ids,
                "reasoning": None,
                "n_prompt_tokens": len(prompt_ids),
                "n_response_tokens": len(ids),
                "finish_reason": "stop",
                "backend": PLANTED,
                "model": model,
                "model_checksum": PLANTED,
                "decoding": json.dumps({PLANTED: True}),
                "seed": seed,
                "status": "ok",
                "message": None,
            }
        )
    return pa.Table.from_pylist(rows, schema=RESPONSE_SCHEMA), correct


def planted_phi(n: int, balance: float, dominant: int, gain: float) -> np.ndarray:
    """Shapley values (shape (n,)) whose Balance is exactly ``balance``: every
    piece gets (1 - balance) / n of ``gain``, piece ``dominant`` (0-based)
    ``balance`` more. (Sorted shares a, ..., a, a + t give Gini (n-1)t/n,
    i.e. Balance t: :func:`conflictlab.stats.balance`.)"""
    shares = np.full(n, (1.0 - balance) / n)
    shares[dominant] += balance
    return gain * shares


PLANTED_TRUTH_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("balance", pa.float64(), nullable=False),
        pa.field("dominant", pa.int32(), nullable=False),  # 0-based
        pa.field("phi", pa.list_(pa.float64()), nullable=False),
    ]
)


def plant_values(
    samples: pa.Table,
    responses: pa.Table,
    *,
    scorer: str,
    balance: tuple[float, float] = (0.1, 0.9),
    seed: int = 0,
    exact_max_n: int = 10,
    n_permutations: int = 64,
    shapley_seed: int = 0,
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Coalition values of every sample with two or more pieces (rule
    ``shapley_values``): (values, skipped, truth) in the writer's
    :data:`~conflictlab.contextconflict.scoring.VALUE_SCHEMA` and
    :data:`~conflictlab.contextconflict.scoring.SKIP_SCHEMA`, and
    :data:`PLANTED_TRUTH_SCHEMA`.

    The game is additive, v(S) = v(∅) + Σ_{i∈S} φ_i, so exact and sampled
    Shapley values both return φ: :func:`planted_phi` of a Balance drawn
    uniformly from ``balance`` and a dominant piece drawn uniformly (both in
    ``truth``). A game with more than ``exact_max_n`` pieces stores the masks
    and permutations the scorer would (:func:`~conflictlab.contextconflict.scoring.coalitions`).
    Rows: 2^n per exact game (fewer per sampled one), ordered by (sample, mask).
    """

    rng = np.random.default_rng(seed)
    text_of = dict(zip(*(responses.column(c).to_pylist() for c in ("sample_id", "response"))))
    length_of = dict(zip(*(responses.column(c).to_pylist() for c in ("sample_id", "n_response_tokens"))))
    columns: dict[str, list] = {name: [] for name in VALUE_SCHEMA.names}
    truth, skipped = [], []
    for sample_id, n in sorted(zip(*(samples.column(c).to_pylist() for c in ("sample_id", "n_evidence")))):
        if n < 2:
            skipped.append({"sample_id": sample_id, "reason": "fewer than two evidence pieces"})
            continue
        t, dominant, gain = float(rng.uniform(*balance)), int(rng.integers(n)), float(rng.uniform(1.0, 5.0))
        phi = planted_phi(n, t, dominant, gain)
        masks, permutations = coalitions(
            n, exact_max_n=exact_max_n, n_permutations=n_permutations, seed=shapley_seed, sample_id=sample_id
        )
        masks = np.asarray(masks, dtype=np.int64)
        bits = (masks[:, None] >> np.arange(n)) & 1
        values = -float(rng.uniform(20.0, 80.0)) + bits @ phi
        k = masks.size
        columns["sample_id"] += [sample_id] * k
        columns["response_sha256"] += [response_sha256(text_of[sample_id])] * k
        columns["mask"] += masks.tolist()
        columns["n_evidence"] += [n] * k
        columns["value"] += values.tolist()
        columns["n_response_tokens"] += [length_of[sample_id]] * k
        columns["scorer"] += [scorer] * k
        columns["permutations"] += [permutations.tolist() if permutations is not None else None] + [None] * (k - 1)
        truth.append({"sample_id": sample_id, "balance": t, "dominant": dominant, "phi": phi.tolist()})
    return (
        pa.table(columns, schema=VALUE_SCHEMA),
        pa.Table.from_pylist(skipped, schema=SKIP_SCHEMA),
        pa.Table.from_pylist(truth, schema=PLANTED_TRUTH_SCHEMA),
    )


def plant_causal(attributions: pa.Table, *, model: str) -> pa.Table:
    """Table 3's rows (rule ``causal_intervention``,
    :data:`~conflictlab.contextconflict.causal.CAUSAL_SCHEMA`) of the planted
    additive game: leaving out piece i lowers the log-likelihood by φ_i, so
    Δ_high = max φ and Δ_low = min φ; ll_full = v(full). One row per
    attribution row with defined shares."""

    rows = []
    for row in attributions.filter(pc.invert(attributions.column("undefined"))).to_pylist():
        high, low = extreme_pieces(row["phi"])
        full = row["v_full"]
        rows.append(
            {
                "sample_id": row["sample_id"],
                "model": model,
                "scorer": row["scorer"],
                "conflict_type": row["conflict_type"],
                "high_piece": high + 1,
                "low_piece": low + 1,
                "ll_full": full,
                "ll_without_high": full - row["phi"][high],
                "ll_without_low": full - row["phi"][low],
                "delta_high": row["phi"][high],
                "delta_low": row["phi"][low],
            }
        )
    return pa.Table.from_pylist(rows, schema=CAUSAL_SCHEMA)


def plant_faithfulness(
    samples: pa.Table,
    responses: pa.Table,
    *,
    model: str,
    judge: str,
    supported_share: float = 0.75,
    statements: int = 4,
    seed: int = 0,
) -> pa.Table:
    """RAGAS Faithfulness rows (rule ``judge_faithfulness``,
    :data:`conflictlab.judges.faithfulness.FAITHFULNESS_SCHEMA`), one per
    response of ``model``: ``statements`` pseudo-statements each, of which
    ``round(supported_share * statements)`` are supported (chosen per
    response), so every faithfulness is that share exactly."""

    rng, words = np.random.default_rng(seed), Words(seed)
    type_of = dict(zip(*(samples.column(c).to_pylist() for c in ("sample_id", "conflict_type"))))
    rows = []
    for sample_id in responses.column("sample_id").to_pylist():
        verdicts = chosen(statements, supported_share, rng).astype(int).tolist()
        rows.append(
            {
                "sample_id": sample_id,
                "model": model,
                "conflict_type": type_of[sample_id],
                "judge": judge,
                "status": "ok",
                "statements": [words.sized((8, 3)) for _ in range(statements)],
                "verdicts": verdicts,
                "faithfulness": sum(verdicts) / statements,
            }
        )
    return pa.Table.from_pylist(rows, schema=FAITHFULNESS_SCHEMA)


def plant_activations(
    samples: pa.Table,
    templates: dict[str, str],
    *,
    n_layers: int,
    hidden_size: int,
    separation: float = 4.0,
    from_layer: int | None = None,
    drop_last: int = 1,
    matched: bool = False,
    seed: int = 0,
) -> dict[str, tuple[np.ndarray, pa.Table]]:
    """One type's last-token states (rule ``activations``): for each analysis
    (``pairs``, ``projection``, ``directions``) an array of shape (prompts,
    ``n_layers``, ``hidden_size``) in :data:`~conflictlab.contextconflict.pairs.STORED_DTYPE`
    and its :data:`~conflictlab.contextconflict.pairs.INDEX_SCHEMA` index,
    the prompts those of the real rule (lengths in
    :class:`~conflictlab.fake_text.WordTokenizer` words).

    Planted truth: states are standard normal, and in ``pairs`` the
    conflict prompts are shifted by ``separation`` along one random unit
    direction from layer ``from_layer`` on (default: half the layers), so a
    linear probe separates conflict from consistent there and not before.
    """

    rng, tokenizer, rows = np.random.default_rng(seed), WordTokenizer(), samples.to_pylist()
    prompts = {
        "pairs": pair_prompts(tokenizer, rows, templates, drop_last=drop_last),
        "projection": projection_prompts(tokenizer, rows, templates, matched=matched),
        "directions": direction_prompts(tokenizer, rows, templates),
    }
    direction = rng.standard_normal(hidden_size)
    direction /= np.linalg.norm(direction)
    start = n_layers // 2 if from_layer is None else from_layer
    planted = {}
    for analysis, listed in prompts.items():
        states = rng.standard_normal((len(listed), n_layers, hidden_size)).astype(np.float32)
        if analysis == "pairs":
            conflict = np.array([p["variant"] == "conflict" for p in listed])
            states[conflict, start:, :] += separation * direction.astype(np.float32)
        planted[analysis] = (states.astype(STORED_DTYPE[analysis]), activation_index(listed))
    return planted

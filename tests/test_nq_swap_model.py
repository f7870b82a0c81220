"""NQ-Swap's answering job on a tiny random model of SmolLM2's architecture: every run answers every item, each
run is the prompt and decoding its name says, and the steered run is steered by its cross-fitted direction."""

from pathlib import Path

import pytest

from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load
from conflictlab.lm.methods import ADACAD_SHORT_ANSWER_FLOOR, as_method, contrast_logits
from conflictlab.nq_swap.dataset import build_items, read_local
from conflictlab.nq_swap.generation import answer_items, run_names
from conflictlab.nq_swap.prompts import closed_book_prompt, context_prompt

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "nq_swap" / "dev.jsonl"
PARAMS = DecodingParams(max_new_tokens=4)
METHODS = ["cad-a1", "adacad", "cfp-opinion"]
ORIGINAL_METHODS = ["cad-a1"]  # CAD's NQ column: CAD on the original context


@pytest.fixture(scope="module")
def answered(tiny_llama_dir):
    lm = load(tiny_llama_dir, dtype="float32")
    items = build_items(read_local(DEMO), source="demo", on_error="fail", max_items=6, seed=0).items
    steering = {"alpha": 8.0, "layers": None, "schedule": "all_tokens", "folds": 2, "seed": 0, "batch_size": 4}
    responses = answer_items(
        lm,
        HFBackend(lm, batch_size=4),
        items,
        model="tiny",
        methods=METHODS,
        steering=steering,
        params=PARAMS,
        limit=2048,
        original_methods=ORIGINAL_METHODS,
    )
    return lm, items, responses.to_pylist()


def texts(rows, run):
    return [r["text"] for r in rows if r["run"] == run]


def test_every_run_answers_every_item_once(answered):
    _, items, rows = answered
    runs = run_names(METHODS, {"alpha": 8.0}, ORIGINAL_METHODS)
    assert [r["run"] for r in rows] == [run for run in runs for _ in items]
    ids = [item["item_id"] for item in items]
    assert all([r["item_id"] for r in rows if r["run"] == run] == ids for run in runs)
    assert {r["fold"] for r in rows if r["run"] == "cas-a8"} == {0, 1}
    assert all(r["fold"] is None for r in rows if r["run"] != "cas-a8")


def test_each_run_is_its_prompt_under_its_decoding(answered):
    lm, items, rows = answered
    backend = HFBackend(lm, batch_size=4)

    def encode(texts):
        return [lm.tokenizer(t)["input_ids"] for t in texts]

    closed = encode([closed_book_prompt(i["question"]) for i in items])
    substituted = encode([context_prompt(i["sub_context"], i["question"]) for i in items])
    assert texts(rows, "closed_book") == [c.text for c in backend.generate(closed, PARAMS)]
    original = encode([context_prompt(i["org_context"], i["question"]) for i in items])
    assert texts(rows, "original") == [c.text for c in backend.generate(original, PARAMS)]
    opinion = encode([context_prompt(i["sub_context"], i["question"], "opinion") for i in items])
    assert texts(rows, "cfp-opinion") == [c.text for c in backend.generate(opinion, PARAMS)]
    adacad = as_method("adacad")
    by_hand = backend.generate_contrastive(
        substituted, closed, PARAMS, lambda w, wo: contrast_logits(adacad, w, wo, floor=ADACAD_SHORT_ANSWER_FLOOR)[0]
    )
    assert texts(rows, "adacad") == [c.text for c in by_hand]
    cad = as_method("cad-a1")
    on_original = backend.generate_contrastive(
        original, closed, PARAMS, lambda w, wo: contrast_logits(cad, w, wo, floor=ADACAD_SHORT_ANSWER_FLOOR)[0]
    )
    assert texts(rows, "original-cad-a1") == [c.text for c in on_original]
    assert [r["prompt_tokens"] for r in rows if r["run"] == "original-cad-a1"] == [len(p) for p in original]
    # the steered run is no copy of the baseline: strength 8 along a unit direction moves a width-64 model
    assert texts(rows, "cas-a8") != texts(rows, "greedy")

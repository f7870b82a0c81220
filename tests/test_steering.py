from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
import torch

from conflictlab.contextconflict.dataset import load_released
from conflictlab.contextconflict.prompts import build_messages
from conflictlab.contextconflict.steering import (
    calibration_count,
    calibration_directions,
    direction_prompts,
    directions_from_states,
    steering_directions,
    steering_split,
)
from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load
from conflictlab.lm.steering import InjectionLog, Steering

from .conftest import DEMO


def _table(subset_sizes: dict[str, int]) -> pa.Table:
    rows = [{"sample_id": f"t/{s}/{i}", "subset": s} for s, n in subset_sizes.items() for i in range(n)]
    return pa.Table.from_pylist(rows)


def test_calibration_count():
    assert [calibration_count(n, 0.2) for n in (1, 2, 3, 5, 8, 10, 13)] == [0, 1, 1, 1, 2, 2, 3]
    assert calibration_count(4, 0.9) == 3  # always one left for test


def test_split_is_stratified_seeded_and_complete():
    table = _table({"a": 10, "b": 5, "c": 1})
    calibration, test = steering_split(table, calibration_fraction=0.2, seed=0)
    assert Counter(calibration.column("subset").to_pylist()) == {"a": 2, "b": 1}
    ids = calibration.column("sample_id").to_pylist() + test.column("sample_id").to_pylist()
    assert sorted(ids) == sorted(table.column("sample_id").to_pylist())  # disjoint and complete
    again, _ = steering_split(table, calibration_fraction=0.2, seed=0)
    assert again.equals(calibration)
    picks = {
        tuple(steering_split(table, calibration_fraction=0.2, seed=s)[0].column("sample_id").to_pylist())
        for s in range(8)
    }
    assert len(picks) > 1  # the seed matters
    order = test.column("sample_id").to_pylist()
    assert order == [i for i in table.column("sample_id").to_pylist() if i in set(order)]
    with pytest.raises(ValueError, match="calibration_fraction"):
        steering_split(table, calibration_fraction=1.0, seed=0)


def test_directions_follow_the_definitions():
    # 2 samples, 1 layer, 3 dims.
    singles = [np.array([[[1.0, 0, 0]], [[3.0, 0, 0]]]), np.array([[[0, 2.0, 0]], [[0, 4.0, 0]], [[0, 0, 0]]])]
    combined = np.array([[[0.0, 0, 1]], [[0.0, 0, 3]]])
    question = np.array([[[0.0, 0, 0]], [[0.0, 0, 0]]])
    d = steering_directions(combined, singles, question)
    mu_bar = np.array([1.0, 1.0, 0.0])  # mean of (2,0,0) and (0,2,0)
    expected = (mu_bar - np.array([0, 0, 2.0])) / np.linalg.norm(mu_bar - np.array([0, 0, 2.0]))
    np.testing.assert_allclose(d["mean_difference"][0], expected, rtol=1e-6)
    np.testing.assert_allclose(d["cas"][0], [0, 0, 1.0])
    assert d["mean_difference_norm"][0] == pytest.approx(np.sqrt(6))
    zero = steering_directions(combined, [combined[:1], combined[1:]], question)
    assert np.all(zero["mean_difference"] == 0) and zero["mean_difference_norm"][0] == 0  # no division by zero


@pytest.fixture(scope="module")
def smollm2(tiny_llama_dir):
    lm = load(tiny_llama_dir, dtype="float32")
    return lm.model, lm.tokenizer


def test_question_only_prompt_has_no_evidence(smollm2):
    _, tokenizer = smollm2
    samples = load_released(DEMO, "perspective").tables()[0].to_pylist()[:2]
    prompts = direction_prompts(tokenizer, samples, {"summarization": "summarization_simple"})
    assert Counter(p["variant"].split("_")[0] for p in prompts) == {
        "combined": 2,
        "question": 2,
        "single": sum(s["n_evidence"] for s in samples),
    }
    user = build_messages("reasoning_combined", "Who won?", [])[1]["content"]
    assert user.startswith("[Question]: Who won?") and "[Evidence" not in user
    states = np.random.default_rng(0).normal(size=(len(prompts), 3, 4))
    d = directions_from_states(prompts, states)
    assert d["mean_difference"].shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(d["cas"], axis=1), 1.0, rtol=1e-5)


def test_calibration_directions_from_every_sample_equal_those_of_the_calibration_prompts_alone(smollm2):
    """The activations rule stores the direction prompts of every sample; the
    directions taken from the calibration rows there are exactly those of the
    calibration samples' own prompts and states, and a calibration sample
    missing from the stored index is an error naming the file."""
    from conflictlab.contextconflict.pairs import activation_index

    _, tokenizer = smollm2
    samples = load_released(DEMO, "perspective").tables()[0].to_pylist()
    templates = {"summarization": "summarization_simple"}
    stored = direction_prompts(tokenizer, samples, templates)
    states = np.random.default_rng(1).normal(size=(len(stored), 3, 4)).astype(np.float32)
    state_of = {(p["sample_id"], p["variant"]): states[row] for row, p in enumerate(stored)}
    calibration = [samples[4], samples[1]]  # not in file order
    own = direction_prompts(tokenizer, calibration, templates)
    want = directions_from_states(own, np.stack([state_of[(p["sample_id"], p["variant"])] for p in own]))
    index = activation_index(stored).to_pylist()
    got = calibration_directions(index, states, [s["sample_id"] for s in calibration])
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])
    other = calibration_directions(index, states, [samples[0]["sample_id"], samples[2]["sample_id"]])
    assert not np.allclose(other["mean_difference"], got["mean_difference"])
    with pytest.raises(
        ValueError,
        match=r"directions/perspective.index.parquet: no direction prompts for calibration samples \['nope'\]",
    ):
        calibration_directions(index, states, ["nope"], source="directions/perspective.index.parquet")


def _left_padded(tokenizer, texts):
    tokenizer.padding_side = "left"
    return tokenizer(texts, return_tensors="pt", padding=True)


TEXTS = ["The capital of France is", "Water boils at a temperature of", "Hi"]


def _random_direction(model, seed=0):
    g = np.random.default_rng(seed)
    d = g.normal(size=(model.config.num_hidden_layers, model.config.hidden_size))
    return (d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)


def _generate(model, batch, steering=None, log=None, tokens=8):
    import contextlib

    ctx = steering.hooks(model, log) if steering else contextlib.nullcontext()
    with ctx, torch.inference_mode():
        out = model.generate(
            **batch, max_new_tokens=tokens, do_sample=False, pad_token_id=model.config.eos_token_id or 0
        )
    return out[:, batch["input_ids"].shape[1] :]


def test_alpha_zero_reproduces_generation(smollm2):
    model, tokenizer = smollm2
    batch = _left_padded(tokenizer, TEXTS)
    base = _generate(model, batch)
    direction = _random_direction(model)
    for schedule in ("first_generated", "all_tokens"):
        assert torch.equal(_generate(model, batch, Steering(direction, 0.0, schedule)), base)


@pytest.mark.parametrize("schedule", ["first_generated", "all_tokens"])
def test_steering_adds_alpha_u_to_the_hooked_layer_output(smollm2, schedule):
    model, tokenizer = smollm2
    batch = _left_padded(tokenizer, TEXTS)
    direction, layer, alpha = _random_direction(model, seed=3), 4, 2.5
    with torch.inference_mode():
        plain = model(**batch, output_hidden_states=True).hidden_states
        with Steering(direction, alpha, schedule, layers=(layer,)).hooks(model):
            steered = model(**batch, output_hidden_states=True).hidden_states
    # hidden_states[l + 1] is decoder layer l's output
    for earlier in range(layer + 1):
        assert torch.equal(steered[earlier], plain[earlier])
    moved = steered[layer + 1][:, -1] - plain[layer + 1][:, -1]
    expected = alpha * torch.as_tensor(direction[layer]).expand_as(moved)
    torch.testing.assert_close(moved, expected, atol=1e-4, rtol=1e-4)
    assert torch.equal(steered[layer + 1][:, :-1], plain[layer + 1][:, :-1])  # the prompt before the last position


def test_injection_counts_per_schedule(smollm2):
    model, tokenizer = smollm2
    batch = _left_padded(tokenizer, TEXTS)
    width = batch["input_ids"].shape[1]
    n_layers = model.config.num_hidden_layers
    direction = _random_direction(model)

    first = InjectionLog()
    _generate(model, batch, Steering(direction, 1.0, "first_generated"), first)
    assert len(first.additions) == n_layers  # one position per sequence, each layer once
    assert {(f, rows, pos, w) for f, _, rows, pos, w in first.additions} == {(0, len(TEXTS), width - 1, width)}

    every = InjectionLog()
    generated = _generate(model, batch, Steering(direction, 1.0, "all_tokens", layers=(0, 5)), every)
    assert every.forwards == generated.shape[1]  # one forward per generated token
    per_step = Counter(f for f, *_ in every.additions)
    assert per_step == {step: 2 for step in range(every.forwards)}  # layers 0 and 5, once per decoding step
    assert all(pos == w - 1 and rows == len(TEXTS) for _, _, rows, pos, w in every.additions)
    assert all(w == 1 for f, _, _, _, w in every.additions if f > 0)  # decode steps: only the fed token


def test_left_padding_and_earlier_positions_untouched(smollm2):
    model, tokenizer = smollm2
    batch = _left_padded(tokenizer, TEXTS)
    assert batch["attention_mask"][:, 0].tolist().count(0) >= 1  # there is padding
    steering = Steering(_random_direction(model), 50.0, "first_generated")
    with torch.inference_mode():
        plain = model(**batch).logits
        with steering.hooks(model):
            steered = model(**batch).logits
    assert torch.equal(steered[:, :-1], plain[:, :-1])  # padding and earlier prompt positions
    assert not torch.allclose(steered[:, -1], plain[:, -1])


def test_right_padding_is_refused_and_hooks_removed_on_error(smollm2):
    model, tokenizer = smollm2
    tokenizer.padding_side = "right"
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)
    tokenizer.padding_side = "left"
    # transformers registers hooks of its own (output_hidden_states recording): compare, not "none"
    before = (dict(model._forward_pre_hooks), [dict(layer._forward_hooks) for layer in model.get_decoder().layers])
    steering = Steering(_random_direction(model), 1.0, "all_tokens")
    with pytest.raises(ValueError, match="left-padded"):
        with steering.hooks(model), torch.inference_mode():
            model(**batch)
    with pytest.raises(RuntimeError, match="boom"):
        with steering.hooks(model):
            raise RuntimeError("boom")
    after = (dict(model._forward_pre_hooks), [dict(layer._forward_hooks) for layer in model.get_decoder().layers])
    assert after == before
    with pytest.raises(ValueError, match="schedule"):
        Steering(_random_direction(model), 1.0, "every_other")


def test_backend_applies_steering(tiny_llama_dir, smollm2):
    _, tokenizer = smollm2
    prompts = [tokenizer(t)["input_ids"] for t in TEXTS]
    params = DecodingParams(max_new_tokens=6)
    lm = load(tiny_llama_dir)
    plain = HFBackend(lm, batch_size=2).generate(prompts, params)
    direction = _random_direction(smollm2[0])
    zero = HFBackend(lm, batch_size=2, steering=Steering(direction, 0.0, "all_tokens")).generate(prompts, params)
    assert [c.token_ids for c in zero] == [c.token_ids for c in plain]

    class Counted(Steering):
        entered = []

        def hooks(self, model, log=None):
            self.entered.append(model)
            return super().hooks(model, log)

    HFBackend(lm, batch_size=2, steering=Counted(direction, 1.0, "all_tokens")).generate(prompts, params)
    assert Counted.entered and all(
        m is lm.model for m in Counted.entered
    )  # hooked on the backend's own model, per batch


def test_variant_names_round_trip_and_pick_their_direction(tmp_path):
    from conflictlab.contextconflict.generation import variant_steering
    from conflictlab.contextconflict.steering import all_variants, save_directions, table4_variants, variant_schedule
    from conflictlab.contextconflict.variants import SteeringVariant

    assert table4_variants(1.0) == ["base", "all_tokens-a1", "first_generated-a1", "cas-a1"]
    assert all_variants(1.0, [0.5, 1.0]) == [
        "base",
        "all_tokens-a1",
        "first_generated-a1",
        "cas-a1",
        "all_tokens-a0.5",
        "first_generated-a0.5",
    ]
    for method, alpha in (("all_tokens", 0.5), ("cas", 2.0), ("first_generated", 1.5)):
        assert SteeringVariant.parse(SteeringVariant(method, alpha).format()) == SteeringVariant(method, alpha)
    assert SteeringVariant.parse("base") == SteeringVariant("base", 0.0)
    with pytest.raises(ValueError, match="not a steering variant"):
        SteeringVariant.parse("sideways-a1")
    assert variant_schedule("cas-a1", cas_schedule="first_generated") == "first_generated"
    assert variant_schedule("all_tokens-a2", cas_schedule="first_generated") == "all_tokens"
    assert variant_schedule("base", cas_schedule="all_tokens") is None

    md, cas = np.eye(2, 4, dtype=np.float32), np.eye(2, 4, k=2, dtype=np.float32)
    path = tmp_path / "d.npz"
    save_directions(
        path, {"mean_difference": md, "cas": cas, "mean_difference_norm": np.ones(2), "cas_norm": np.ones(2)}, ["x"]
    )
    assert variant_steering("base", 0.0, None, path) is None
    steered = variant_steering("cas", 2.0, "all_tokens", path, layers=[1])
    np.testing.assert_array_equal(steered.direction, cas)
    assert (steered.alpha, steered.schedule, steered.layers) == (2.0, "all_tokens", (1,))
    np.testing.assert_array_equal(variant_steering("first_generated", 1.0, "first_generated", path).direction, md)


def test_table4_columns_order_and_marks_column():
    from conflictlab.contextconflict.steering import STEERING_RESULT_SCHEMA, table4, table4_columns, with_marks

    def row(variant, method, metric, conflict_type, value):
        return {
            "model": "m",
            "variant": variant,
            "method": method,
            "alpha": 1.0,
            "metric": metric,
            "conflict_type": conflict_type,
            "value": value,
            "ci_low": value - 0.01,
            "ci_high": value + 0.01,
            "n": 12,
        }

    results = pa.Table.from_pylist(
        [row(v, m, "balance", "perspective", b) for v, m, b in (("base", "base", 0.5), ("cas-a1", "cas", 0.3))]
        + [
            row(v, m, "accuracy", t, a)
            for t in ("temporal", "inferential")
            for v, m, a in (("base", "base", 0.0), ("cas-a1", "cas", 1.0))
        ],
        schema=STEERING_RESULT_SCHEMA,
    )
    ids = [f"s{i}" for i in range(12)]
    items = {
        ("m@base", "balance", "perspective"): (ids, np.full(12, 0.5)),
        ("m@cas-a1", "balance", "perspective"): (ids, np.full(12, 0.3)),
    }
    for t in ("temporal", "inferential"):
        items |= {("m@base", "accuracy", t): (ids, np.zeros(12)), ("m@cas-a1", "accuracy", t): (ids, np.ones(12))}
    columns = table4_columns(results)
    assert columns == [("accuracy", "inferential"), ("accuracy", "temporal"), ("balance", "perspective")]
    rows, notes = table4(results, table_variants=["base", "cas-a1"], columns=columns, items=items, min_n=4)
    marked = with_marks(results, rows).to_pylist()
    marks = {(r["variant"], r["metric"], r["conflict_type"]): r["mark"] for r in marked}
    # 12 of 12 discordant pairs: exact McNemar p = 2 / 2**12
    assert marks[("cas-a1", "accuracy", "temporal")] == "best" and marks[("base", "accuracy", "temporal")] == ""
    assert marks[("cas-a1", "balance", "perspective")] == "best"  # lower Balance is better
    assert len(marked) == results.num_rows
    rows, notes = table4(results, table_variants=["base", "cas-a1"], columns=columns, min_n=4)
    assert not any(cell["mark"] for r in rows for cell in r.values() if isinstance(cell, dict))
    assert any(n.startswith("no marks (no per-item values to pair)") for n in notes)


def test_table4_marks_only_where_paired_tests_say_so_and_enough_n():
    from conflictlab.contextconflict.steering import STEERING_RESULT_SCHEMA, paired_results, table4

    def row(variant, method, value, n):
        return {
            "model": "m",
            "variant": variant,
            "method": method,
            "alpha": 1.0,
            "metric": "balance",
            "conflict_type": "perspective",
            "value": value,
            "ci_low": value - 0.1,
            "ci_high": value + 0.1,
            "n": n,
        }

    results = pa.Table.from_pylist(
        [row("base", "base", 0.5, 40), row("cas-a1", "cas", 0.45, 40)], schema=STEERING_RESULT_SCHEMA
    )
    columns = [("balance", "perspective")]
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 1, 40)  # Balance lies in [0, 1], and so does base - 0.2
    items = {
        ("m@base", "balance", "perspective"): (list(range(40)), base),
        ("m@cas-a1", "balance", "perspective"): (list(range(40)), base - 0.2),
    }
    rows, notes = table4(results, table_variants=["base", "cas-a1"], columns=columns, items=items, min_n=30)
    assert [r["balance:perspective"]["mark"] for r in rows] == ["", "best"]
    # noise as large as the gain: the paired test does not say so
    noisy = {
        **items,
        ("m@cas-a1", "balance", "perspective"): (list(range(40)), np.clip(base + rng.normal(0, 0.5, 40), 0, 1)),
    }
    rows, notes = table4(results, table_variants=["base", "cas-a1"], columns=columns, items=noisy, min_n=30)
    assert [r["balance:perspective"]["mark"] for r in rows] == ["", ""]
    assert any("no variant beats every other in paired tests" in note for note in notes)
    rows, notes = table4(results, table_variants=["base", "cas-a1"], columns=columns, items=items, min_n=41)
    assert [r["balance:perspective"]["mark"] for r in rows] == ["", ""] and any("n < 41" in note for note in notes)
    paired = {r["variant"]: r for r in paired_results(results, items).to_pylist()}
    assert paired["base"]["difference"] is None and paired["cas-a1"]["n_pairs"] == 40
    assert (
        paired["cas-a1"]["difference"] == pytest.approx(-0.2) and paired["cas-a1"]["difference_low"] is None
    )  # no spread
    assert paired["cas-a1"]["p_paired_text"] == "< 1e-4"


def test_cell_items_keep_defined_shares_and_scored_responses_only():
    from conflictlab.contextconflict.steering import cell_items

    accuracy = pa.table({"model": ["m@base"], "conflict_type": ["temporal"], "sample_id": ["e"], "correct": [True]})
    attributions = pa.table(
        {
            "model": ["m@base", "m@base", "m@cas-a1"],
            "conflict_type": ["ambiguity"] * 3,
            "sample_id": ["a", "b", "a"],
            "balance": [0.2, None, 0.4],
            "undefined": [False, True, False],
        }
    )
    judged = pa.table(
        {
            "model": ["m@base", "m@base"],
            "conflict_type": ["temporal", "temporal"],
            "sample_id": ["c", "d"],
            "faithfulness": [0.5, None],
        }
    )
    items = {key: (ids, list(values)) for key, (ids, values) in cell_items(accuracy, attributions, judged).items()}
    assert items == {
        ("m@base", "accuracy", "temporal"): (["e"], [1.0]),
        ("m@base", "balance", "ambiguity"): (["a"], [0.2]),
        ("m@cas-a1", "balance", "ambiguity"): (["a"], [0.4]),
        ("m@base", "faithfulness", "temporal"): (["c"], [0.5]),
    }
    assert cell_items(None, None, None) == {}

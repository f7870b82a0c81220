import re

import numpy as np
import pyarrow as pa
import pytest

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA, answer_token_ids
from conflictlab.arbitration.prompts import (
    ArbitrationConfig,
    encode_arbitration_prompt,
    generate_instances,
    sensitivity_variants,
)
from conflictlab.arbitration.report import accuracy_by_cell
from conflictlab.arbitration.trajectories import TrajectoryConfig, sample_trajectory
from conflictlab.stats import proportion_interval

TIMESTAMP = re.compile(r"\b\d{2}:\d{2}\b")


@pytest.mark.parametrize(
    "cfg",
    [
        TrajectoryConfig(),
        TrajectoryConfig(length=32, sigma=0.1, margin=(0.15, 0.25)),
        TrajectoryConfig(length=8, sigma=0.01),
    ],
)
def test_trajectory_invariants_over_thousands_of_draws(cfg):
    rng = np.random.default_rng(0)
    labels = ["high", "low"] * 1000
    for label in labels:
        t = sample_trajectory(label, cfg, rng)
        assert len(t.values) == cfg.length
        assert min(t.values) >= 0.0 and max(t.values) <= 1.0
        assert cfg.margin[0] <= t.margin <= cfg.margin[1]
        assert (t.target > 0.5) == (label == "high")
        assert abs(t.target - 0.5) == pytest.approx(t.margin)
        assert -0.05 <= t.slope <= 0.05


@pytest.mark.parametrize("cfg", [TrajectoryConfig(), TrajectoryConfig(length=32, sigma=0.1, margin=(0.15, 0.25))])
def test_observed_series_support_their_label_and_the_forward_check_rejects(cfg):
    rng = np.random.default_rng(0)
    supported, rejected = 0, 0
    for i in range(1000):
        label = ("high", "low")[i % 2]
        t = sample_trajectory(label, cfg, rng)
        values = np.array(t.values)
        # what a reader of the series alone would project: the trend of its last six points
        slope = np.polyfit(np.arange(6), values[-6:], 1)[0]
        supported += ((values[-1] + slope * cfg.horizon) > 0.5) == (label == "high")
        rejected += t.attempts > 1
    assert supported >= 970  # 100% and 98.4% on 2,000 draws
    assert rejected >= 300  # draws that failed the forward or range check first: the checks bite


def test_invalid_configuration_is_refused():
    with pytest.raises(ValueError, match="invalid configuration: m_low=0.1 < 1.5·σ·√k"):
        TrajectoryConfig(sigma=0.1, margin=(0.1, 0.2)).validate()
    with pytest.raises(ValueError, match="invalid configuration"):
        generate_instances(ArbitrationConfig(trajectory=TrajectoryConfig(horizon=9, sigma=0.1, margin=(0.35, 0.45))))


@pytest.fixture(scope="module")
def instances():
    return generate_instances(ArbitrationConfig(n_per_setting=200, seeds=(0, 1)))


def test_labels_balanced_and_sources_alternate(instances):
    rows = instances.to_pylist()
    for setting in ("modality", "recency", "reliability", "tool"):
        conflict = [r for r in rows if r["setting"] == setting and r["order"] == "aligned_first"]
        assert len(conflict) == 400
        assert sum(r["label"] == "high" for r in conflict) == 200
        assert sum(r["aligned_source"] == "text" for r in conflict) == 200
        assert sum(r["aligned_source"] == "numbers" for r in conflict) == 200


def test_tool_setting_keeps_the_context_modality(instances):
    from conflictlab.arbitration.report import accuracy_by_cell

    tool = [r for r in instances.to_pylist() if r["setting"] == "tool"]
    for row in tool:  # the context shown is the aligned source's modality
        assert ("Time series:" in row["prompt"]) == (row["aligned_source"] == "numbers")
        assert ("Text summary:" in row["prompt"]) == (row["aligned_source"] == "text")
    ids = [r["instance_id"] for r in tool]
    predictions = pa.table(
        {
            "instance_id": ids,
            "model": ["m"] * len(ids),
            "logit_a": [1.0] * len(ids),
            "logit_b": [0.0] * len(ids),
            "predicted_letter": ["A"] * len(ids),
            "correct": [True] * len(ids),
        }
    )
    cells = accuracy_by_cell(instances, predictions)
    sources = {c["aligned_source"] for c in cells if c["setting"] == "tool"}
    assert sources == {"numbers", "text"}  # Figure 4 G-H: one bar per context modality


def test_texts_have_no_digits_outside_timestamps(instances):
    for row in instances.to_pylist():
        for summary in re.findall(r'Text summary:\n"([^"]*)"', row["prompt"]):
            assert not re.search(r"\d", TIMESTAMP.sub("", summary)), summary


def test_unreliable_series_have_half_nan(instances):
    import json

    rows = [r for r in instances.to_pylist() if r["setting"] == "reliability" and r["condition"] == "conflict"]
    with_nan = 0
    for row in rows:
        series = re.search(r"Time series:\n((?:\d{2}:\d{2}: \S+\n?)+)", row["prompt"]).group(1).strip().splitlines()
        nans = sum(line.endswith("nan") for line in series)
        if row["aligned_source"] == "text":  # the numbers are the unreliable source
            assert nans == len(series) // 2 == len(json.loads(row["latent"])["nan_positions"])
            with_nan += 1
        else:
            assert nans == 0
            assert "partially corrupted data" in row["prompt"]
    assert with_nan == len(rows) // 2


def test_tool_forecasts_on_the_wrong_side(instances):
    import json

    for row in instances.to_pylist():
        if row["setting"] != "tool" or row["condition"] != "conflict":
            continue
        forecast = json.loads(row["latent"])["tool_forecast"]
        assert abs(forecast - 0.5) >= 0.15
        assert (forecast > 0.5) != (row["label"] == "high")
        shown = float(
            re.search(r"External forecasting tool risk prediction at time \d{2}:\d{2}: ([\d.]+)", row["prompt"]).group(
                1
            )
        )
        assert shown == pytest.approx(forecast, abs=0.005)


def test_recency_windows_and_orders(instances):
    row = next(r for r in instances.to_pylist() if r["setting"] == "recency" and r["order"] == "aligned_last")
    first_block, second_block = row["prompt"].split("\n\n")[2:4]
    assert "different time windows" in row["prompt"]
    # the aligned (last) block is the more recent window
    assert max(TIMESTAMP.findall(second_block)) > max(TIMESTAMP.findall(first_block))
    assert row["prompt"].endswith(
        "A) high\nB) low\n\nAnswer with only A or B. Do not add any explanation or additional text.\n\nAnswer:"
    )


def test_same_seed_same_bytes():
    cfg = ArbitrationConfig(n_per_setting=8, seeds=(5,))
    a, b = generate_instances(cfg), generate_instances(cfg)
    assert a.equals(b)
    c = generate_instances(ArbitrationConfig(n_per_setting=8, seeds=(6,)))
    assert a.column("prompt").to_pylist() != c.column("prompt").to_pylist()


def test_sensitivity_variants_change_one_factor():
    variants = dict(
        sensitivity_variants(
            ArbitrationConfig(),
            {
                "domains": ["finance"],
                "sigmas": [0.01],
                "margins": [[0.15, 0.25]],
                "answer_choices": [{"a_means": "low", "a_first": False}],
            },
        )
    )
    assert set(variants) == {
        "sens/baseline",
        "sens/domain=finance",
        "sens/sigma=0.01",
        "sens/margin=0.15-0.25",
        "sens/choices=A-low-second",
    }
    rows = generate_instances(variants["sens/choices=A-low-second"], tag="x").to_pylist()
    assert rows[0]["prompt"].endswith(
        "B) high\nA) low\n\nAnswer with only A or B. Do not add any explanation or additional text.\n\nAnswer:"
    )
    assert {r["answer_letter"] for r in rows if r["label"] == "high"} == {"B"}


# Both architectures here (SmolLM2's chat model, Gemma-3's base model with its
# " A"/" B" answers): the smoke DAG reads arbitration out on SmolLM2's only.
@pytest.mark.slow
@pytest.mark.parametrize("folder", ["tiny_llama_dir", "tiny_gemma_dir"])
def test_logit_readout_equals_argmax_of_full_forward(request, folder):
    import torch

    from conflictlab.lm.choices import choice_logits
    from conflictlab.lm.loading import load

    lm = load(request.getfixturevalue(folder), dtype="float32")
    model, tokenizer = lm.model, lm.tokenizer
    ids = answer_token_ids(tokenizer, chat=lm.has_chat_template)
    rows = generate_instances(ArbitrationConfig(n_per_setting=2, seeds=(0,))).to_pylist()[:5]
    prompts = [encode_arbitration_prompt(tokenizer, r["prompt"]) for r in rows]
    batched = choice_logits(lm, prompts, ids, batch_size=3)
    for prompt, got in zip(prompts, batched):
        with torch.inference_mode():
            full = model(input_ids=torch.tensor([prompt])).logits[0, -1]
        assert got == pytest.approx(full[list(ids)].numpy(), abs=1e-3)
        assert (got[0] > got[1]) == bool(full[ids[0]] > full[ids[1]])


def test_calibrated_readout_removes_a_constant_letter_bias():
    import pyarrow as pa

    instances = generate_instances(ArbitrationConfig(n_per_setting=4, seeds=(0,), settings=("modality",)))
    rows = instances.to_pylist()
    # A model that always prefers "A" by 5 logits, but by 1 more when "A" is right.
    margins = [5.0 + (1.0 if r["answer_letter"] == "A" else 0.0) for r in rows]
    predictions = pa.table(
        {
            "instance_id": [r["instance_id"] for r in rows],
            "model": ["m"] * len(rows),
            "logit_a": margins,
            "logit_b": [0.0] * len(rows),
            "predicted_letter": ["A"] * len(rows),
            "correct": [r["answer_letter"] == "A" for r in rows],
            "read_out": ["logits"] * len(rows),
        },
        schema=PREDICTION_SCHEMA,
    )
    cells = accuracy_by_cell(instances, predictions)
    assert {c["accuracy"] for c in cells} == {0.5}
    assert all(c["calibrated"] == 1.0 for c in cells)


def test_mean_over_seeds_on_hand_made_cells():
    from conflictlab.arbitration.report import mean_over_seeds

    cell = {
        "model": "m",
        "setting": "modality",
        "order": "aligned_first",
        "condition": "conflict",
        "aligned_source": "text",
        "n": 4,
    }
    rows = mean_over_seeds(
        [
            {**cell, "seed": 0, "n_correct": 1, "accuracy": 0.25, "calibrated": 0.5},
            {**cell, "seed": 1, "n_correct": 3, "accuracy": 0.75, "calibrated": 1.0},
            {**cell, "aligned_source": "numbers", "seed": 0, "n_correct": 4, "accuracy": 1.0, "calibrated": 1.0},
        ]
    ).to_pylist()
    numbers, text = rows  # sorted by key: numbers before text
    assert (text["n_seeds"], text["n_per_seed"], text["accuracy"], text["calibrated_accuracy"]) == (2, 4, 0.5, 0.75)
    assert text["std"] == pytest.approx(np.std([0.25, 0.75], ddof=1))
    assert numbers["n_seeds"] == 1 and np.isnan(numbers["std"])
    # Clopper-Pearson over the 8 instances of both seeds; 4 of 4 is not a zero-width [100, 100]
    assert text["n"] == 8 and (text["ci_low"], text["ci_high"]) == pytest.approx(proportion_interval(4, 8)[1:])
    assert (
        numbers["ci_high"] == 1.0
        and numbers["ci_low"] == pytest.approx(proportion_interval(4, 4)[1])
        and numbers["ci_low"] < 0.6
    )


def test_a_prediction_is_correct_only_when_its_larger_logit_is_the_gold_letter():
    from conflictlab.arbitration.evaluation import _predictions

    instances = pa.table({"instance_id": ["a", "b", "c", "d"], "answer_letter": ["A", "B", "A", "B"]})
    logits = np.array([[2.0, 1.0], [2.0, 1.0], [0.5, 0.5], [-1.0, 3.0]])
    table = _predictions(instances, logits, ["logits"] * 4, "m")
    assert table.schema == PREDICTION_SCHEMA
    assert table.column("predicted_letter").to_pylist() == ["A", "A", "tie", "B"]
    assert table.column("correct").to_pylist() == [True, False, False, True]  # a tie is wrong


def test_sensitivity_table_on_hand_made_predictions():
    from conflictlab.arbitration.report import sensitivity_table

    ids, meta, correct = [], [], []

    def add(variant, condition, source, order, hits):
        for i, hit in enumerate(hits):
            instance_id = f"sens/{variant}/modality/s0/{condition}-{source}-{order}-{i}"
            ids.append(instance_id)
            meta.append(
                {
                    "instance_id": instance_id,
                    "condition": condition,
                    "order": order,
                    "aligned_source": source,
                    "seed": 0,
                }
            )
            correct.append(hit)

    add("baseline", "conflict", "text", "aligned_first", [True, True, False, False])  # 0.5
    add("sigma=0.01", "conflict", "text", "aligned_first", [True, True, True, False])  # 0.75: |delta| 0.25
    add("sigma=0.1", "conflict", "text", "aligned_first", [False, False, False, False])  # 0.0: |delta| 0.5
    add("baseline", "unimodal", "numbers", None, [True, False])  # 0.5
    add("sigma=0.01", "unimodal", "numbers", None, [True, True])  # |delta| 0.5
    instances = pa.Table.from_pylist(meta)
    predictions = pa.table({"instance_id": ids, "model": ["m"] * len(ids), "correct": correct})
    rows = {(r["factor"], r["condition"]): r for r in sensitivity_table(instances, predictions).to_pylist()}
    conflict = rows[("sigma", "conflict")]
    assert conflict["n_deltas"] == 2 and conflict["mean_abs_delta"] == pytest.approx(0.375)
    assert conflict["std_abs_delta"] == pytest.approx(np.std([0.25, 0.5], ddof=1))
    assert rows[("sigma", "numbers only")]["mean_abs_delta"] == pytest.approx(0.5)
    assert rows[("sigma", "text only")]["n_deltas"] == 0 and np.isnan(rows[("sigma", "text only")]["mean_abs_delta"])


def test_figure_a1_draws_the_latent_trajectories_of_the_first_instances_per_label():
    import json

    import matplotlib.pyplot as plt

    from conflictlab.arbitration.report import trajectory_examples

    table = generate_instances(
        ArbitrationConfig(n_per_setting=6, seeds=(0,), trajectory=TrajectoryConfig(length=8, horizon=2))
    )
    fig = trajectory_examples(table, horizon=2, per_label=2)
    unimodal = [r for r in table.to_pylist() if r["setting"] == "modality" and r["condition"] == "unimodal"]
    expected = [r for r in unimodal if r["label"] == "high"][:2] + [r for r in unimodal if r["label"] == "low"][:2]
    assert fig._suptitle.get_text().startswith("Generated trajectories (modality setting): 4 of 6 instances")
    for ax, row in zip(fig.axes, expected):
        latent = json.loads(row["latent"])
        truth, target, other = ax.get_lines()[:3]
        np.testing.assert_allclose(truth.get_xdata(), np.arange(1, 9))
        np.testing.assert_allclose(truth.get_ydata(), latent["truth"]["values"])
        assert (target.get_xdata()[0], target.get_ydata()[0]) == (10, latent["truth"]["target"])  # T + k = 8 + 2
        np.testing.assert_allclose(other.get_ydata(), latent["other"]["values"])
        assert ax.get_title().startswith(f"{row['label']}: margin {latent['truth']['margin']:.2f}")
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["high", "high", "low", "low"]
    plt.close(fig)

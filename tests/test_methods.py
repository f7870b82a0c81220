"""Conflict-resolution methods (conflictlab.lm.methods): their names, CAD's and
AdaCAD's arithmetic, the two-pass generation and the contrastive read-out.

The model tests use a two-layer Llama built here with random weights in
float64 (no prepared folder, so they stay fast): float64 keeps batched and
row-by-row logits equal far below any gap between two tokens' logits.
"""

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon

from conflictlab.lm.generation import Completion, DecodingParams, HFBackend, generate_with_method
from conflictlab.lm.loading import LoadedModel
from conflictlab.lm.methods import (
    ADACAD_LONG_FORM_FLOOR,
    ADACAD_SHORT_ANSWER_FLOOR,
    INSTRUCTION,
    Method,
    cad_logits,
    check_method_backend,
    contrast_logits,
    contrast_option_logits,
    contrast_weight,
    faithful_prompt,
    jensen_shannon,
    opinion_context,
    opinion_question,
)

VOCAB = 40
PAD = 0


class DigitsTokenizer:
    """Decodes token ids as their numbers (the tests compare ids, not text)."""

    def decode(self, tokens, skip_special_tokens=True):
        return " ".join(map(str, tokens))


@pytest.fixture(scope="module")
def tiny_lm() -> LoadedModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.3,
        pad_token_id=PAD,
        bos_token_id=1,
        eos_token_id=VOCAB - 1,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.float64).eval()
    return LoadedModel(model, DigitsTokenizer(), "tiny", "cpu", "float64", PAD, frozenset({VOCAB - 1}), False)


def with_eos(lm: LoadedModel, eos: int | None) -> LoadedModel:
    """``lm`` whose only end-of-sequence id is ``eos`` (None: it has none)."""
    eos_ids = frozenset() if eos is None else frozenset({eos})
    return LoadedModel(lm.model, lm.tokenizer, lm.path, lm.device, lm.dtype, lm.pad_id, eos_ids, False)


# Prompts of different lengths, so left padding differs between rows, and
# context-free versions that are their tails (the question without the context).
PROMPTS = [[1, 5, 9, 12, 7, 3, 22, 8], [1, 30, 4], [1, 17, 17, 2, 26, 11], [1, 6, 35, 14, 2]]
CONTEXT_FREE = [[1, 7, 3, 22, 8], [1, 4], [1, 11], [1, 14, 2]]
PARAMS = DecodingParams(max_new_tokens=10)


def next_logits(lm: LoadedModel, ids: list[int]) -> torch.Tensor:
    """Logits after ``ids``, one unpadded row, no cache: shape (vocab,)."""
    with torch.inference_mode():
        return lm.model(input_ids=torch.tensor([ids])).logits[0, -1]


# --------------------------------------------------------------------------
# names


@pytest.mark.parametrize(
    "text, method",
    [
        ("greedy", Method("greedy")),
        ("cad-a0.5", Method("cad", 0.5)),
        ("cad-a1", Method("cad", 1.0)),
        ("cad-a1e-05", Method("cad", 1e-5)),
        ("adacad", Method("adacad")),
        ("cfp-opinion", Method("cfp-opinion")),
        ("cfp-instructed", Method("cfp-instructed")),
        ("cfp-opinion_instructed", Method("cfp-opinion_instructed")),
    ],
)
def test_a_method_reads_back_from_its_name(text, method):
    import re

    assert Method.parse(text) == method
    assert method.format() == text
    assert re.fullmatch(Method.PATTERN, text)


@pytest.mark.parametrize(
    "text",
    [
        "cad-a0",
        "cad-a0.50",
        "cad-a01",
        "cad",
        "cad-0.5",
        "cad-a-1",
        "cad-ainf",
        "adacad-a1",
        "cfp-foo",
        "cfp",
        "Greedy",
        "base",
        "cas-a1",
        "",
        None,
        3,
    ],
)
def test_other_text_is_not_a_method(text):
    with pytest.raises(ValueError, match="not a method"):
        Method.parse(text)


def test_only_cad_takes_a_positive_finite_alpha():
    for bad in (0.0, -1.0, math.inf, math.nan, True):
        with pytest.raises(ValueError):
            Method("cad", bad)
    with pytest.raises(ValueError, match="takes no alpha"):
        Method("adacad", 0.5)
    with pytest.raises(ValueError, match="not a method"):
        Method("dola")
    assert Method("cad", 2).alpha == 2.0 and isinstance(Method("cad", 2).alpha, float)
    assert [m.contrastive for m in map(Method.parse, ["cad-a1", "adacad", "greedy", "cfp-opinion"])] == [
        True,
        True,
        False,
        False,
    ]
    assert Method.parse("cfp-opinion_instructed").prompt_style == "opinion_instructed"
    assert Method.parse("adacad").prompt_style is None


class _Built:
    """A built backend as check_method_backend sees it: a name, and generate_contrastive where it reads logits."""

    def __init__(self, name, contrastive):
        self.name = name
        if contrastive:
            self.generate_contrastive = lambda *args: None


@pytest.mark.parametrize("backend", ["vllm", "chat", "openai"])
@pytest.mark.parametrize("method", ["cad-a0.5", "adacad"])
def test_contrastive_methods_are_refused_where_no_logits_come_back(method, backend):
    with pytest.raises(ValueError) as refused:
        check_method_backend(method, _Built(backend, contrastive=False))
    assert method in str(refused.value) and repr(backend) in str(refused.value) and "logits" in str(refused.value)


@pytest.mark.parametrize("backend", ["hf", "vllm", "chat", "openai"])
def test_prompting_and_greedy_run_on_every_backend(backend):
    built = _Built(backend, contrastive=backend == "hf")
    assert check_method_backend("cfp-opinion", built) == Method("cfp-opinion")
    assert check_method_backend("greedy", built) == Method("greedy")


def test_hf_runs_the_contrastive_methods():
    assert check_method_backend("adacad", _Built("hf", contrastive=True)) == Method("adacad")


# --------------------------------------------------------------------------
# arithmetic on constructed logits


def test_cad_is_the_bracket_of_the_paper_row_by_row():
    with_context = torch.tensor([[2.0, 1.9, -1.0], [0.5, 0.0, 3.0]])
    without_context = torch.tensor([[3.0, 0.0, -1.0], [0.5, 1.0, 1.0]])
    alpha = torch.tensor([1.0, 0.25])
    expected = torch.tensor(
        [[2 * 2.0 - 3.0, 2 * 1.9 - 0.0, 2 * -1.0 + 1.0], [1.25 * 0.5 - 0.125, 1.25 * 0.0 - 0.25, 1.25 * 3.0 - 0.25]]
    )
    assert torch.allclose(cad_logits(with_context, without_context, alpha), expected)
    # the contrast moves the answer from the parametric favourite to the contextual one
    assert with_context[0].argmax() == 0 and cad_logits(with_context, without_context, 1.0)[0].argmax() == 1
    assert torch.equal(cad_logits(with_context, without_context, 0.0), with_context)


def test_cad_keeps_the_contextual_logit_where_a_pass_masks_a_token():
    with_context = torch.tensor([[1.0, -math.inf, 0.0, -math.inf]])
    without_context = torch.tensor([[0.0, 0.0, -math.inf, -math.inf]])
    out = cad_logits(with_context, without_context, 1.0)
    assert out[0, 0] == 2.0 and out[0, 1] == -math.inf and out[0, 2] == 0.0 and out[0, 3] == -math.inf


def test_jensen_shannon_is_scipys_squared_in_nats():
    generator = torch.Generator().manual_seed(3)
    p_logits = torch.randn(5, 11, generator=generator, dtype=torch.float64) * 2
    q_logits = torch.randn(5, 11, generator=generator, dtype=torch.float64) * 2
    ours = jensen_shannon(p_logits, q_logits).numpy()
    p, q = torch.softmax(p_logits, -1).numpy(), torch.softmax(q_logits, -1).numpy()
    theirs = np.array([jensenshannon(a, b) ** 2 for a, b in zip(p, q)])  # scipy's default base is e
    assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert np.allclose(jensen_shannon(p_logits, p_logits).numpy(), 0.0, atol=1e-15)
    # disjoint supports: the bound ln 2 (base 2 would give 1)
    disjoint = jensen_shannon(torch.tensor([[0.0, -math.inf]]), torch.tensor([[-math.inf, 0.0]]))
    assert disjoint.item() == pytest.approx(math.log(2))
    assert jensenshannon([1, 0], [0, 1], base=2) ** 2 == pytest.approx(1.0)


def test_adacads_weight_and_logits_follow_its_equation():
    # rows: agreement (small weight), strong conflict (large), partial
    with_context = torch.tensor([[2.0, 1.0, 0.0], [4.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
    without_context = torch.tensor([[2.0, 1.1, 0.0], [0.0, 4.0, 0.0], [0.0, 1.0, 1.0]], dtype=torch.float64)
    logits, alpha = contrast_logits(Method("adacad"), with_context, without_context)
    p, q = torch.softmax(with_context, -1).numpy(), torch.softmax(without_context, -1).numpy()
    expected_alpha = np.array([jensenshannon(a, b) ** 2 for a, b in zip(p, q)])
    assert np.allclose(alpha.numpy(), expected_alpha, rtol=1e-12)
    assert alpha[0] < 0.01 < alpha[2] < alpha[1] <= math.log(2)
    expected = (1 + expected_alpha[:, None]) * with_context.numpy() - expected_alpha[:, None] * without_context.numpy()
    assert np.allclose(logits.numpy(), expected, rtol=1e-12)
    cad_alpha = contrast_weight(Method("cad", 0.5), with_context, without_context)
    assert cad_alpha.tolist() == [0.5, 0.5, 0.5]
    # the authors' long-form floor: alpha = max(JSD, 0.3), rows above it unchanged
    floored = contrast_weight(Method("adacad"), with_context, without_context, floor=ADACAD_LONG_FORM_FLOOR).numpy()
    assert np.allclose(floored, np.maximum(expected_alpha, 0.3), rtol=1e-12)
    assert floored[0] == 0.3 and expected_alpha[1] > 0.3 and floored[1] == pytest.approx(expected_alpha[1])
    assert ADACAD_LONG_FORM_FLOOR == 0.3 and ADACAD_SHORT_ANSWER_FLOOR == 0.0


def test_contrast_of_option_logits():
    with_context = np.array([[2.0, 1.9], [0.0, 1.0]])
    without_context = np.array([[3.0, 0.0], [0.0, 2.0]])
    assert np.array_equal(contrast_option_logits(with_context, without_context, 0.0), with_context)
    assert np.allclose(contrast_option_logits(with_context, without_context, 1.0), [[1.0, 3.8], [0.0, 0.0]])
    assert np.allclose(
        contrast_option_logits(with_context, without_context, np.array([1.0, 0.5])), [[1.0, 3.8], [0.0, 0.5]]
    )
    with pytest.raises(ValueError, match="shapes"):
        contrast_option_logits(with_context, without_context[:1], 1.0)


# --------------------------------------------------------------------------
# context-faithful prompts


def test_context_faithful_prompts_render_the_authors_templates():
    context, question = 'The "Eiffel Tower" is in Rome.', "Where is the Eiffel Tower?"
    assert opinion_context(context) == 'Bob said "The Eiffel Tower is in Rome."'
    assert opinion_question(question) == "Where is the Eiffel Tower in Bob's opinion?"
    assert opinion_question("Name the city") == "Name the city in Bob's opinion?"
    assert faithful_prompt(context, question, "opinion") == (
        'Bob said "The Eiffel Tower is in Rome."\nQ: Where is the Eiffel Tower in Bob\'s opinion?\nA:'
    )
    assert faithful_prompt(context, question, "instructed") == f"{INSTRUCTION}\n\n{context}\nQ:{question}\nA:"
    assert faithful_prompt(context, question, "opinion_instructed") == f"{INSTRUCTION}\n\n" + faithful_prompt(
        context, question, "opinion"
    )
    with pytest.raises(ValueError, match="prompt style"):
        faithful_prompt(context, question, "attributed")


# --------------------------------------------------------------------------
# two-pass generation on a tiny random model


def cad_at_zero(with_context, without_context):
    return cad_logits(with_context, without_context, 0.0)


def test_cad_at_zero_reproduces_greedy_token_for_token(tiny_lm):
    backend = HFBackend(tiny_lm, batch_size=8)
    greedy = backend.generate(PROMPTS, PARAMS)
    contrastive = backend.generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, cad_at_zero)
    assert [c.token_ids for c in contrastive] == [c.token_ids for c in greedy]
    assert [c.finish_reason for c in contrastive] == [c.finish_reason for c in greedy]
    assert len({tuple(c.token_ids) for c in greedy}) == len(PROMPTS)  # the rows differ: a real check


@pytest.mark.parametrize("method", [Method("cad", 1.0), Method("adacad")])
def test_every_chosen_token_is_the_argmax_of_the_equation_by_hand(tiny_lm, method):
    completions = HFBackend(tiny_lm, batch_size=8).generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, method)
    changed = 0
    for prompt, free, completion in zip(PROMPTS, CONTEXT_FREE, completions):
        # the end-of-sequence token a row stopped at was chosen too
        chosen = completion.token_ids + ([min(tiny_lm.eos_ids)] if completion.finish_reason == "stop" else [])
        assert len(chosen) == PARAMS.max_new_tokens or completion.finish_reason == "stop"
        for t, token in enumerate(chosen):
            a = next_logits(tiny_lm, prompt + chosen[:t]).numpy()
            b = next_logits(tiny_lm, free + chosen[:t]).numpy()
            p, q = np.exp(a - a.max()), np.exp(b - b.max())
            # generated text: AdaCAD's weight floored at the authors' long-form threshold
            alpha = (
                method.alpha
                if method.kind == "cad"
                else max(jensenshannon(p / p.sum(), q / q.sum()) ** 2, ADACAD_LONG_FORM_FLOOR)
            )
            by_hand = (1 + alpha) * a - alpha * b
            assert token == int(np.argmax(by_hand)), (prompt, t)
            changed += int(np.argmax(a)) != token
    assert changed > 0  # the contrast changed some choice against plain greedy


def test_batched_two_pass_generation_equals_row_by_row(tiny_lm):
    batched = HFBackend(tiny_lm, batch_size=8).generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, "adacad")
    alone = HFBackend(tiny_lm, batch_size=2).generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, "adacad")
    assert [c.token_ids for c in batched] == [c.token_ids for c in alone]


def test_each_row_stops_at_its_own_end_of_sequence(tiny_lm):
    method = Method("cad", 0.5)
    free_run = HFBackend(with_eos(tiny_lm, None), batch_size=8).generate_contrastive(
        PROMPTS, CONTEXT_FREE, PARAMS, method
    )
    assert all(c.finish_reason == "length" for c in free_run)
    eos = free_run[0].token_ids[2]  # row 0 stops after two tokens with this end-of-sequence id
    stopped = HFBackend(with_eos(tiny_lm, eos), batch_size=8).generate_contrastive(
        PROMPTS, CONTEXT_FREE, PARAMS, method
    )
    for before, after in zip(free_run, stopped):
        cut = before.token_ids.index(eos) if eos in before.token_ids else None
        assert after.token_ids == before.token_ids[:cut]
        assert after.finish_reason == ("length" if cut is None else "stop")
        assert after.text == " ".join(map(str, after.token_ids))
    assert stopped[0].token_ids == free_run[0].token_ids[:2]
    assert any(c.finish_reason == "length" for c in stopped)  # another row went on


def test_generate_with_method_dispatches(tiny_lm):
    backend = HFBackend(tiny_lm, batch_size=8)
    assert generate_with_method(backend, PROMPTS, PARAMS, "cfp-opinion") == backend.generate(PROMPTS, PARAMS)
    assert generate_with_method(
        backend, PROMPTS, PARAMS, "adacad", context_free=CONTEXT_FREE
    ) == backend.generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, "adacad")
    with pytest.raises(ValueError, match="context-free version"):
        generate_with_method(backend, PROMPTS, PARAMS, "adacad")
    with pytest.raises(ValueError, match="no context-free pass"):
        backend.generate_contrastive(PROMPTS, CONTEXT_FREE, PARAMS, "greedy")

    class Remote:
        name = "vllm"

        def generate(self, prompts, params):
            return [Completion([], "", "stop") for _ in prompts]

    with pytest.raises(ValueError, match="'vllm' backend cannot"):
        generate_with_method(Remote(), PROMPTS, PARAMS, "cad-a1", context_free=CONTEXT_FREE)


# --------------------------------------------------------------------------
# closed read-outs


def test_contrastive_choice_logits(tiny_lm):
    from conflictlab.lm.choices import choice_logits, contrastive_choice_logits

    options = [5, 9, 20, 33]
    with_context = choice_logits(tiny_lm, PROMPTS, options)
    without_context = choice_logits(tiny_lm, CONTEXT_FREE, options)
    cad = contrastive_choice_logits(tiny_lm, PROMPTS, CONTEXT_FREE, options, "cad-a1.5")
    assert cad.shape == (len(PROMPTS), len(options))
    # choice_logits reads float32 logits: agreement to float32 precision
    assert np.allclose(cad, contrast_option_logits(with_context, without_context, 1.5), rtol=1e-5, atol=1e-6)
    adacad = contrastive_choice_logits(tiny_lm, PROMPTS, CONTEXT_FREE, options, "adacad", batch_size=2)
    full_a = torch.stack([next_logits(tiny_lm, p) for p in PROMPTS])
    full_b = torch.stack([next_logits(tiny_lm, p) for p in CONTEXT_FREE])
    alpha = jensen_shannon(full_a, full_b).numpy()  # over the whole vocabulary, not the options
    assert np.allclose(adacad, contrast_option_logits(with_context, without_context, alpha), rtol=1e-5, atol=1e-6)
    assert not np.allclose(adacad, contrast_option_logits(with_context, without_context, 0.0), rtol=1e-3)


# --------------------------------------------------------------------------
# ContextConflict reruns under a method (pseudo-model name@method)


def _samples():
    import pyarrow as pa

    return [
        pa.table(
            {
                "sample_id": ["r1", "r2"],
                "question": ["Where is the tower?", "Who built the wall?"],
                "evidence": [
                    ["The tower is in Rome.", "The tower is in Paris."],
                    ["Romans built it.", 'It was built by "Qin".'],
                ],
                "task_family": ["reasoning", "summarization"],
            }
        ),
        pa.table(
            {
                "sample_id": ["s1"],
                "question": ["When did it open?"],
                "evidence": [["In 1889.", "In 1901.", "Never."]],
                "task_family": ["summarization"],
            }
        ),
    ]


METHOD_SETTINGS = {
    "templates": {"reasoning": "reasoning_combined", "summarization": "summarization_simple"},
    "max_model_len": None,
    "on_too_long": "skip",
    "seed": 0,
    "shard_size": 2,
    "backend": "hf",
    "max_new_tokens": 6,
    "batch_size": 4,
    "dtype": "float32",
}


def test_a_method_rerun_contrasts_each_prompt_with_its_question_alone(tiny_llama_dir, tmp_path):
    from transformers import AutoTokenizer

    from conflictlab.contextconflict.generation import generate_method_subsets
    from conflictlab.contextconflict.prompts import build_messages, context_free_messages, encode_messages
    from conflictlab.lm.loading import load

    lm = load(tiny_llama_dir, dtype="float32")

    def run(method, shards, make_backend):
        return generate_method_subsets(
            _samples(),
            tiny_llama_dir,
            model="tiny",
            method=method,
            settings=METHOD_SETTINGS,
            shard_dir=tmp_path / shards,
            make_backend=make_backend,
        )

    tables = run("cad-a1", "cad", lambda limit: HFBackend(lm, batch_size=4))
    rows = [r for table in tables for r in table.to_pylist()]
    assert [t.num_rows for t in tables] == [2, 1] and {r["model"] for r in rows} == {"tiny@cad-a1"}
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    samples = [s for table in _samples() for s in table.to_pylist()]
    templates = [METHOD_SETTINGS["templates"][s["task_family"]] for s in samples]
    prompts = [
        encode_messages(tokenizer, build_messages(t, s["question"], s["evidence"]))[1]
        for t, s in zip(templates, samples)
    ]
    free = [encode_messages(tokenizer, context_free_messages(t, s["question"]))[1] for t, s in zip(templates, samples)]
    direct = HFBackend(lm, batch_size=4).generate_contrastive(prompts, free, DecodingParams(max_new_tokens=6), "cad-a1")
    assert [r["response_token_ids"] for r in rows] == [c.token_ids for c in direct]

    def no_model(limit):
        raise AssertionError("a finished job loads no model")

    assert run("cad-a1", "cad", no_model)[0].equals(tables[0])  # resumed from its shards
    opinion = [
        r for table in run("cfp-opinion", "cfp", lambda limit: HFBackend(lm, batch_size=4)) for r in table.to_pylist()
    ]
    assert all('Bob said "[Evidence 1]:' in r["prompt"] and "in Bob's opinion?" in r["prompt"] for r in opinion)
    assert {r["model"] for r in opinion} == {"tiny@cfp-opinion"}
    with pytest.raises(ValueError, match="backend vllm .* lacks capability logits"):
        generate_method_subsets(
            _samples(),
            tiny_llama_dir,
            model="tiny",
            method="adacad",
            settings={**METHOD_SETTINGS, "backend": "vllm"},
            shard_dir=tmp_path / "x",
            make_backend=no_model,
        )


@pytest.mark.slow
def test_the_methods_config_plans_one_rerun_per_model_and_method_and_refuses_bad_names(tmp_path):
    from .conftest import snakemake_cmd
    from .test_workflow import planned_jobs

    overlay = tmp_path / "methods.yaml"
    overlay.write_text("methods:\n  models: [smollm2-135m-instruct]\n  list: [cad-a0.5, cfp-opinion]\n")
    plan = snakemake_cmd("-n", "--forceall", "--configfile", str(overlay))
    assert plan.returncode == 0, plan.stderr
    jobs = planned_jobs(plan.stdout)
    # the model is steered too: one Shapley job per scorer for its method and steered reruns together
    assert jobs["method_generate"] == 2 and jobs["shapley_values_reruns"] == 1
    assert "shapley_values_method" not in jobs and "shapley_values_steered" not in jobs
    # the other benchmarks: one job per model for all methods (greedy added), one table over everything
    for rule in ("conflictbank_methods", "arbitration_methods", "conflicts_methods_respond", "methods_table"):
        assert jobs[rule] == 1, rule
    overlay.write_text("methods:\n  models: [gemma3-270m]\n  list: [cad-a0.5, cfp-opinion]\n")  # not steered
    unsteered = planned_jobs(snakemake_cmd("-n", "--forceall", "--configfile", str(overlay)).stdout)
    assert unsteered["shapley_values_method"] == 2 and unsteered["shapley_values_steered"] == 1, unsteered
    assert "shapley_values_reruns" not in unsteered
    overlay.write_text(
        "methods:\n  models: [smollm2-135m-instruct]\n  list: [cad-a0]\n"
    )  # the schema's pattern, not a method
    refused = snakemake_cmd("-n", "--configfile", str(overlay))
    assert refused.returncode != 0 and "cad-a0" in refused.stderr + refused.stdout

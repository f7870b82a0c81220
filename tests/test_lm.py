"""The model layer: the batching policy, and every operation against a plain
transformers forward on both real models (SmolLM2, Gemma-3)."""

import numpy as np
import pytest
import torch

from conflictlab.lm.batching import BatchPolicy, batches, map_batches

# The packed fp32 kernels round differently from MKL's (tests/test_packed_linear.py
# allows rtol 1e-5 per model); over 30 layers that reaches 1.05e-4 on a logit of 20.4
# on the AMD EPYC (Zen 3, AVX2), 2.4e-6 unpacked. Values above ~10 get this relative
# allowance on top of the 1e-4; log-likelihoods and per-layer states stay within 1e-4.
KERNEL_RTOL = 1e-5

PROMPTS = [
    "The capital of France is",
    "Water boils at a temperature of one hundred degrees Celsius at sea level, which",
    "Hi",
    "Evidence one says the bridge opened in 1932; evidence two says 1936. The bridge opened in",
]


# --------------------------------------------------------------------------
# Batching: one helper, one out-of-memory policy.


def test_batches_are_longest_first_and_respect_both_limits():
    lengths = [3, 9, 1, 5, 7, 2]
    seen = [chunk for chunk, _ in batches(lengths, lambda chunk: None, BatchPolicy(batch_size=3, token_budget=16))]
    assert [i for chunk in seen for i in chunk] == [1, 4, 3, 0, 5, 2]  # every row once, longest first
    for chunk in seen:
        assert len(chunk) <= 3 and len(chunk) * max(lengths[i] for i in chunk) <= 16 or len(chunk) == 1
    assert seen[0] == [1]  # 2 rows x 9 tokens > 16


def test_map_batches_restores_input_order_and_halves_on_out_of_memory():
    sizes = []

    def run(chunk):
        sizes.append(len(chunk))
        if len(chunk) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [f"row{i}" for i in chunk]

    policy = BatchPolicy(batch_size=8, token_budget=1000)
    assert map_batches([3, 9, 1, 5, 7], run, policy) == [f"row{i}" for i in range(5)]
    assert sizes == [5, 4, 2, 2, 1] and policy.batch_size == 2 and policy.token_budget == 250


def test_other_errors_and_out_of_memory_on_one_row_propagate():
    def broken(chunk):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        map_batches([1, 2], broken, BatchPolicy(batch_size=2))

    def always_oom(chunk):
        raise MemoryError("out of memory")

    with pytest.raises(MemoryError):
        map_batches([4, 4], always_oom, BatchPolicy(batch_size=2))
    with pytest.raises(ValueError, match="batch_size"):
        BatchPolicy()


def test_auto_dtype_follows_native_bfloat16_support():
    from conflictlab.lm.loading import resolve_dtype

    intel = "processor\t: 0\nflags\t\t: fpu avx512f avx512_vnni avx512_bitalg\n"
    amd = "processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 avx512_vnni\n"
    assert resolve_dtype("auto", "cpu", cpuinfo=intel) == "float32"
    assert resolve_dtype("auto", "cpu", cpuinfo=amd) == "bfloat16"
    assert resolve_dtype("auto", "cuda", cpuinfo=intel) == "bfloat16"
    assert resolve_dtype(None, "cpu") == "float32" and resolve_dtype(None, "cuda") == "bfloat16"
    assert resolve_dtype("float16", "cpu") == "float16"
    with pytest.raises(ValueError, match="not one of"):
        resolve_dtype("fp8", "cpu")


def _cpuinfo(vendor: str, family: int, model: int, flags: str) -> str:
    first = f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nflags\t\t: {flags}\n"
    # A second processor whose fields differ: only the first one's are read.
    return first + "\nprocessor\t: 1\nvendor_id\t: Other\ncpu family\t: 6\nmodel\t\t: 1\nflags\t\t: fpu\n"


def test_cpu_kind_reads_the_first_processor():
    from conflictlab.lm.loading import cpu_kind

    kind = cpu_kind(_cpuinfo("AuthenticAMD", 25, 1, "fpu avx2 fma"))
    assert (kind.vendor, kind.family, kind.model) == ("AuthenticAMD", 25, 1)
    assert kind.flags == {"fpu", "avx2", "fma"}
    assert cpu_kind("").family is None and not cpu_kind("").flags


@pytest.mark.parametrize(
    "vendor, family, model, flags, pays",
    [
        ("AuthenticAMD", 25, 1, "avx2 fma", False),  # Zen 3: MKL faster (loading.packing_pays)
        ("AuthenticAMD", 25, 17, "avx2 avx512f avx512_bf16", True),  # Zen 4
        ("AuthenticAMD", 23, 49, "avx2 fma", True),  # Zen 2: oneDNN 1.9x MKL
        ("GenuineIntel", 6, 207, "avx2 avx512f amx_bf16", True),
    ],
)
def test_linear_layers_are_packed_where_onednn_was_measured_faster(vendor, family, model, flags, pays):
    from conflictlab.lm.loading import cpu_kind, packing_pays

    assert packing_pays(cpu_kind(_cpuinfo(vendor, family, model, flags))) is pays


@pytest.mark.slow
def test_load_packs_every_call_where_packing_pays_and_few_row_calls_elsewhere(tiny_llama_dir):
    from conflictlab.lm.loading import load, packing_pays

    loaded = {pack: load(tiny_llama_dir, pack=pack) for pack in (None, False, True)}
    assert loaded[None].packing == ("all" if packing_pays() else "few rows") and loaded[None].packed_layers > 0
    assert (loaded[False].packing, loaded[False].packed_layers) == ("none", 0)
    assert loaded[True].packing == "all" and loaded[True].packed_layers > 0


# --------------------------------------------------------------------------
# Operations against plain transformers, fp32, on random tiny models of
# SmolLM2's architecture (Llama, chat) and Gemma-3's (base, sliding-window
# attention, soft-capped head): the code paths, in seconds.


@pytest.fixture(scope="module", params=["tiny_llama_dir", "tiny_gemma_dir"])
def models(request):
    """(LoadedModel as the workflow runs it where oneDNN's kernels pay: fp32,
    packed on CPU, on every CPU here; a plain unpacked transformers model of
    the same folder)."""
    from transformers import AutoModelForCausalLM

    from conflictlab.lm.loading import load

    folder = request.getfixturevalue(request.param)
    lm = load(folder, dtype="float32", pack=True)
    plain = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    return lm, plain


def _ids(lm, texts):
    return [lm.tokenizer(t)["input_ids"] for t in texts]


@pytest.mark.slow
def test_load_records_what_every_operation_needs(models):
    lm, _ = models
    assert lm.device == "cpu" and lm.dtype == "float32" and lm.packed_layers > 0
    assert lm.eos_ids and lm.pad_id is not None
    assert lm.has_chat_template == bool(lm.tokenizer.chat_template)
    assert lm.n_layers == lm.model.config.get_text_config().num_hidden_layers


@pytest.mark.slow
def test_grouped_attention_gives_transformers_sdpa_outputs_bit_for_bit(models):
    """The CPU attention of conflictlab.lm.attention (grouped key/value heads
    kept grouped under a mask) against transformers' sdpa, same weights
    unpacked: a padded prefill and a decoding step on its cache are equal."""
    from transformers import DynamicCache

    from conflictlab.lm.attention import NAME
    from conflictlab.lm.batching import pad_batch
    from conflictlab.lm.loading import load

    lm, plain = models
    assert lm.attention == NAME and plain.config._attn_implementation == "sdpa"
    assert lm.model.config.num_key_value_heads < lm.model.config.num_attention_heads  # the grouped case is tested
    unpacked = load(lm.path, dtype="float32", pack=False)
    ids, mask = pad_batch(_ids(lm, PROMPTS), lm.pad_id, side="left")
    outputs = []
    for model in (unpacked.model, plain):
        cache = DynamicCache(config=model.config)
        with torch.inference_mode():
            first = model(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True).logits
            step = torch.full((ids.shape[0], 1), 42)
            mask2 = torch.cat([mask, torch.ones_like(step)], dim=1)
            second = model(input_ids=step, attention_mask=mask2, past_key_values=cache, use_cache=True).logits
        outputs.append((first, second))
    assert torch.equal(outputs[0][0], outputs[1][0]) and torch.equal(outputs[0][1], outputs[1][1])


@pytest.mark.slow
def test_generate_equals_plain_greedy_one_by_one(models):
    from conflictlab.lm.generation import DecodingParams, HFBackend

    lm, plain = models
    prompts = _ids(lm, PROMPTS)
    got = HFBackend(lm, batch_size=4).generate(prompts, DecodingParams(max_new_tokens=12))
    for prompt, completion in zip(prompts, got):
        with torch.inference_mode():
            out = plain.generate(torch.tensor([prompt]), max_new_tokens=12, do_sample=False, pad_token_id=lm.pad_id)
        expected = out[0, len(prompt) :].tolist()
        stop = next((i for i, t in enumerate(expected) if t in lm.eos_ids), None)
        assert completion.token_ids == (expected if stop is None else expected[:stop])


@pytest.mark.slow
def test_generate_variants_equal_one_generate_per_steering(models):
    """Prefilling each prompt once for every variant (all but its last token,
    then a copy of the cache per variant) gives the tokens of one plain
    steered generate per variant, and per-row steerings those of each row's
    own steering alone."""
    from conflictlab.lm.generation import DecodingParams, HFBackend
    from conflictlab.lm.steering import Steering

    lm, _ = models
    prompts = _ids(lm, PROMPTS)
    rng = np.random.default_rng(0)
    direction = rng.normal(size=(lm.n_layers, lm.hidden_size)).astype(np.float32)
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    variants = [
        None,
        Steering(direction, 8.0, "first_generated"),
        Steering(direction, 8.0, "all_tokens", layers=(1, 2)),
    ]
    params = DecodingParams(max_new_tokens=8)
    mixed = [variants[i % len(variants)] for i in range(len(prompts))]
    got = HFBackend(lm, batch_size=3).generate_variants(
        prompts, [[v] * len(prompts) for v in variants] + [mixed], params
    )
    assert len(got) == len(variants) + 1 and all(len(g) == len(prompts) for g in got)
    per_variant = [
        [c.token_ids for c in HFBackend(lm, batch_size=3, steering=v).generate(prompts, params)] for v in variants
    ]
    for v in range(len(variants)):
        assert [c.token_ids for c in got[v]] == per_variant[v]
    assert per_variant[1] != per_variant[0] and per_variant[2] != per_variant[1]  # the steerings change tokens
    assert [c.token_ids for c in got[-1]] == [per_variant[i % len(variants)][i] for i in range(len(prompts))]


@pytest.mark.slow
def test_loglikelihoods_equal_plain_log_softmax(models):
    from conflictlab.lm.batching import BatchPolicy
    from conflictlab.lm.likelihood import loglikelihoods

    lm, plain = models
    contexts = _ids(lm, PROMPTS)
    continuations = [
        lm.tokenizer(t, add_special_tokens=False)["input_ids"]
        for t in (" Paris.", " is well known", " there", " 1936.")
    ]
    got = loglikelihoods(lm, contexts, continuations, policy=BatchPolicy(token_budget=64))  # several forwards
    for context, continuation, values in zip(contexts, continuations, got):
        ids = context + continuation
        with torch.inference_mode():
            logprobs = torch.log_softmax(plain(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        expected = (
            logprobs[len(context) - 1 : len(ids) - 1].gather(1, torch.tensor(continuation)[:, None])[:, 0].numpy()
        )
        assert values.shape == (len(continuation),)
        np.testing.assert_allclose(values, expected, atol=1e-4)


@pytest.mark.slow
def test_choice_logits_equal_plain_last_position(models):
    from conflictlab.lm.choices import choice_logits, single_token_ids

    lm, plain = models
    prompts = _ids(lm, PROMPTS)
    tokens = single_token_ids(lm.tokenizer, [" A", " B", " C", " D"])
    got = choice_logits(lm, prompts, tokens, batch_size=3)
    assert got.shape == (len(prompts), 4)
    for prompt, row in zip(prompts, got):
        with torch.inference_mode():
            expected = plain(input_ids=torch.tensor([prompt])).logits[0, -1, tokens].numpy()
        np.testing.assert_allclose(row, expected, atol=1e-4, rtol=KERNEL_RTOL)  # logits reach ~20: see KERNEL_RTOL
    repeated = choice_logits(lm, [prompts[2], prompts[0], prompts[2]], tokens, batch_size=3)
    assert np.array_equal(repeated[0], repeated[2])  # a repeated prompt is read once
    np.testing.assert_allclose(repeated[:2], got[[2, 0]], atol=1e-4, rtol=KERNEL_RTOL)
    with pytest.raises(ValueError, match="exactly one"):
        single_token_ids(lm.tokenizer, [" Antidisestablishmentarianism"])


@pytest.mark.slow
def test_hidden_states_equal_plain_per_layer_outputs(models):
    from conflictlab.lm.hidden import hidden_states

    lm, plain = models
    prompts = _ids(lm, PROMPTS)
    got = hidden_states(lm, prompts, batch_size=3)
    layers = plain.get_decoder().layers
    assert got.shape == (len(prompts), len(layers), lm.hidden_size)
    for prompt, states in zip(prompts, got):
        with torch.inference_mode():
            hidden = plain(input_ids=torch.tensor([prompt]), output_hidden_states=True).hidden_states
        # hidden_states[l + 1] is layer l's output, except the last, which
        # transformers returns after the final norm.
        expected = torch.stack([h[0, -1] for h in hidden[1:-1]]).numpy()
        # Within 1e-4 on the scale of each layer's residual stream (its RMS,
        # which grows with depth; float32 rounding is relative to it), plus
        # the packed kernels' relative rounding (KERNEL_RTOL) on the few
        # dimensions far above the RMS.
        scale = np.maximum(1.0, np.sqrt((expected**2).mean(axis=1, keepdims=True)))
        assert (np.abs(states[:-1] - expected) <= 1e-4 * scale + KERNEL_RTOL * np.abs(expected)).all()


@pytest.mark.slow
def test_option_loglikelihoods_equal_plain_full_forwards(models):
    """Options that share their first tokens, scored from one cached prompt
    pass, equal log-softmax sums of plain forwards over prompt + option."""
    from conflictlab.lm.choices import option_loglikelihoods

    lm, plain = models
    prompt = _ids(lm, ["Which type of conflict do the sources show? Type:"])[0]
    options = [
        lm.tokenizer(t, add_special_tokens=False)["input_ids"]
        for t in (" Conflict due to outdated information", " Conflict due to misinformation", " No conflict")
    ]
    assert options[0][0] == options[1][0]  # one first token: the first-token read-out cannot tell them apart
    got = option_loglikelihoods(lm, prompt, options)
    for option, value in zip(options, got):
        ids = prompt + option
        with torch.inference_mode():
            logprobs = torch.log_softmax(plain(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        expected = logprobs[len(prompt) - 1 : len(ids) - 1].gather(1, torch.tensor(option)[:, None]).sum().item()
        assert value == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    "first", ["", "from conflictlab.lm.loading import folder_eos_ids; folder_eos_ids(sys.argv[1]); "]
)
def test_loading_a_model_imports_no_scikit_learn_or_scipy(tiny_llama_dir, first):
    """transformers would import sklearn.metrics (with scipy.stats and pandas) for assisted generation
    and scipy.optimize for object detection, which nothing here uses; load() keeps them out of a model
    job's start-up (conflictlab.lm.loading), also where the job read its tokenizer first."""
    import subprocess
    import sys

    code = (
        f"import sys; {first}from conflictlab.lm.loading import load; load(sys.argv[1]); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'pandas', 'scipy'}))"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(tiny_llama_dir)], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip().splitlines()[-1] == "[]"


def test_a_model_job_keeps_the_memory_it_frees_where_glibc_allows_it():
    """keep_freed_memory sets glibc's malloc thresholds (mallopt returns 1 for each) on glibc Linux."""
    import platform

    from conflictlab.lm.loading import keep_freed_memory

    if platform.libc_ver()[0] != "glibc":
        pytest.skip(f"mallopt is glibc's; this C library is {platform.libc_ver()[0] or 'unknown'}")
    assert keep_freed_memory() is True


def test_packages_distributions_come_from_the_cache_until_a_package_is_installed(tmp_path, monkeypatch):
    """remember_packages_distributions serves transformers' distribution map from a file while the
    metadata folders on sys.path stay as they are, and maps afresh when one comes or goes."""
    import importlib.metadata
    import os
    import sys

    from conflictlab.lm.loading import remember_packages_distributions

    monkeypatch.setattr(importlib.metadata, "packages_distributions", importlib.metadata.packages_distributions)
    computed = []
    truth = {"numpy": ["numpy"], "yaml": ["PyYAML"]}
    monkeypatch.setattr(
        importlib.metadata.packages_distributions,
        "__wrapped__",
        lambda: computed.append(1) or {k: list(v) for k, v in truth.items()},
        raising=False,
    )
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    cache = tmp_path / "cache" / "packages-distributions.json"
    remember_packages_distributions(cache)
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 1
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 1  # from the file
    assert cache.is_file()
    (site / "fresh-1.0.dist-info").mkdir()  # a package installed
    truth["fresh"] = ["fresh"]
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 2
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 2
    os.utime(site / "fresh-1.0.dist-info", ns=(1, 1))  # the same version installed again
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 3
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 3
    cache.write_text("{not json")  # a damaged cache is mapped afresh and rewritten
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 4
    assert importlib.metadata.packages_distributions() == truth and len(computed) == 4


def test_the_model_index_comes_from_the_cache_until_a_module_changes(tmp_path):
    """stored_model_index scans transformers' models folder once, serves the same structure (frozenset keys,
    sets, subfolders, in order) from the file after, and scans again when a module is edited or added."""
    import json
    import os

    from conflictlab.lm.loading import stored_model_index as stored_index

    models = tmp_path / "models"
    (models / "llama").mkdir(parents=True)
    (models / "llama" / "modeling_llama.py").write_text("__all__ = ['LlamaModel']\n")
    index = {
        frozenset(): {"configuration_x": {"XConfig"}},
        "llama": {frozenset({"torch"}): {"modeling_llama": {"LlamaModel", "LlamaForCausalLM"}}},
    }
    scans = []

    def scan(path):
        scans.append(path)
        return index

    cache = tmp_path / "cache" / "index.json"
    scanner = tmp_path / "import_utils.py"
    scanner.write_text("# transformers' scanning code\n")

    def stored_model_index(models, cache, scan):
        return stored_index(models, cache, scan, scanner=scanner)

    assert stored_model_index(models, cache, scan) is index and len(scans) == 1
    served = stored_model_index(models, cache, scan)
    assert len(scans) == 1 and served == index and list(served) == list(index)  # from the file, in order
    assert isinstance(next(iter(served)), frozenset) and isinstance(served["llama"][frozenset({"torch"})], dict)
    (models / "llama" / "modeling_llama.py").write_text("__all__ = ['LlamaModel', 'LlamaForCausalLM']\n")
    stored_model_index(models, cache, scan)
    assert len(scans) == 2  # an edited module: scanned again
    (models / "gemma").mkdir()
    (models / "gemma" / "__init__.py").write_text("")
    stored_model_index(models, cache, scan)
    stored_model_index(models, cache, scan)
    assert len(scans) == 3  # a new model: scanned again, then served
    os.utime(models / "gemma" / "__init__.py", ns=(1, 1))
    stored_model_index(models, cache, scan)
    assert len(scans) == 4
    cache.write_text("[1, 2")  # a damaged cache is scanned afresh
    assert stored_model_index(models, cache, scan) == index and len(scans) == 5
    stored = json.loads(cache.read_text())
    cache.write_text(json.dumps({**stored, "index": [["modules", [], 5]]}))  # whole JSON of another shape
    assert stored_model_index(models, cache, scan) == index and len(scans) == 6
    scanner.write_text("# transformers' scanning code, edited\n")  # the scan itself changed
    stored_model_index(models, cache, scan)
    assert len(scans) == 7


def test_the_remembered_model_index_is_transformers_own(tmp_path):
    """On the real environment, in fresh interpreters: the first import scans the models folder and writes
    the index, the second scans none of it, and the index served is the one transformers computes."""
    import json
    import subprocess
    import sys

    code = (
        "import sys, os, json; from conflictlab.lm import loading; "
        "loading.remember_transformers_model_index(sys.argv[1]); "
        "from transformers import AutoTokenizer; import transformers.models.llama.modeling_llama; "
        "import transformers.utils.import_utils as iu; "
        "served, scan = iu.create_import_structure_from_path, iu.create_import_structure_from_path.__wrapped__; "
        "scanned = scan.cache_info().currsize; "
        "folder = os.path.join(os.path.dirname(iu.__file__), os.pardir, 'models'); "
        "same = served(folder) is served(os.path.join(folder, '__init__.py')); "
        "print(json.dumps([scanned, served(folder) == scan.__wrapped__(folder), same]))"
    )
    cache = tmp_path / "index.json"
    runs = []
    for _ in range(2):  # the first process writes the file, the second reads it
        child = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True, text=True, timeout=120)
        assert child.returncode == 0, child.stderr[-3000:]
        runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    (first_scanned, *first), (second_scanned, *second) = runs
    assert first == second == [True, True]
    # the scan's in-process cache (128 entries) full of the ~500 model subfolders, then holding a few model folders
    assert first_scanned > 100 and second_scanned < 30, runs


def test_the_remembered_map_equals_importlib_s_own(tmp_path):
    """On the real environment, in a fresh interpreter: the cached map (second process) is the map."""
    import json
    import subprocess
    import sys

    code = (
        "import sys, json, importlib.metadata as m; from conflictlab.lm import loading; "
        "own = m.packages_distributions(); loading.remember_packages_distributions(sys.argv[1]); "
        "print(json.dumps([own == m.packages_distributions(), len(own)]))"
    )
    cache = tmp_path / "map.json"
    for _ in range(2):  # the first process writes the file, the second reads it
        child = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True, text=True, timeout=120)
        assert child.returncode == 0, child.stderr[-3000:]
        same, size = json.loads(child.stdout.strip().splitlines()[-1])
        assert same and size > 50
    assert cache.is_file()

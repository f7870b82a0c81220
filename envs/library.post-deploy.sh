#!/usr/bin/env bash
# Shared by every env's post-deploy script: install the conflictlab library
# from this checkout (Snakemake runs post-deploy scripts from the working
# directory, the repository root, inside the new environment).
set -euo pipefail
python -m pip install --no-deps -e .

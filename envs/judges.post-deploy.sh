#!/usr/bin/env bash
set -euo pipefail
bash envs/library.post-deploy.sh

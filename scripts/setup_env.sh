#!/usr/bin/env bash
# Sets up everything from a fresh machine: Debian packages, a venv from Debian's Python that
# sees Debian's numpy/torch/pytest, and the oneflow package built and installed into it.
# Idempotent; prints the venv's python path last.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh >&2
if [[ ! -x .venv/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages .venv >&2
fi
.venv/bin/python -m pip install --no-build-isolation --no-deps --no-index -q . >&2
echo "$(pwd)/.venv/bin/python"

#!/usr/bin/env bash
# Quick start (1): set up, then train an MLP on the real handwritten digits and report accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(bash scripts/setup_env.sh)
"$python" examples/train_digits.py "$@"

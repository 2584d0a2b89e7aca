#!/usr/bin/env bash
# Quick start (2): set up, then run the whole test suite (C++ with ctest, Python with pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(bash scripts/setup_env.sh)
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j 2
echo "== Python tests (pytest)"
cd tests/python  # run from outside the source tree: the installed package is what is tested
"$python" -m pytest -q -p no:cacheprovider "$@" .

#!/usr/bin/env bash
# Quick start (2): set up, then run the whole test suite (C++ with ctest, Python with pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(bash scripts/setup_env.sh)
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j 2
echo "== Python tests (pytest)"
cd tests/python  # run from outside the source tree: the installed package is what is tested
# Each test has a timeout (tests/python/pytest.ini) that ends a hung worker; one xdist worker
# process (-n 1) is replaced when that happens, so a hang fails one test and the run goes on.
# (More workers oversubscribe 2 cores: the runtime already uses every core.)
"$python" -m pytest -q -p no:cacheprovider -n 1 "$@" .

#!/usr/bin/env bash
# Builds the C++ library and tests with ThreadSanitizer (build-tsan/) and runs the runtime's
# concurrency tests under it: the actor protocol, threads, job instances, collectives, the
# multi-device plans and the event poller. A data race or lock-order inversion fails the run.
#   bash scripts/run_tsan.sh            # the concurrency tests
#   bash scripts/run_tsan.sh '*'        # every C++ test (slower)
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'*Runtime*:*Thread*:*Diamond*:*Communicator*:*MultiDevice*:*Boxing*:*EventPoller*'}
# The default run builds only the test files that hold those tests (an instrumented build of every
# test file costs minutes of CI); a filter of your own builds them all.
sources=''
[[ $# -eq 0 ]] && sources='tests/cpp/(runtime/|device/event_poller_test|kernels/transpose_kernel_test)'
bash scripts/install_deps.sh >&2
# ONEFLOW_WITH_CUDA=OFF: the races looked for are the runtime's, not the CUDA runtime's.
# ONEFLOW_CPU_ARCH=native: no per-ISA clones (cpu_dispatch.h). Their IFUNC resolvers run while the
# library is relocated, before ThreadSanitizer's runtime is set up, and crash the instrumented
# executable at start.
# -O1 -g1: a quarter less compile time than -O2 -g (this build is most of the stage's time);
# ThreadSanitizer's reports keep function names and lines.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONEFLOW_BUILD_PYTHON=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DONEFLOW_CPU_ARCH=native -DONEFLOW_WITH_CUDA=OFF -DONEFLOW_TEST_SOURCE_REGEX="$sources" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build build-tsan --target oneflow_cpp_tests
# OpenBLAS's OpenMP runtime is not instrumented; its internal synchronisation is not ours.
# allocator_may_return_null: an impossible allocation returns null, as glibc's does (tests check
# that it becomes an "out of memory" error) instead of aborting the sanitized process.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 \
suppressions=$(pwd)/scripts/tsan.supp"
./build-tsan/tests/cpp/oneflow_cpp_tests --gtest_filter="$filter"

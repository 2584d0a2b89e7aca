#!/usr/bin/env bash
# The Debian 12 packages the build links, fetched here for a GPU machine that has CUDA, CMake,
# Ninja and a Python but none of them and no network (the lent H200 machine: docs/gpu.md).
#
#   bash scripts/gpu_deps.sh [DIR]    # here (Debian 12, apt): downloads the .deb files into DIR
#                                     # (default .gpu-deps, ignored by git), about 37 MB
#
# Carry DIR to the GPU machine (the device tool's `carry`); scripts/gpu_check.sh finds
# .gpu-deps/*.deb there, unpacks them into a private prefix (never into /), points CMake,
# pkg-config, PATH and LD_LIBRARY_PATH at it and builds against it. The list is the build's
# packages (scripts/install_deps.sh) with their shared-library dependencies that are not part of
# a usual CUDA image (C and C++ runtimes, OpenMP, OpenSSL and zlib are expected there):
# `readelf -d` over the unpacked libraries names nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu-deps}
packages=(
  # protobuf and gRPC (the control plane), with pkg-config to find gRPC
  libprotobuf-dev libprotobuf32 libprotoc32 protobuf-compiler
  libgrpc++-dev libgrpc++1.51 libgrpc-dev libgrpc29 protobuf-compiler-grpc libupb0
  libabsl-dev libabsl20220623 libre2-9 libre2-dev libc-ares2 libc-ares-dev
  libssl-dev zlib1g-dev libsystemd-dev
  pkg-config pkgconf pkgconf-bin libpkgconf3
  # Gloo (the CPU data plane) and what it loads
  libgloo-dev libgloo0 libhiredis0.14 libibverbs1 libnl-3-200 libnl-route-3-200
  # CPU math: oneDNN and OpenBLAS (the OpenMP build), with their runtimes
  libdnnl-dev libdnnl2 ocl-icd-libopencl1
  libopenblas-dev libopenblas-openmp-dev libopenblas0-openmp libopenblas0
  libgfortran5 libquadmath0
  # C++ tests
  libgtest-dev
)
mkdir -p "$dir"
cd "$dir"
rm -f ./*.deb
# apt's sandbox user cannot write here when run as root in a private folder: that is fine.
apt-get download "${packages[@]}" 2>&1 | grep -v "couldn't be accessed by user '_apt'" || true
count=$(ls ./*.deb | wc -l)
if ((count != ${#packages[@]})); then
  echo "gpu_deps: got $count of ${#packages[@]} packages" >&2
  exit 1
fi
echo "gpu_deps: ${count} packages, $(du -sh . | cut -f1) in $(pwd)"

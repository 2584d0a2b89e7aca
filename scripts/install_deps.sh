#!/usr/bin/env bash
# Installs the Debian packages the project builds, tests and runs with (DESIGN.md §4).
# Idempotent: packages already present are skipped, so a warm machine pays only a dpkg query.
# Needs root (or sudo) and apt; nothing comes from the Python package index.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ ccache pkg-config
  # IR / serialization, bindings, logging
  libprotobuf-dev protobuf-compiler python3-protobuf
  pybind11-dev python3-pybind11 python3-dev python3-venv python3-pip python3-setuptools
  python3-wheel
  libgoogle-glog-dev libgflags-dev
  # tests
  libgtest-dev python3-pytest python3-pytest-timeout python3-pytest-xdist python3-numpy
  # CPU math
  libopenblas-dev libopenblas0-openmp libdnnl-dev
  # distribution: gRPC control plane, Gloo CPU data plane
  libgrpc++-dev protobuf-compiler-grpc libgloo-dev
  # JPEG decoding for the OFRecord image decoders
  libjpeg62-turbo-dev
  # reference implementation for tests and benchmarks, real data for the examples
  python3-torch python3-pil python3-sklearn dataset-fashion-mnist
  # imported by OneFlow 0.3-era training scripts (OneFlow-Benchmark's util.py: pandas)
  python3-pandas
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU, in under 10 minutes: prints the environment,
# builds with CUDA into build-gpu (CMake + Ninja, sm_90), then with ONEFLOW_GPU=1 runs the C++
# tests, the Python GPU tests (tests/python/test_gpu.py and the op checker's GPU pass) and
# benchmarks/gpu_benchmark.py. Every stage runs under `timeout` and within a total budget; a
# failing stage does not stop the later ones; a table of (stage, seconds, status) ends the run.
#
#   bash scripts/gpu_check.sh          # on the GPU machine
#   bash scripts/gpu_check.sh --cpu    # checks this script without a GPU: no nvidia-smi, GPU
#                                      # execution off, the benchmark in --device cpu --tiny mode
#
# The package is used the development way (README.md): the build copies liboneflow.so and the
# extension into python/oneflow/ (CMakeLists.txt, POST_BUILD), and PYTHONPATH=python imports it.
# `pip install .` (scripts/run_tests.sh) is not used: setup.py takes no CUDA settings.
# Settings (environment):
#   GPU_CHECK_BUDGET       seconds for the whole run (default 570)
#   GPU_CHECK_PYTHON       interpreter (default: python3 on the PATH, the one with PyTorch)
#   GPU_CHECK_BUILD_DIR    build folder (default build-gpu)
#   GPU_CHECK_BUILD_TARGET build only this target (default: everything)
#   GPU_CHECK_CTEST_DIR    where ctest runs (default: the build folder)
#   GPU_CHECK_PYTHONPATH   where `import oneflow` comes from (default: python/ of this checkout)
#   GPU_CHECK_PRETEND_MISSING  package names to treat as missing (checks the missing-deps path)
#   GPU_CHECK_DEPS         folder of carried Debian packages (default .gpu-deps: made here by
#                          scripts/gpu_deps.sh); when it holds .deb files they are unpacked into
#                          a private prefix and the build uses them
# Exit status: 0 when every stage passed, 1 when one failed, 2 when build dependencies are missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=gpu
if [[ "${1:-}" == "--cpu" ]]; then
  mode=cpu
elif [[ $# -gt 0 ]]; then
  echo "usage: bash scripts/gpu_check.sh [--cpu]" >&2
  exit 64
fi
budget=${GPU_CHECK_BUDGET:-570}
python=${GPU_CHECK_PYTHON:-$(command -v python3)}
build_dir=${GPU_CHECK_BUILD_DIR:-build-gpu}
ctest_dir=${GPU_CHECK_CTEST_DIR:-$build_dir}
export PYTHONPATH="${GPU_CHECK_PYTHONPATH:-$root/python}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
cores=$(nproc)
workers=$((cores > 4 ? (cores - 2 < 14 ? cores - 2 : 14) : cores))
started=$SECONDS

stage_names=()
stage_seconds=()
stage_status=()

record() {  # record NAME SECONDS STATUS
  stage_names+=("$1")
  stage_seconds+=("$2")
  stage_status+=("$3")
}

# stage NAME CAP_SECONDS COMMAND...: runs COMMAND under `timeout` (its cap, or what is left of
# the budget if less) and records how it went.
stage() {
  local name=$1 cap=$2
  shift 2
  local left=$((budget - (SECONDS - started)))
  local limit=$((cap < left ? cap : left))
  if ((limit < 10)); then
    echo "== [$name] skipped: the budget of ${budget} s is spent"
    record "$name" 0 "skipped (budget spent)"
    return 0
  fi
  echo
  echo "== [$name] (timeout ${limit} s)"
  local begin=$SECONDS status
  if declare -F "$1" >/dev/null; then
    # A function of this script: `timeout` runs programs, so it runs in a bash that is given
    # this script's functions and settings.
    timeout -k 10 "$limit" bash -c "set -o pipefail; $(declare -f); $(declare -p python mode budget \
      cores build_dir ctest_dir nvcc_path cmake_extra python_include build_python 2>/dev/null); $*"
  else
    timeout -k 10 "$limit" "$@"
  fi
  status=$?
  local took=$((SECONDS - begin))
  case $status in
    0) record "$name" "$took" "ok" ;;
    124 | 137) record "$name" "$took" "TIMED OUT after ${limit} s" ;;
    *) record "$name" "$took" "FAILED (exit $status)" ;;
  esac
  return 0
}

summary() {
  echo
  echo "== summary ($mode mode, $((SECONDS - started)) s of a ${budget} s budget)"
  printf '%-24s %8s  %s\n' stage seconds status
  local i failed=0
  for i in "${!stage_names[@]}"; do
    printf '%-24s %8s  %s\n' "${stage_names[$i]}" "${stage_seconds[$i]}" "${stage_status[$i]}"
    [[ "${stage_status[$i]}" == ok || "${stage_status[$i]}" == skipped* ]] || failed=1
  done
  return $failed
}

# ---------------------------------------------------------------- environment
nvcc_path=$(command -v nvcc || true)
[[ -z "$nvcc_path" && -x /usr/local/cuda/bin/nvcc ]] && nvcc_path=/usr/local/cuda/bin/nvcc

print_environment() {
  echo "mode: $mode; cores: $cores; budget: ${budget} s; python: $python"
  if [[ $mode == gpu ]]; then
    nvidia-smi -L || echo "nvidia-smi -L failed"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  else
    echo "nvidia-smi: skipped (--cpu)"
  fi
  if [[ -n "$nvcc_path" ]]; then "$nvcc_path" --version | tail -2; else echo "nvcc: not found"; fi
  "$python" --version
  "$python" - <<'EOF'
try:
    import torch
    print("torch %s (CUDA %s): torch.cuda.is_available() = %s%s" % (
        torch.__version__, torch.version.cuda, torch.cuda.is_available(),
        " (%s)" % torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""))
except Exception as error:
    print("torch: not importable (%s)" % error)
EOF
  cmake --version | head -1 || echo "cmake: not found"
  uname -srm
  [[ -r /etc/os-release ]] && grep PRETTY_NAME /etc/os-release
  df -h . | tail -1
}
stage environment 60 print_environment

# ---------------------------------------------------------------- carried packages
# The GPU machine has CUDA, CMake, Ninja and a Python but not the Debian libraries the build
# links, and no network: scripts/gpu_deps.sh fetches them here, the device tool carries them, and
# this unpacks them into a prefix of their own (never into /, which they could break). Their
# pkg-config and CMake files name /usr: they are rewritten to the prefix. Postinst scripts do not
# run, so OpenBLAS's alternatives are passed to CMake directly.
deps_dir=${GPU_CHECK_DEPS:-$root/.gpu-deps}
cmake_extra=()
header_roots=(/usr/include /usr/local/include /usr/include/x86_64-linux-gnu
              /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas)
use_carried_packages() {
  local prefix=/tmp/oneflow-gpu-deps deb
  rm -rf "$prefix" && mkdir -p "$prefix" || return
  for deb in "$deps_dir"/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$prefix" || return
    else  # a .deb is an ar archive holding data.tar.*
      (cd "$prefix" && ar p "$deb" "$(ar t "$deb" | grep '^data.tar')" | tar -x -a -f - 2>/dev/null \
        || ar p "$deb" "$(ar t "$deb" | grep '^data.tar')" | tar -xJ) || return
    fi
  done
  find "$prefix" -name '*.pc' -exec sed -i \
    -e "s|=/usr|=$prefix/usr|g" -e "s|-I/usr|-I$prefix/usr|g" -e "s|-L/usr|-L$prefix/usr|g" {} +
  find "$prefix" -name '*.cmake' -exec sed -i "s|\"/usr/|\"$prefix/usr/|g" {} +
  local lib=$prefix/usr/lib/x86_64-linux-gnu link target soname folder
  # A development link (libz.so, libssl.so) names a runtime library that is not carried (the
  # machine has its own, maybe of another minor version): point it at the machine's library of
  # the same soname. Left dangling, CMake and pkg-config take the static archive beside it, which
  # cannot go into a shared library (libz.a is not position-independent).
  for link in "$lib"/lib*.so; do
    [[ -L "$link" ]] || continue
    target=$(readlink "$link")
    [[ "$target" == /* ]] && target=$prefix$target || target=$lib/$target
    [[ -e "$target" ]] && continue
    soname=$(basename "$target" | sed -E 's/^(lib.*\.so\.[0-9]+).*/\1/')
    for folder in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64; do
      if [[ -e "$folder/$soname" ]]; then
        ln -sfn "$folder/$soname" "$link"
        echo "carried packages: $(basename "$link") -> $folder/$soname"
        break
      fi
    done
  done
  export PATH="$prefix/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$lib:$lib/openblas-openmp:$prefix/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$lib/pkgconfig:$prefix/usr/share/pkgconfig"
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  header_roots+=("$prefix/usr/include" "$prefix/usr/include/x86_64-linux-gnu"
                 "$prefix/usr/include/x86_64-linux-gnu/openblas-openmp")
  cmake_extra+=("-DOPENBLAS_INCLUDE_DIR=$prefix/usr/include/x86_64-linux-gnu/openblas-openmp"
                "-DOPENBLAS_LIBRARY=$lib/openblas-openmp/libopenblas.so.0")
  echo "carried packages: $(ls "$deps_dir"/*.deb | wc -l) unpacked into $prefix"
}
if compgen -G "$deps_dir/*.deb" >/dev/null; then
  use_carried_packages || echo "carried packages: unpacking $deps_dir failed"
fi

# ---------------------------------------------------------------- build dependencies
# Each Debian package the build needs (scripts/install_deps.sh) with a probe for what the build
# uses from it, so that the same thing installed another way (pip's cmake, ninja or pybind11)
# counts too.
python_include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
has_header() {  # has_header NAME: NAME under one of the usual include folders
  local folder
  for folder in "${header_roots[@]}"; do
    [[ -e "$folder/$1" ]] && return 0
  done
  return 1
}
python_has() { "$python" -c "import $1" >/dev/null 2>&1; }
declare -A probes=(
  [cmake]='command -v cmake'
  [ninja-build]='command -v ninja'
  [g++]='command -v g++'
  [pkg-config]='command -v pkg-config'
  [protobuf-compiler]='command -v protoc'
  [libprotobuf-dev]='has_header google/protobuf/message.h'
  [libgrpc++-dev]='pkg-config --exists grpc++'
  [protobuf-compiler-grpc]='command -v grpc_cpp_plugin'
  [libgloo-dev]='has_header gloo/allreduce.h'
  [libopenblas-dev]='has_header cblas.h'
  [libdnnl-dev]='has_header dnnl.hpp || has_header oneapi/dnnl/dnnl.hpp'
  [libgtest-dev]='has_header gtest/gtest.h'
  [pybind11-dev]='[[ -d /usr/lib/cmake/pybind11 ]] || python_has pybind11'
  [python3-dev]='[[ -e "$python_include/Python.h" ]]'
  [python3-numpy]='python_has numpy'
  [python3-pytest]='python_has pytest'
)
missing=()
check_dependencies() {
  local package
  missing=()
  for package in "${!probes[@]}"; do
    eval "${probes[$package]}" >/dev/null 2>&1 || missing+=("$package")
  done
  [[ -n "$nvcc_path" ]] || missing+=("CUDA toolkit (nvcc)")
  [[ -z "${GPU_CHECK_PRETEND_MISSING:-}" ]] || missing+=($GPU_CHECK_PRETEND_MISSING)
}
check_dependencies
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "missing build dependencies: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null \
      && timeout 60 apt-get update -q -o Acquire::Retries=0 >/dev/null 2>&1; then
    stage install_deps 240 bash scripts/install_deps.sh
    check_dependencies
  else
    echo "apt is not usable here (not root, no apt-get, or no network), so nothing was installed"
  fi
fi
# Without Python's headers or pybind11 the C++ library and its tests (every GPU kernel against
# its CPU kernel, the GPU plans, NCCL) still build and run; only the Python stages are skipped.
python_parts=(python3-dev pybind11-dev python3-numpy python3-pytest)
build_python=ON
python_missing=()
for package in "${python_parts[@]}"; do
  for i in "${!missing[@]}"; do
    if [[ "${missing[$i]}" == "$package" ]]; then
      python_missing+=("$package")
      unset 'missing[i]'
    fi
  done
done
missing=("${missing[@]}")
if [[ ${#python_missing[@]} -gt 0 ]]; then
  build_python=OFF
  echo "no Python build (missing ${python_missing[*]}): the C++ library and tests only"
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  record dependencies 0 "MISSING: ${missing[*]}"
  echo
  echo "The build needs these Debian packages (or the same files installed another way):"
  printf '  %s\n' "${missing[@]}"
  echo "Nothing can be built here, so only PyTorch's side of the benchmark runs (a baseline)."
  if [[ $mode == gpu ]]; then
    stage torch_baseline 180 "$python" benchmarks/gpu_benchmark.py --torch-only \
      --budget 170 --torch-timeout 80
  else
    stage torch_baseline 180 "$python" benchmarks/gpu_benchmark.py --torch-only --device cpu \
      --tiny --budget 170
  fi
  summary
  exit 2
fi
if [[ $build_python == ON ]]; then
  record dependencies 0 ok
else
  record dependencies 0 "ok for C++ (no Python: ${python_missing[*]})"
fi

# ---------------------------------------------------------------- build
# cuDNN and NCCL: CMake looks in the toolkit's folders (cmake/cuda.cmake); where they are not
# there, the Python wheels (nvidia-cudnn-*, nvidia-nccl-*) that PyTorch uses are named
# explicitly, and their lib/ folder goes on LD_LIBRARY_PATH for the tests.
cuda_root=$(dirname "$(dirname "${nvcc_path:-/usr/local/cuda/bin/nvcc}")")
wheel_library() {  # wheel_library NAME: "header_dir library" from the nvidia.NAME wheel, if any
  "$python" - "$1" <<'EOF'
import glob, importlib.util, os, sys
name = sys.argv[1]
try:
    spec = importlib.util.find_spec("nvidia." + name)
except ImportError:
    spec = None
for folder in (list(spec.submodule_search_locations) if spec else []):
    headers = glob.glob(os.path.join(folder, "**", name + ".h"), recursive=True)
    libraries = sorted(glob.glob(os.path.join(folder, "**", "lib" + name + ".so*"), recursive=True))
    if headers and libraries:
        print(os.path.dirname(headers[0]), libraries[0])
EOF
}
for library in cudnn nccl; do
  found=""
  for folder in "$cuda_root/lib64" "$cuda_root/lib" /usr/lib/x86_64-linux-gnu; do
    [[ -e "$folder/lib$library.so" ]] && found=$folder
  done
  if [[ -n "$found" ]] && { [[ -e "$cuda_root/include/$library.h" ]] || has_header "$library.h"; }; then
    echo "$library: $found"
    export LD_LIBRARY_PATH="$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    continue
  fi
  read -r header_dir library_path < <(wheel_library "$library") || true
  if [[ -n "${library_path:-}" ]]; then
    echo "$library: from the Python wheel, $library_path"
    upper=$(echo "$library" | tr a-z A-Z)
    cmake_extra+=("-DONEFLOW_${upper}_INCLUDE_DIR=$header_dir" "-DONEFLOW_${upper}_LIBRARY=$library_path")
    export LD_LIBRARY_PATH="$(dirname "$library_path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    echo "$library: not found in $cuda_root or a Python wheel (configure will say so)"
  fi
  unset header_dir library_path
done
if [[ ! -d /usr/lib/cmake/pybind11 ]] && python_has pybind11; then
  cmake_extra+=("-Dpybind11_DIR=$("$python" -m pybind11 --cmakedir)")
fi

# The C++ runtime. A compiler that links libstdc++ statically (the H200 image's /opt/gcc did) put
# a private copy of it into liboneflow.so, beside the shared one that the carried libraries and
# Python's other extensions load: the two disagreed on locale facets, and the first error message
# that formatted a number crashed (std::ostream << long, a segfault). A probe library tells; the
# build then names the system's shared libstdc++.so.6 (a file, not a -l search) first, so no
# archive member is pulled in: for an archive-only libstdc++ and -static-libstdc++ specs alike.
cxx=${CXX:-$(command -v c++ || command -v g++ || true)}
links_shared_stdcxx() {  # links_shared_stdcxx [LINKER FLAGS...]: the probe needs libstdc++.so.6
  local probe=/tmp/oneflow-stdcxx-probe
  mkdir -p "$probe" || return
  printf '%s\n' '#include <sstream>' \
    'std::string f(long v) { std::ostringstream s; s << v; return s.str(); }' >"$probe/probe.cpp"
  "$cxx" -shared -fPIC "$@" -o "$probe/libprobe.so" "$probe/probe.cpp" >/dev/null 2>&1 \
    && readelf -d "$probe/libprobe.so" | grep -q 'NEEDED.*libstdc++\.so\.6'
}
if [[ -n "$cxx" ]]; then
  cmake_extra+=("-DCMAKE_CXX_COMPILER=$cxx")
  if ! links_shared_stdcxx; then
    shared_stdcxx=""
    for folder in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64; do
      if [[ -e "$folder/libstdc++.so.6" ]]; then
        shared_stdcxx=-Wl,--push-state,--no-as-needed,$folder/libstdc++.so.6,--pop-state
        break
      fi
    done
    if [[ -n "$shared_stdcxx" ]] && links_shared_stdcxx "$shared_stdcxx"; then
      echo "C++ runtime: $cxx links libstdc++ statically; the build links $folder/libstdc++.so.6"
      for kind in SHARED MODULE EXE; do
        cmake_extra+=("-DCMAKE_${kind}_LINKER_FLAGS=$shared_stdcxx")
      done
    else
      echo "WARNING: $cxx links libstdc++ statically and no shared libstdc++.so.6 helps:" \
        "the first error message may crash"
    fi
  fi
fi

build() {
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DONEFLOW_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$nvcc_path" \
    -DPython3_EXECUTABLE="$python" -DONEFLOW_BUILD_TESTS=ON -DONEFLOW_BUILD_PYTHON="$build_python" \
    "${cmake_extra[@]}" || return
  cmake --build "$build_dir" --parallel "$cores" \
    ${GPU_CHECK_BUILD_TARGET:+--target "$GPU_CHECK_BUILD_TARGET"} || return
  if [[ -e "$build_dir/liboneflow.so" ]] \
      && ! readelf -d "$build_dir/liboneflow.so" | grep -q 'NEEDED.*libstdc++\.so\.6'; then
    echo "WARNING: liboneflow.so carries its own libstdc++ (see 'The C++ runtime' above)"
  fi
}
stage build 360 build

# ---------------------------------------------------------------- tests, with GPU execution on
if [[ $mode == gpu ]]; then
  export ONEFLOW_GPU=1
else
  export ONEFLOW_GPU=0
fi

import_check() {
  "$python" - <<'EOF'
import oneflow as flow
print("oneflow from", flow.__file__)
print("cuda_info:", flow.sysconfig.cuda_info())
print("gpus_in_use:", flow.sysconfig.gpus_in_use())
EOF
}
if [[ $build_python == ON ]]; then
  stage import 60 import_check
else
  record import 0 "skipped (no Python build)"
fi

cpp_tests() {
  local log="$ctest_dir/gpu_check_ctest.log" status
  ctest --test-dir "$ctest_dir" -j "$cores" --timeout 120 --output-on-failure >"$log" 2>&1
  status=$?
  echo "GPU tests (names with Cuda, Gpu, BoxCopy or Nccl):"
  grep -E 'Test +#[0-9]+: [^ ]*(Cuda|Gpu|BoxCopy|Nccl)' "$log" | sed 's/^ */  /'
  echo "failed or not run:"
  sed -n '/The following tests FAILED/,$p' "$log" | sed 's/^/  /'
  grep -E 'tests passed|Total Test time' "$log"
  echo "(whole log: $log)"
  return $status
}
stage ctest 100 cpp_tests

if [[ $build_python == ON ]]; then
  stage pytest_test_gpu 100 "$python" -m pytest -q -rs -p no:cacheprovider tests/python/test_gpu.py
  # The op checker's GPU pass: the [gpu] cases of every test module that checks ops.
  # -v: a line per test as it ends, so a pass cut short by its cap still shows how far it got.
  # Compiling each case's job is host work: a worker per core, two left for the rest.
  xdist=()
  python_has xdist && xdist=(-n "$workers")
  stage pytest_gpu_pass 150 "$python" -m pytest -v -rf --tb=short -p no:cacheprovider \
    "${xdist[@]}" -k gpu \
    --ignore=tests/python/test_gpu.py tests/python

  # -------------------------------------------------------------- benchmark
  left=$((budget - (SECONDS - started) - 20))
  if [[ $mode == gpu ]]; then
    stage gpu_benchmark 300 "$python" benchmarks/gpu_benchmark.py --budget "$left"
  else
    stage gpu_benchmark 300 "$python" benchmarks/gpu_benchmark.py --device cpu --tiny \
      --budget "$left"
  fi
else
  for name in pytest_test_gpu pytest_gpu_pass gpu_benchmark; do
    record "$name" 0 "skipped (no Python build)"
  done
  # PyTorch's side alone, as the baseline for a later run.
  if [[ $mode == gpu ]]; then
    stage torch_baseline 180 "$python" benchmarks/gpu_benchmark.py --torch-only \
      --budget 170 --torch-timeout 80
  fi
fi

summary

# Matrix products (target oneflow_blas): oneDNN's sgemm for float32 (its JIT kernels for the
# machine's vector units measured 12-35% faster than OpenBLAS on the MLP's shapes, at 1 and 2
# threads: benchmarks/README.md), OpenBLAS for float64. And the vector-unit flags for kernels.
#
# Debian's OpenMP build of OpenBLAS is preferred: it is the build PyTorch's baseline is fastest
# with, so benchmarks compare both frameworks on the same BLAS (our MLP measured the same with
# either build, 19-25k samples/s at 2 threads on 2 cores, within noise). Kernels' ParallelFor
# keeps its own small pool (device/cpu_stream.cpp) whose workers sleep when idle: running it on
# OpenMP as well was 2x slower, because OpenMP's idle threads spin against the actor and Python
# threads. ONEFLOW_BLAS_VARIANT=default links whatever libopenblas the system's alternatives
# select. (A process that also loads PyTorch uses whichever libopenblas.so.0 was loaded first.)
set(ONEFLOW_BLAS_VARIANT "openmp" CACHE STRING "openmp or default")
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread
          x86_64-linux-gnu/openblas-openmp)
if(NOT OPENBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "cblas.h not found: install libopenblas-dev (scripts/install_deps.sh)")
endif()
set(openblas_openmp /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/libopenblas.so.0)
if(ONEFLOW_BLAS_VARIANT STREQUAL "openmp" AND EXISTS ${openblas_openmp})
  set(OPENBLAS_LIBRARY ${openblas_openmp})
else()
  find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
endif()
message(STATUS "OpenBLAS: ${OPENBLAS_LIBRARY}")
# oneDNN is found by its header and library, not its CMake package: Debian's package config
# requires the OpenCL development files (its GPU runtime), which a CPU-only user of it never needs.
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(DNNL_LIBRARY NAMES dnnl)
if(NOT DNNL_INCLUDE_DIR OR NOT DNNL_LIBRARY)
  message(FATAL_ERROR "oneDNN not found: install libdnnl-dev (scripts/install_deps.sh)")
endif()
message(STATUS "oneDNN: ${DNNL_LIBRARY}")
# Both libraries thread with OpenMP; each runtime thread sets its own OpenMP thread count.
find_package(OpenMP REQUIRED)
add_library(oneflow_blas INTERFACE)
target_include_directories(oneflow_blas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_include_directories(oneflow_blas INTERFACE ${DNNL_INCLUDE_DIR})
target_link_libraries(oneflow_blas INTERFACE ${OPENBLAS_LIBRARY} ${DNNL_LIBRARY} OpenMP::OpenMP_CXX)

# Kernels are plain loops written to vectorize. The default build is generic x86-64 so that the
# library runs on any x86-64 CPU; hot kernel loops carry per-ISA clones (AVX-512, AVX2+FMA,
# baseline) chosen at load time (oneflow/kernels/cpu/cpu_dispatch.h). ONEFLOW_CPU_ARCH=native
# compiles everything for the build machine instead (one version, no clones), for binaries that
# only ever run there.
set(ONEFLOW_CPU_ARCH "x86-64" CACHE STRING "-march value for CPU kernels (x86-64, native or a CPU name)")
set(ONEFLOW_CPU_ARCH_FLAGS -march=${ONEFLOW_CPU_ARCH})

# OpenBLAS for matrix products (target oneflow_blas), and the vector-unit flags for kernels.
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
if(NOT OPENBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "cblas.h not found: install libopenblas-dev (scripts/install_deps.sh)")
endif()
add_library(oneflow_blas INTERFACE)
target_include_directories(oneflow_blas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(oneflow_blas INTERFACE ${OPENBLAS_LIBRARY})

# Kernels are plain loops written to vectorize; let the compiler use AVX2/FMA when the build
# machine has them (ONEFLOW_CPU_ARCH=native), or a portable baseline otherwise.
set(ONEFLOW_CPU_ARCH "native" CACHE STRING "-march value for CPU kernels (native or a CPU name)")
set(ONEFLOW_CPU_ARCH_FLAGS -march=${ONEFLOW_CPU_ARCH})

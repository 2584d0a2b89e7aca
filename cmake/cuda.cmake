# ONEFLOW_WITH_CUDA: AUTO (default: on when a CUDA compiler is found), ON (a configure error
# without one) or OFF. A build with CUDA still runs on a machine without a GPU or driver: the
# runtime is linked statically and asks for devices only when the package is imported, and
# "gpu" placements then map to CPU devices (python/oneflow/framework/session.py).
#
# Sets ONEFLOW_CUDA_ENABLED and, when on, enables the CUDA language for sm_90 unless
# CMAKE_CUDA_ARCHITECTURES says otherwise.
set(ONEFLOW_WITH_CUDA AUTO CACHE STRING "Build with CUDA: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE ONEFLOW_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${ONEFLOW_WITH_CUDA}" _oneflow_with_cuda)
if(NOT _oneflow_with_cuda MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|1|0|YES|NO)$")
  message(FATAL_ERROR "ONEFLOW_WITH_CUDA must be AUTO, ON or OFF, not '${ONEFLOW_WITH_CUDA}'")
endif()

set(ONEFLOW_CUDA_ENABLED OFF)
if(_oneflow_with_cuda STREQUAL "AUTO" OR _oneflow_with_cuda MATCHES "^(ON|TRUE|1|YES)$")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(ONEFLOW_CUDA_ENABLED ON)
  elseif(NOT _oneflow_with_cuda STREQUAL "AUTO")
    message(FATAL_ERROR "ONEFLOW_WITH_CUDA=${ONEFLOW_WITH_CUDA} but no working CUDA compiler was "
                        "found (set CUDACXX or CMAKE_CUDA_COMPILER to nvcc)")
  endif()
endif()

if(ONEFLOW_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "oneflow: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "oneflow: built without CUDA (ONEFLOW_WITH_CUDA=${ONEFLOW_WITH_CUDA})")
endif()

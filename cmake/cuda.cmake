# ONEFLOW_WITH_CUDA: AUTO (default: on when a CUDA compiler is found), ON (a configure error
# without one) or OFF. A build with CUDA still runs on a machine without a GPU or driver: the
# runtime is linked statically and asks for devices only when the package is imported, and
# "gpu" placements then map to CPU devices (python/oneflow/framework/session.py).
#
# Sets ONEFLOW_CUDA_ENABLED and, when on, enables the CUDA language for sm_90 unless
# CMAKE_CUDA_ARCHITECTURES says otherwise, and sets ONEFLOW_CUDNN_LIBRARY/_INCLUDE_DIR and
# ONEFLOW_NCCL_LIBRARY/_INCLUDE_DIR.
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

# cuDNN and NCCL ship apart from the toolkit (often in its lib/ folder); they are found, never
# downloaded. Without them AUTO builds without CUDA and ON is a configure error.
if(ONEFLOW_CUDA_ENABLED)
  find_package(CUDAToolkit REQUIRED)
  set(_oneflow_cuda_hints ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
      /usr/local/cuda/lib64 /usr/local/cuda/lib)
  set(_oneflow_cuda_include_hints ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(ONEFLOW_CUDNN_LIBRARY cudnn HINTS ${_oneflow_cuda_hints})
  find_path(ONEFLOW_CUDNN_INCLUDE_DIR cudnn.h HINTS ${_oneflow_cuda_include_hints})
  find_library(ONEFLOW_NCCL_LIBRARY nccl HINTS ${_oneflow_cuda_hints})
  find_path(ONEFLOW_NCCL_INCLUDE_DIR nccl.h HINTS ${_oneflow_cuda_include_hints})
  set(_oneflow_cuda_missing)
  foreach(_variable ONEFLOW_CUDNN_LIBRARY ONEFLOW_CUDNN_INCLUDE_DIR ONEFLOW_NCCL_LIBRARY
                    ONEFLOW_NCCL_INCLUDE_DIR)
    if(NOT ${_variable})
      list(APPEND _oneflow_cuda_missing ${_variable})
    endif()
  endforeach()
  if(_oneflow_cuda_missing)
    set(_oneflow_cuda_message "CUDA ${CUDAToolkit_VERSION} was found but not cuDNN or NCCL: "
        "set ${_oneflow_cuda_missing} (or CUDAToolkit_ROOT)")
    if(_oneflow_with_cuda STREQUAL "AUTO")
      message(WARNING ${_oneflow_cuda_message} "; building without CUDA")
      set(ONEFLOW_CUDA_ENABLED OFF)
    else()
      message(FATAL_ERROR ${_oneflow_cuda_message} ", or configure with -DONEFLOW_WITH_CUDA=OFF")
    endif()
  endif()
endif()

if(ONEFLOW_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  message(STATUS "oneflow: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, "
                 "cuDNN ${ONEFLOW_CUDNN_LIBRARY}, NCCL ${ONEFLOW_NCCL_LIBRARY}")
else()
  message(STATUS "oneflow: built without CUDA (ONEFLOW_WITH_CUDA=${ONEFLOW_WITH_CUDA})")
endif()

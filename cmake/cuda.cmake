# ONEFLOW_WITH_CUDA: ON when a CUDA toolkit is found, unless the user says otherwise.
# The GPU device arrives in a later issue; until then the flag only records what was found.
if(NOT DEFINED ONEFLOW_WITH_CUDA)
  find_program(ONEFLOW_NVCC nvcc HINTS /usr/local/cuda/bin)
  if(ONEFLOW_NVCC)
    set(ONEFLOW_CUDA_FOUND ON)
  else()
    set(ONEFLOW_CUDA_FOUND OFF)
  endif()
  # GPU kernels do not exist yet, so a found toolkit does not switch CUDA on by itself.
  set(ONEFLOW_WITH_CUDA OFF CACHE BOOL "Build CUDA kernels (toolkit found: ${ONEFLOW_CUDA_FOUND})")
endif()
if(ONEFLOW_WITH_CUDA)
  message(FATAL_ERROR "ONEFLOW_WITH_CUDA=ON: CUDA kernels are not implemented yet")
endif()

#pragma once
// Checks for CUDA, cuBLAS and cuDNN status codes: a failure throws Error(kRuntime) naming the
// call, the code's text and the source line, so a device error reaches Python as RuntimeError
// instead of aborting the process. CUDA builds only.

#ifdef ONEFLOW_WITH_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "oneflow/common/error.h"

namespace oneflow {

const char* CublasStatusText(cublasStatus_t status);

}  // namespace oneflow

#define OF_CUDA_CHECK(call)                                                                  \
  do {                                                                                       \
    const cudaError_t of_cuda_status_ = (call);                                              \
    if (of_cuda_status_ != cudaSuccess) {                                                    \
      throw ::oneflow::Error(::oneflow::ErrorKind::kRuntime)                                 \
          << #call << " failed: " << cudaGetErrorString(of_cuda_status_) << " (" << __FILE__ \
          << ":" << __LINE__ << ")";                                                         \
    }                                                                                        \
  } while (false)

#define OF_CUBLAS_CHECK(call)                                                               \
  do {                                                                                      \
    const cublasStatus_t of_cublas_status_ = (call);                                        \
    if (of_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                       \
      throw ::oneflow::Error(::oneflow::ErrorKind::kRuntime)                                \
          << #call << " failed: " << ::oneflow::CublasStatusText(of_cublas_status_) << " (" \
          << __FILE__ << ":" << __LINE__ << ")";                                            \
    }                                                                                       \
  } while (false)

#define OF_CUDNN_CHECK(call)                                                                   \
  do {                                                                                         \
    const cudnnStatus_t of_cudnn_status_ = (call);                                             \
    if (of_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                                            \
      throw ::oneflow::Error(::oneflow::ErrorKind::kRuntime)                                   \
          << #call << " failed: " << cudnnGetErrorString(of_cudnn_status_) << " (" << __FILE__ \
          << ":" << __LINE__ << ")";                                                           \
    }                                                                                          \
  } while (false)

#endif  // ONEFLOW_WITH_CUDA

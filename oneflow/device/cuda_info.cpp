#include "oneflow/device/cuda_info.h"

#include <cstdlib>
#include <cstring>

#ifdef ONEFLOW_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace oneflow {

namespace {

CudaInfo QueryCudaInfo() {
  CudaInfo info;
  const char* tf32 = std::getenv("ONEFLOW_CUDA_ALLOW_TF32");
  info.allow_tf32 = tf32 != nullptr && std::strcmp(tf32, "1") == 0;
#ifdef ONEFLOW_WITH_CUDA
  info.built_with_cuda = true;
  cudaRuntimeGetVersion(&info.runtime_version);
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess || info.driver_version == 0) {
    info.driver_version = 0;
    info.reason = "no NVIDIA driver is installed";
    return info;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.reason =
        std::string("the CUDA runtime found no usable GPU (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clears the sticky error of the failed call
    return info;
  }
  info.device_count = count;
  if (count == 0) { info.reason = "no GPU is visible (CUDA_VISIBLE_DEVICES?)"; }
#else
  info.reason = "this build has no CUDA (configure with -DONEFLOW_WITH_CUDA=ON)";
#endif
  return info;
}

}  // namespace

const CudaInfo& GetCudaInfo() {
  static const CudaInfo info = QueryCudaInfo();
  return info;
}

}  // namespace oneflow

#pragma once
// What this build knows about CUDA: whether it was built with it, and which GPUs the process can
// use. Safe on any machine: without a driver or a GPU the count is 0 and `reason` says why;
// nothing here throws or aborts.

#include <string>

namespace oneflow {

struct CudaInfo {
  bool built_with_cuda = false;
  int runtime_version = 0;  // CUDA runtime the build links (e.g. 13000), 0 without CUDA
  int driver_version = 0;   // installed driver's CUDA version, 0 without a driver
  int device_count = 0;     // GPUs visible to this process (CUDA_VISIBLE_DEVICES applies)
  std::string reason;       // why device_count is 0, when it is
  // ONEFLOW_CUDA_ALLOW_TF32=1: float32 convolutions and matmuls may run on TF32 tensor cores
  // (10-bit mantissa products; PyTorch's default for convolutions). Off by default: strict
  // float32, the CPU kernels' numbers to float32 rounding.
  bool allow_tf32 = false;
};

// Queried once per process (the answer cannot change while it runs), on first use.
const CudaInfo& GetCudaInfo();

}  // namespace oneflow

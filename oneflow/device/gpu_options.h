#pragma once
// How GPU kernels may compute: set per session (flow.config) and handed to the device context of
// each GPU, where kernels read it (CudaDeviceContext::options()). Builds without CUDA carry it too.

namespace oneflow {

struct GpuOptions {
  // float32 convolutions and matmuls on TF32 tensor cores (10-bit mantissa products):
  // flow.config.enable_tensor_float_32_compute; unset, ONEFLOW_CUDA_ALLOW_TF32=1 (cuda_info()).
  // Off: strict float32, the CPU kernels' numbers to float32 rounding.
  bool allow_tf32 = false;
  // How convolutions choose their cuDNN algorithm, once per shape: cuDNN's heuristic ranking
  // (true, OneFlow's default), or its measured search, which runs every algorithm once and takes
  // the fastest (false: flow.config.enable_cudnn_conv_heuristic_search_algo(False); PyTorch's
  // cudnn.benchmark).
  bool conv_heuristic_search = true;
};

}  // namespace oneflow

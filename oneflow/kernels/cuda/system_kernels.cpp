// GPU kernels of the ops the compiler and the session place on a GPU for every dtype: the
// variable op (its register is the GPU copy of the variable's part: nothing to compute) and
// copy_hd (host <-> GPU copies, asynchronous on the device's stream; the host side is pinned).
#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"

namespace oneflow {
namespace {

class GpuVariableKernel final : public Kernel {
 public:
  explicit GpuVariableKernel(const KernelInitContext&) {}
  void Forward(KernelContext&) override {}
};

class CopyHdKernel final : public Kernel {
 public:
  explicit CopyHdKernel(const KernelInitContext& ctx)
      : kind_(ctx.Attr<std::string>("direction") == "h2d" ? cudaMemcpyHostToDevice
                                                          : cudaMemcpyDeviceToHost) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    const int64_t bytes = in.desc().byte_size();
    if (bytes == 0) { return; }
    OF_CUDA_CHECK(cudaMemcpyAsync(out.mut_raw(), in.raw(), static_cast<size_t>(bytes), kind_,
                                  ctx.cuda_device().cuda_stream()));
  }

 private:
  cudaMemcpyKind kind_;
};

#define REGISTER_GPU_SYSTEM_KERNELS(data_type)                      \
  REGISTER_KERNEL("variable", "gpu", data_type, GpuVariableKernel); \
  REGISTER_KERNEL("copy_hd", "gpu", data_type, CopyHdKernel)

REGISTER_GPU_SYSTEM_KERNELS(kFloat);
REGISTER_GPU_SYSTEM_KERNELS(kDouble);
REGISTER_GPU_SYSTEM_KERNELS(kFloat16);
REGISTER_GPU_SYSTEM_KERNELS(kInt8);
REGISTER_GPU_SYSTEM_KERNELS(kInt32);
REGISTER_GPU_SYSTEM_KERNELS(kInt64);
REGISTER_GPU_SYSTEM_KERNELS(kUInt8);

}  // namespace
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA

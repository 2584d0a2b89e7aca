// GPU kernels of the broadcast binary family
// (oneflow/ops/broadcast_binary.cpp): one functor per op over the broadcast
// launcher of broadcast.cuh. The formulas are those of the CPU kernels
// (broadcast_binary_formulas.h), with the same dtypes, plus float16 for the floating ones
// (computed in float). Comparisons and logical ops write int8.

#include <cuda_fp16.h>

#include <type_traits>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/broadcast_binary_formulas.h"
#include "oneflow/kernels/broadcast_binary_op_list.h"
#include "oneflow/kernels/cuda/broadcast.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

// The launcher's functor object around a formula of broadcast_binary_formulas.h.
template <typename Formula>
struct ApplyOp {
  template <typename C>
  __device__ __forceinline__ auto operator()(C x, C y) const {
    return Formula::Apply(x, y);
  }
};

// Out: z's element type (T, or int8 for comparisons and logical ops).
template <typename Functor, typename T, typename Out = T>
class BroadcastBinaryGpuKernel final : public Kernel {
 public:
  explicit BroadcastBinaryGpuKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("z").shape, ctx.Desc("x").shape, ctx.Desc("y").shape) {}

  void Forward(KernelContext& ctx) override {
    LaunchBroadcastBinary<ComputeType<T>>(ctx.cuda_device().cuda_stream(), plan_,
                                          ApplyOp<Functor>(), ctx.Output("z").mut_data<Out>(),
                                          ctx.Input("x").data<T>(), ctx.Input("y").data<T>());
  }

 private:
  BroadcastBinaryPlan plan_;
};

}  // namespace

#define OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, data_type, T, Out) \
  REGISTER_KERNEL(op_type, "gpu", data_type,                              \
                  BroadcastBinaryGpuKernel<broadcast_binary::Functor<DeviceMath>, T, Out>)

#define OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor)           \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, float);    \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, double); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat16, half, half)

#define OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES(op_type, Functor)           \
  OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor);                 \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt8, int8_t, int8_t);    \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int32_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int64_t)

#define OF_REGISTER_BROADCAST_COMPARE_KERNELS(op_type, Functor)            \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, int8_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat16, half, int8_t);  \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt8, int8_t, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int8_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int8_t)

OF_FOR_EACH_BROADCAST_BINARY_OP(OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES,
                                OF_REGISTER_BROADCAST_FLOATING_KERNELS,
                                OF_REGISTER_BROADCAST_COMPARE_KERNELS);

}  // namespace cuda
}  // namespace oneflow

// GPU kernels of the unary math family (oneflow/ops/math_unary.cpp): one
// forward and one gradient kernel template over the formulas of
// math_unary_formulas.h with DeviceMath, registered for the same ops and dtypes as the CPU kernels
// (cpu/math_unary.cpp), plus float16 (computed in float).

#include <cuda_fp16.h>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"
#include "oneflow/kernels/math_unary_op_list.h"

namespace oneflow {
namespace cuda {

namespace {

using math_unary::Params;

template <typename C>
Params<C> ReadParams(const KernelInitContext& ctx) {
  Params<C> params;
  const auto& attrs = ctx.conf().attr();
  if (attrs.count("alpha")) { params.a = static_cast<C>(ctx.Attr<double>("alpha")); }
  if (attrs.count("min_val")) { params.a = static_cast<C>(ctx.Attr<double>("min_val")); }
  if (attrs.count("max_val")) { params.b = static_cast<C>(ctx.Attr<double>("max_val")); }
  return params;
}

template <typename Functor, typename C>
struct ForwardOp {
  Params<C> params;
  __device__ auto operator()(C x) const { return Functor::Forward(x, params); }
};

template <typename Functor, typename C>
struct BackwardOp {
  Params<C> params;
  __device__ C operator()(C x, C dy) const { return Functor::Backward(x, dy, params); }
};

// Out: y's element type (T, or int8 for logical_not).
template <typename Functor, typename T, typename Out = T>
class MathUnaryKernel final : public Kernel {
 public:
  using C = ComputeType<T>;
  explicit MathUnaryKernel(const KernelInitContext& ctx) : params_(ReadParams<C>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    LaunchElementwise<C>(ctx.cuda_device().cuda_stream(), x.elem_count(),
                         ForwardOp<Functor, C>{params_}, ctx.Output("y").mut_data<Out>(),
                         x.data<T>());
  }

 private:
  Params<C> params_;
};

template <typename Functor, typename T>
class MathUnaryGradKernel final : public Kernel {
 public:
  using C = ComputeType<T>;
  explicit MathUnaryGradKernel(const KernelInitContext& ctx) : params_(ReadParams<C>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    LaunchElementwise<C>(ctx.cuda_device().cuda_stream(), x.elem_count(),
                         BackwardOp<Functor, C>{params_}, ctx.Output("dx").mut_data<T>(),
                         x.data<T>(), ctx.Input("dy").data<T>());
  }

 private:
  Params<C> params_;
};

}  // namespace

#define OF_REGISTER_MATH_UNARY_FORWARD(op_type, Functor)                     \
  REGISTER_KERNEL(op_type, "gpu", kFloat,                                    \
                  MathUnaryKernel<math_unary::Functor<DeviceMath>, float>);  \
  REGISTER_KERNEL(op_type, "gpu", kDouble,                                   \
                  MathUnaryKernel<math_unary::Functor<DeviceMath>, double>); \
  REGISTER_KERNEL(op_type, "gpu", kFloat16, MathUnaryKernel<math_unary::Functor<DeviceMath>, half>)
#define OF_REGISTER_MATH_UNARY(op_type, Functor)                                 \
  OF_REGISTER_MATH_UNARY_FORWARD(op_type, Functor);                              \
  REGISTER_KERNEL(op_type "_grad", "gpu", kFloat,                                \
                  MathUnaryGradKernel<math_unary::Functor<DeviceMath>, float>);  \
  REGISTER_KERNEL(op_type "_grad", "gpu", kDouble,                               \
                  MathUnaryGradKernel<math_unary::Functor<DeviceMath>, double>); \
  REGISTER_KERNEL(op_type "_grad", "gpu", kFloat16,                              \
                  MathUnaryGradKernel<math_unary::Functor<DeviceMath>, half>)
#define OF_REGISTER_MATH_UNARY_INTEGERS(op_type, Functor)                     \
  REGISTER_KERNEL(op_type, "gpu", kInt32,                                     \
                  MathUnaryKernel<math_unary::Functor<DeviceMath>, int32_t>); \
  REGISTER_KERNEL(op_type, "gpu", kInt64, MathUnaryKernel<math_unary::Functor<DeviceMath>, int64_t>)

OF_FOR_EACH_MATH_UNARY_OP(OF_REGISTER_MATH_UNARY, OF_REGISTER_MATH_UNARY_FORWARD,
                          OF_REGISTER_MATH_UNARY_INTEGERS);

#define OF_REGISTER_LOGICAL_NOT(data_type, T)      \
  REGISTER_KERNEL("logical_not", "gpu", data_type, \
                  MathUnaryKernel<math_unary::LogicalNot<DeviceMath>, T, int8_t>)
OF_REGISTER_LOGICAL_NOT(kFloat, float);
OF_REGISTER_LOGICAL_NOT(kDouble, double);
OF_REGISTER_LOGICAL_NOT(kFloat16, half);
OF_REGISTER_LOGICAL_NOT(kInt8, int8_t);
OF_REGISTER_LOGICAL_NOT(kInt32, int32_t);
OF_REGISTER_LOGICAL_NOT(kInt64, int64_t);

}  // namespace cuda
}  // namespace oneflow

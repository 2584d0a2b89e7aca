// CPU kernels of the unary math family (oneflow/ops/math_unary.cpp): one forward and one
// gradient kernel template over the formulas of math_unary_formulas.h with HostMath, run per chunk
// of ParallelForElements through the ISA-dispatched loops of elementwise_loops.h.

#include <string>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/elementwise_loops.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/host_math.h"
#include "oneflow/kernels/math_unary_formulas.h"
#include "oneflow/kernels/math_unary_op_list.h"

namespace oneflow {

namespace {

using math_unary::Params;

// The op's float attributes in declaration order (min_val, max_val / alpha) as Params.
template <typename T>
Params<T> ReadParams(const KernelInitContext& ctx) {
  Params<T> params;
  const auto& attrs = ctx.conf().attr();
  if (attrs.count("alpha")) { params.a = static_cast<T>(ctx.Attr<double>("alpha")); }
  if (attrs.count("min_val")) { params.a = static_cast<T>(ctx.Attr<double>("min_val")); }
  if (attrs.count("max_val")) { params.b = static_cast<T>(ctx.Attr<double>("max_val")); }
  return params;
}

// Out: y's element type (T, or int8 for logical_not).
template <typename Functor, typename T, typename Out = T>
class MathUnaryKernel final : public Kernel {
 public:
  explicit MathUnaryKernel(const KernelInitContext& ctx) : params_(ReadParams<T>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    Out* y = ctx.Output("y").mut_data<Out>();
    const Params<T> params = params_;
    ParallelForElements(ctx, ctx.Input("x").elem_count(), kElementwiseGrain,
                        [=](int64_t begin, int64_t end) {
                          UnaryLoop<Functor>(x + begin, y + begin, end - begin, params);
                        });
  }

 private:
  Params<T> params_;
};

template <typename Functor, typename T>
class MathUnaryGradKernel final : public Kernel {
 public:
  explicit MathUnaryGradKernel(const KernelInitContext& ctx) : params_(ReadParams<T>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    const Params<T> params = params_;
    ParallelForElements(ctx, ctx.Input("x").elem_count(), kElementwiseGrain,
                        [=](int64_t begin, int64_t end) {
                          UnaryGradLoop<Functor>(x + begin, dy + begin, dx + begin, end - begin,
                                                 params);
                        });
  }

 private:
  Params<T> params_;
};

}  // namespace

// Forward and gradient kernels for float and double.
#define OF_REGISTER_MATH_UNARY(op_type, Functor)                                                  \
  REGISTER_KERNEL(op_type, "cpu", kFloat, MathUnaryKernel<math_unary::Functor<HostMath>, float>); \
  REGISTER_KERNEL(op_type, "cpu", kDouble,                                                        \
                  MathUnaryKernel<math_unary::Functor<HostMath>, double>);                        \
  REGISTER_KERNEL(op_type "_grad", "cpu", kFloat,                                                 \
                  MathUnaryGradKernel<math_unary::Functor<HostMath>, float>);                     \
  REGISTER_KERNEL(op_type "_grad", "cpu", kDouble,                                                \
                  MathUnaryGradKernel<math_unary::Functor<HostMath>, double>)

// Forward kernels only: zero-gradient ops, whose gradient is a constant_like.
#define OF_REGISTER_MATH_UNARY_FORWARD(op_type, Functor)                                          \
  REGISTER_KERNEL(op_type, "cpu", kFloat, MathUnaryKernel<math_unary::Functor<HostMath>, float>); \
  REGISTER_KERNEL(op_type, "cpu", kDouble, MathUnaryKernel<math_unary::Functor<HostMath>, double>)

// Integer forward kernels of the ops that accept int32 and int64.
#define OF_REGISTER_MATH_UNARY_INTEGERS(op_type, Functor)                   \
  REGISTER_KERNEL(op_type, "cpu", kInt32,                                   \
                  MathUnaryKernel<math_unary::Functor<HostMath>, int32_t>); \
  REGISTER_KERNEL(op_type, "cpu", kInt64, MathUnaryKernel<math_unary::Functor<HostMath>, int64_t>)

OF_FOR_EACH_MATH_UNARY_OP(OF_REGISTER_MATH_UNARY, OF_REGISTER_MATH_UNARY_FORWARD,
                          OF_REGISTER_MATH_UNARY_INTEGERS);

#define OF_REGISTER_LOGICAL_NOT(data_type, T)      \
  REGISTER_KERNEL("logical_not", "cpu", data_type, \
                  MathUnaryKernel<math_unary::LogicalNot<HostMath>, T, int8_t>)
OF_REGISTER_LOGICAL_NOT(kFloat, float);
OF_REGISTER_LOGICAL_NOT(kDouble, double);
OF_REGISTER_LOGICAL_NOT(kInt8, int8_t);
OF_REGISTER_LOGICAL_NOT(kInt32, int32_t);
OF_REGISTER_LOGICAL_NOT(kInt64, int64_t);

}  // namespace oneflow

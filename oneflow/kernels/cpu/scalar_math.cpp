// CPU scalar_add, scalar_mul and scalar_pow; the operand is converted to the element type
// once, at construction.

#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/elementwise_loops.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

struct ScalarAdd {
  template <typename T>
  static T Apply(T x, T operand) {
    return x + operand;
  }
};
struct ScalarMul {
  template <typename T>
  static T Apply(T x, T operand) {
    return x * operand;
  }
};

struct ScalarPow {
  template <typename T>
  static T Apply(T x, T exponent) {
    return std::pow(x, exponent);
  }
};

// Adapts a (value, operand) functor to UnaryLoop's Forward(x, params).
template <typename Functor>
struct WithOperand {
  template <typename T>
  static T Forward(T x, T operand) {
    return Functor::Apply(x, operand);
  }
};

template <typename Functor, typename T>
class ScalarMathKernel final : public Kernel {
 public:
  explicit ScalarMathKernel(const KernelInitContext& ctx)
      : operand_(static_cast<T>(ctx.Attr<double>(ctx.conf().attr().count("exponent") ? "exponent"
                                                                                      : "operand"))) {}

  void Forward(KernelContext& ctx) override {
    const T* in = ctx.Input("in").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const T operand = operand_;
    ParallelForElements(ctx, ctx.Input("in").elem_count(), kElementwiseGrain,
                        [=](int64_t begin, int64_t end) {
                          UnaryLoop<WithOperand<Functor>>(in + begin, out + begin, end - begin,
                                                          operand);
                        });
  }

 private:
  T operand_;
};

#define OF_REGISTER_SCALAR_MATH_KERNELS(op_type, Functor)                      \
  REGISTER_KERNEL(op_type, "cpu", kFloat, ScalarMathKernel<Functor, float>);   \
  REGISTER_KERNEL(op_type, "cpu", kDouble, ScalarMathKernel<Functor, double>); \
  REGISTER_KERNEL(op_type, "cpu", kInt32, ScalarMathKernel<Functor, int32_t>); \
  REGISTER_KERNEL(op_type, "cpu", kInt64, ScalarMathKernel<Functor, int64_t>)

}  // namespace

OF_REGISTER_SCALAR_MATH_KERNELS("scalar_add", ScalarAdd);
OF_REGISTER_SCALAR_MATH_KERNELS("scalar_mul", ScalarMul);
REGISTER_KERNEL("scalar_pow", "cpu", kFloat, ScalarMathKernel<ScalarPow, float>);
REGISTER_KERNEL("scalar_pow", "cpu", kDouble, ScalarMathKernel<ScalarPow, double>);

}  // namespace oneflow

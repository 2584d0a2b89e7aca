// CPU relu, sigmoid, tanh, square and the activation gradient ops (y, dy -> dx).

#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

struct Relu {
  template <typename T>
  static T Forward(T x) {
    return x < T(0) ? T(0) : x;  // NaN stays NaN, as in numpy and PyTorch
  }
  template <typename T>
  static T Backward(T y, T dy) {
    return y > T(0) ? dy : T(0);
  }
};
struct Sigmoid {
  template <typename T>
  static T Forward(T x) {
    return T(1) / (T(1) + std::exp(-x));
  }
  template <typename T>
  static T Backward(T y, T dy) {
    return dy * y * (T(1) - y);
  }
};
struct Tanh {
  template <typename T>
  static T Forward(T x) {
    return std::tanh(x);
  }
  template <typename T>
  static T Backward(T y, T dy) {
    return dy * (T(1) - y * y);
  }
};
struct Square {
  template <typename T>
  static T Forward(T x) {
    return x * x;
  }
};

template <typename Functor, typename T>
class ActivationKernel final : public Kernel {
 public:
  explicit ActivationKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    ParallelForElements(ctx, ctx.Input("x").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          const T* __restrict__ in = x;
                          T* __restrict__ out = y;
                          for (int64_t i = begin; i < end; ++i) {
                            out[i] = Functor::Forward(in[i]);
                          }
                        }));
  }
};

template <typename Functor, typename T>
class ActivationGradKernel final : public Kernel {
 public:
  explicit ActivationGradKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const T* y = ctx.Input("y").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    ParallelForElements(ctx, ctx.Input("y").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          const T* __restrict__ y_in = y;
                          const T* __restrict__ dy_in = dy;
                          T* __restrict__ out = dx;
                          for (int64_t i = begin; i < end; ++i) {
                            out[i] = Functor::Backward(y_in[i], dy_in[i]);
                          }
                        }));
  }
};

template <typename T>
using ReluKernel = ActivationKernel<Relu, T>;
template <typename T>
using ReluGradKernel = ActivationGradKernel<Relu, T>;
template <typename T>
using SigmoidKernel = ActivationKernel<Sigmoid, T>;
template <typename T>
using SigmoidGradKernel = ActivationGradKernel<Sigmoid, T>;
template <typename T>
using TanhKernel = ActivationKernel<Tanh, T>;
template <typename T>
using TanhGradKernel = ActivationGradKernel<Tanh, T>;
template <typename T>
using SquareKernel = ActivationKernel<Square, T>;

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("relu", ReluKernel);
REGISTER_CPU_FLOATING_KERNELS("relu_grad", ReluGradKernel);
REGISTER_CPU_FLOATING_KERNELS("sigmoid", SigmoidKernel);
REGISTER_CPU_FLOATING_KERNELS("sigmoid_grad", SigmoidGradKernel);
REGISTER_CPU_FLOATING_KERNELS("tanh", TanhKernel);
REGISTER_CPU_FLOATING_KERNELS("tanh_grad", TanhGradKernel);
REGISTER_CPU_FLOATING_KERNELS("square", SquareKernel);

}  // namespace oneflow

// CPU kernels of the fused losses (oneflow/ops/losses.cpp). Softmax cross-entropy shares the
// stable softmax row (softmax_row.h); the elementwise losses use fast_math's branch-free
// softplus and sigmoid so that their loops vectorize.

#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/softmax_row.h"
#include "oneflow/kernels/fast_math.h"

namespace oneflow {

namespace {

template <typename T>
class SoftmaxCrossEntropyKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prediction").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }
  void Forward(KernelContext& ctx) override {
    const T* prediction = ctx.Input("prediction").data<T>();
    const T* label = ctx.Input("label").data<T>();
    T* prob = ctx.Output("prob").mut_data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t classes = classes_;
    ParallelForRows(ctx, rows_, classes,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t row = begin; row < end; ++row) {
                        const T* __restrict__ x = prediction + row * classes;
                        const T* __restrict__ l = label + row * classes;
                        const T log_sum = SoftmaxRow(x, prob + row * classes, classes);
                        // -sum l (x - logsumexp) = logsumexp sum(l) - sum(l x): exact when a prob
                        // underflows.
                        T label_sum = 0, dot = 0;
                        for (int64_t c = 0; c < classes; ++c) {
                          label_sum += l[c];
                          dot += l[c] * x[c];
                        }
                        out[row] = log_sum * label_sum - dot;
                      }
                    }));
  }

 private:
  int64_t rows_, classes_;
};

template <typename T>
class SoftmaxCrossEntropyGradKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyGradKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prob").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }
  void Forward(KernelContext& ctx) override {
    const T* prob = ctx.Input("prob").data<T>();
    const T* label = ctx.Input("label").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* diff = ctx.Output("prediction_diff").mut_data<T>();
    const int64_t classes = classes_;
    ParallelForRows(ctx, rows_, classes,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t row = begin; row < end; ++row) {
                        const T* __restrict__ p = prob + row * classes;
                        const T* __restrict__ l = label + row * classes;
                        T* __restrict__ d = diff + row * classes;
                        T label_sum = 0;
                        for (int64_t c = 0; c < classes; ++c) { label_sum += l[c]; }
                        const T scale = dy[row];
                        for (int64_t c = 0; c < classes; ++c) {
                          d[c] = (p[c] * label_sum - l[c]) * scale;
                        }
                      }
                    }));
  }

 private:
  int64_t rows_, classes_;
};

// Elementwise loss kernels: Functor::Forward(x, z, params) and Backward(x, z, dy, params).
struct SigmoidCrossEntropy {
  template <typename T>
  static T Forward(T x, T z, T) { return fast_math::Softplus(x) - x * z; }
  template <typename T>
  static T Backward(T x, T z, T dy, T) { return (fast_math::Sigmoid(x) - z) * dy; }
};

struct SmoothL1 {
  template <typename T>
  static T Forward(T x, T z, T beta) {
    const T d = x - z;
    const T magnitude = d < T(0) ? -d : d;
    return magnitude < beta ? T(0.5) * d * d / beta : magnitude - T(0.5) * beta;
  }
  template <typename T>
  static T Backward(T x, T z, T dy, T beta) {
    const T d = x - z;
    const T sign = d > T(0) ? T(1) : (d < T(0) ? T(-1) : T(0));
    const T magnitude = d < T(0) ? -d : d;
    return (magnitude < beta ? d / beta : sign) * dy;
  }
};

template <typename Functor, typename T>
class ElementwiseLossKernel final : public Kernel {
 public:
  explicit ElementwiseLossKernel(const KernelInitContext& ctx)
      : param_(ctx.conf().attr().count("beta") ? static_cast<T>(ctx.Attr<double>("beta")) : T(0)) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("prediction").data<T>();
    const T* z = ctx.Input("label").data<T>();
    T* out = ctx.Output(ctx.HasOutput("loss") ? "loss" : "out").mut_data<T>();
    const T param = param_;
    ParallelForElements(ctx, ctx.Input("prediction").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            out[i] = Functor::Forward(x[i], z[i], param);
                          }
                        }));
  }

 private:
  T param_;
};

template <typename Functor, typename T>
class ElementwiseLossGradKernel final : public Kernel {
 public:
  explicit ElementwiseLossGradKernel(const KernelInitContext& ctx)
      : param_(ctx.conf().attr().count("beta") ? static_cast<T>(ctx.Attr<double>("beta")) : T(0)) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("prediction").data<T>();
    const T* z = ctx.Input("label").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("prediction_diff").mut_data<T>();
    const T param = param_;
    ParallelForElements(ctx, ctx.Input("prediction").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            dx[i] = Functor::Backward(x[i], z[i], dy[i], param);
                          }
                        }));
  }

 private:
  T param_;
};

template <typename T>
using SigmoidCrossEntropyKernel = ElementwiseLossKernel<SigmoidCrossEntropy, T>;
template <typename T>
using SigmoidCrossEntropyGradKernel = ElementwiseLossGradKernel<SigmoidCrossEntropy, T>;
template <typename T>
using SmoothL1LossKernel = ElementwiseLossKernel<SmoothL1, T>;
template <typename T>
using SmoothL1LossGradKernel = ElementwiseLossGradKernel<SmoothL1, T>;

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("softmax_cross_entropy", SoftmaxCrossEntropyKernel);
REGISTER_CPU_FLOATING_KERNELS("softmax_cross_entropy_grad", SoftmaxCrossEntropyGradKernel);
REGISTER_CPU_FLOATING_KERNELS("sigmoid_cross_entropy", SigmoidCrossEntropyKernel);
REGISTER_CPU_FLOATING_KERNELS("sigmoid_cross_entropy_grad", SigmoidCrossEntropyGradKernel);
REGISTER_CPU_FLOATING_KERNELS("smooth_l1_loss", SmoothL1LossKernel);
REGISTER_CPU_FLOATING_KERNELS("smooth_l1_loss_grad", SmoothL1LossGradKernel);

}  // namespace oneflow

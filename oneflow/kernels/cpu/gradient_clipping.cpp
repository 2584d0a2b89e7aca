// CPU kernels of the gradient-clipping ops (semantics in oneflow/ops/gradient_clipping.cpp).

#include <algorithm>
#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class ScaleRegularizeGradientKernel final : public Kernel {
 public:
  explicit ScaleRegularizeGradientKernel(const KernelInitContext& ctx)
      : scale_(ctx.Attr<double>("scale")),
        l1_(static_cast<T>(ctx.Attr<double>("l1"))),
        l2_(static_cast<T>(ctx.Attr<double>("l2"))) {}
  void Forward(KernelContext& ctx) override {
    double scale = scale_;
    if (ctx.HasInput("scale_by_tensor")) { scale *= ctx.Input("scale_by_tensor").data<float>()[0]; }
    const T s = static_cast<T>(scale), l1 = l1_, l2 = l2_;
    const T* diff = ctx.Input("diff").data<T>();
    const T* model = ctx.Input("model").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    ParallelForElements(ctx, ctx.Input("diff").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            const T w = model[i];
                            out[i] =
                                s * diff[i] + l1 * static_cast<T>((w > T(0)) - (w < T(0))) + l2 * w;
                          }
                        }));
  }

 private:
  double scale_;
  T l1_, l2_;
};

template <typename T>
double SumOfSquares(const Blob& blob) {
  const T* x = blob.data<T>();
  double sum = 0.0;
  for (int64_t i = 0; i < blob.elem_count(); ++i) {
    sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  }
  return sum;
}

template <typename T>
class SquareSumKernel final : public Kernel {
 public:
  explicit SquareSumKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    ctx.Output("out").mut_data<float>()[0] = static_cast<float>(SumOfSquares<T>(ctx.Input("x")));
  }
};

template <typename T>
class MultiSquareSumKernel final : public Kernel {
 public:
  explicit MultiSquareSumKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    double sum = 0.0;
    for (int64_t index = 0; index < ctx.InputCount("x"); ++index) {
      sum += SumOfSquares<T>(ctx.Input("x", index));
    }
    ctx.Output("y").mut_data<T>()[0] = static_cast<T>(sum);
  }
};

class GlobalNormClipFactorKernel final : public Kernel {
 public:
  explicit GlobalNormClipFactorKernel(const KernelInitContext& ctx)
      : clip_norm_(ctx.Attr<double>("clip_norm")) {}
  void Forward(KernelContext& ctx) override {
    const double norm = std::sqrt(static_cast<double>(ctx.Input("square_sum").data<float>()[0]));
    ctx.Output("out").mut_data<float>()[0] =
        static_cast<float>(clip_norm_ / std::max(norm, clip_norm_));
  }

 private:
  double clip_norm_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("scale_regularize_gradient", ScaleRegularizeGradientKernel);
REGISTER_CPU_FLOATING_KERNELS("square_sum", SquareSumKernel);
REGISTER_CPU_FLOATING_KERNELS("multi_square_sum", MultiSquareSumKernel);
REGISTER_KERNEL("global_norm_clip_factor", "cpu", kFloat, GlobalNormClipFactorKernel);

}  // namespace oneflow

// CPU kernels of the loss-scaling ops (semantics in oneflow/ops/loss_scale.cpp).

#include <cmath>
#include <limits>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class LossScaleSeedKernel final : public Kernel {
 public:
  explicit LossScaleSeedKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const T value = static_cast<T>(ctx.Input("loss_scale").data<float>()[0]);
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t n = ctx.Output("out").elem_count();
    for (int64_t i = 0; i < n; ++i) { out[i] = value; }
  }
};

class LossScaleInverseKernel final : public Kernel {
 public:
  explicit LossScaleInverseKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    ctx.Output("out").mut_data<float>()[0] = 1.0f / ctx.Input("loss_scale").data<float>()[0];
  }
};

template <typename T>
class CountNotFiniteKernel final : public Kernel {
 public:
  explicit CountNotFiniteKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const int64_t n = ctx.Input("x").elem_count();
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) { count += std::isfinite(x[i]) ? 0 : 1; }
    ctx.Output("out").mut_data<int64_t>()[0] = count;
  }
};

class DynamicLossScaleScheduleKernel final : public Kernel {
 public:
  explicit DynamicLossScaleScheduleKernel(const KernelInitContext& ctx)
      : increment_period_(ctx.Attr<int64_t>("increment_period")),
        multiplier_(ctx.Attr<double>("multiplier")) {}
  void Forward(KernelContext& ctx) override {
    float* scale = ctx.MutableInput("loss_scale").mut_data<float>();
    int64_t* good_steps = ctx.MutableInput("good_step_counter").mut_data<int64_t>();
    if (ctx.Input("count_not_finite").data<int64_t>()[0] > 0) {
      *scale = static_cast<float>(std::max(*scale / multiplier_, 1.0));
      *good_steps = 0;
      return;
    }
    *good_steps += 1;
    if (*good_steps >= increment_period_) {
      const double grown = static_cast<double>(*scale) * multiplier_;
      *scale = static_cast<float>(std::min(grown, double{std::numeric_limits<float>::max()}));
      *good_steps = 0;
    }
  }

 private:
  int64_t increment_period_;
  double multiplier_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("loss_scale_seed", LossScaleSeedKernel);
REGISTER_KERNEL("loss_scale_inverse", "cpu", kFloat, LossScaleInverseKernel);
REGISTER_CPU_FLOATING_KERNELS("count_not_finite", CountNotFiniteKernel);
REGISTER_KERNEL("dynamic_loss_scale_schedule", "cpu", kFloat, DynamicLossScaleScheduleKernel);

}  // namespace oneflow

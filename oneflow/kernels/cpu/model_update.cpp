// CPU sgd_update and momentum_update (in place on model and momentum).

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class SgdUpdateKernel final : public Kernel {
 public:
  explicit SgdUpdateKernel(const KernelInitContext& ctx)
      : scale_(static_cast<T>(ctx.Attr<double>("scale"))),
        weight_decay_(static_cast<T>(ctx.Attr<double>("weight_decay"))) {}

  void Forward(KernelContext& ctx) override {
    T* model = ctx.MutableInput("model").mut_data<T>();
    const T* diff = ctx.Input("model_diff").data<T>();
    const T learning_rate = static_cast<T>(*ctx.Input("learning_rate").data<float>());
    const T scale = scale_;
    const T weight_decay = weight_decay_;
    ParallelForElements(ctx, ctx.Input("model").elem_count(), kElementwiseGrain,
                        [=](int64_t begin, int64_t end) {
                          T* __restrict__ w = model;
                          const T* __restrict__ g = diff;
                          for (int64_t i = begin; i < end; ++i) {
                            w[i] -= learning_rate * (scale * g[i] + weight_decay * w[i]);
                          }
                        });
  }

 private:
  T scale_, weight_decay_;
};

template <typename T>
class MomentumUpdateKernel final : public Kernel {
 public:
  explicit MomentumUpdateKernel(const KernelInitContext& ctx)
      : beta_(static_cast<T>(ctx.Attr<double>("beta"))),
        scale_(static_cast<T>(ctx.Attr<double>("scale"))),
        weight_decay_(static_cast<T>(ctx.Attr<double>("weight_decay"))) {}

  void Forward(KernelContext& ctx) override {
    T* model = ctx.MutableInput("model").mut_data<T>();
    T* momentum = ctx.MutableInput("momentum").mut_data<T>();
    const T* diff = ctx.Input("model_diff").data<T>();
    const T learning_rate = static_cast<T>(*ctx.Input("learning_rate").data<float>());
    const T beta = beta_, scale = scale_, weight_decay = weight_decay_;
    ParallelForElements(
        ctx, ctx.Input("model").elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
          T* __restrict__ w = model;
          T* __restrict__ v = momentum;
          const T* __restrict__ g = diff;
          for (int64_t i = begin; i < end; ++i) {
            v[i] = beta * v[i] - learning_rate * (scale * g[i] + weight_decay * w[i]);
            w[i] += v[i];
          }
        });
  }

 private:
  T beta_, scale_, weight_decay_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("sgd_update", SgdUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("momentum_update", MomentumUpdateKernel);

}  // namespace oneflow

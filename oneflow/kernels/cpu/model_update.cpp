// CPU sgd_update, momentum_update and adam_update (in place on the model and its state).

#include <cmath>

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

template <typename T>
class AdamUpdateKernel final : public Kernel {
 public:
  explicit AdamUpdateKernel(const KernelInitContext& ctx)
      : beta1_(ctx.Attr<double>("beta1")),
        beta2_(ctx.Attr<double>("beta2")),
        epsilon_(static_cast<T>(ctx.Attr<double>("epsilon"))),
        scale_(static_cast<T>(ctx.Attr<double>("scale"))),
        weight_decay_(static_cast<T>(ctx.Attr<double>("weight_decay"))),
        bias_correction_(ctx.Attr<bool>("do_bias_correction")) {}

  void Forward(KernelContext& ctx) override {
    T* model = ctx.MutableInput("model").mut_data<T>();
    T* first_moment = ctx.MutableInput("m").mut_data<T>();
    T* second_moment = ctx.MutableInput("v").mut_data<T>();
    const T* diff = ctx.Input("model_diff").data<T>();
    double learning_rate = *ctx.Input("learning_rate").data<float>();
    if (bias_correction_) {
      const double step = static_cast<double>(ctx.Input("train_step").data<int64_t>()[0] + 1);
      learning_rate *=
          std::sqrt(1.0 - std::pow(beta2_, step)) / (1.0 - std::pow(beta1_, step));
    }
    const T lr = static_cast<T>(learning_rate);
    const T beta1 = static_cast<T>(beta1_), beta2 = static_cast<T>(beta2_);
    const T epsilon = epsilon_, scale = scale_, weight_decay = weight_decay_;
    ParallelForElements(
        ctx, ctx.Input("model").elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
          T* __restrict__ w = model;
          T* __restrict__ m = first_moment;
          T* __restrict__ v = second_moment;
          const T* __restrict__ d = diff;
          for (int64_t i = begin; i < end; ++i) {
            const T g = scale * d[i];
            m[i] = beta1 * m[i] + (T(1) - beta1) * g;
            v[i] = beta2 * v[i] + (T(1) - beta2) * g * g;
            w[i] -= lr * (m[i] / (std::sqrt(v[i]) + epsilon) + weight_decay * w[i]);
          }
        });
  }

 private:
  double beta1_, beta2_;
  T epsilon_, scale_, weight_decay_;
  bool bias_correction_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("adam_update", AdamUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("sgd_update", SgdUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("momentum_update", MomentumUpdateKernel);

}  // namespace oneflow

// CPU sgd_update and momentum_update (in place on model and momentum).

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// Model blobs are inputs the kernel may write (MutableInput): their memory is the variable's.
template <typename T>
T* MutableInputData(KernelContext& ctx, const std::string& argument) {
  return static_cast<T*>(const_cast<void*>(ctx.Input(argument).raw()));
}

template <typename T>
class SgdUpdateKernel final : public Kernel {
 public:
  explicit SgdUpdateKernel(const KernelInitContext& ctx)
      : scale_(static_cast<T>(ctx.Attr<double>("scale"))),
        weight_decay_(static_cast<T>(ctx.Attr<double>("weight_decay"))) {}

  void Forward(KernelContext& ctx) override {
    T* model = MutableInputData<T>(ctx, "model");
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
    T* model = MutableInputData<T>(ctx, "model");
    T* momentum = MutableInputData<T>(ctx, "momentum");
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

// CPU kernels of the optimizer update ops (formulas in oneflow/ops/model_update.cpp). The common
// part (skip_if, the effective gradient scale, learning rate and step) is read once per call by
// ModelUpdateKernel; each optimizer supplies its elementwise or whole-variable update.

#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
struct UpdateArgs {
  int64_t n;
  T* model;
  const T* diff;
  T scale, l1, l2, weight_decay;
  double learning_rate;
  int64_t step;  // train_step (0 at the first iteration), or -1 without that input

  // The gradient the formulas use: scaled diff plus the L1/L2 regularization terms.
  T Gradient(int64_t i) const {
    const T w = model[i];
    return scale * diff[i] + l1 * static_cast<T>((w > T(0)) - (w < T(0))) + l2 * w;
  }
};

template <typename T>
class ModelUpdateKernel : public Kernel {
 public:
  explicit ModelUpdateKernel(const KernelInitContext& ctx)
      : scale_(ctx.Attr<double>("scale")),
        l1_(static_cast<T>(ctx.Attr<double>("l1"))),
        l2_(static_cast<T>(ctx.Attr<double>("l2"))),
        weight_decay_(static_cast<T>(ctx.Attr<double>("weight_decay"))) {}

  void Forward(KernelContext& ctx) final {
    if (ctx.HasInput("skip_if") && ctx.Input("skip_if").data<int64_t>()[0] != 0) { return; }
    UpdateArgs<T> args;
    args.n = ctx.Input("model").elem_count();
    args.model = ctx.MutableInput("model").mut_data<T>();
    args.diff = ctx.Input("model_diff").data<T>();
    double scale = scale_;
    if (ctx.HasInput("scale_by_tensor")) { scale *= ctx.Input("scale_by_tensor").data<float>()[0]; }
    args.scale = static_cast<T>(scale);
    args.l1 = l1_;
    args.l2 = l2_;
    args.weight_decay = weight_decay_;
    args.learning_rate = ctx.Input("learning_rate").data<float>()[0];
    args.step = ctx.HasInput("train_step") ? ctx.Input("train_step").data<int64_t>()[0] : -1;
    mask_ = ctx.HasInput("update_mask") ? ctx.Input("update_mask").data<T>() : nullptr;
    Update(ctx, args);
  }

 protected:
  virtual void Update(KernelContext& ctx, const UpdateArgs<T>& args) = 0;

  // Runs fn(i) for every element (with an update_mask: every element where it is not zero),
  // over the device's compute threads when it pays, in loops compiled per vector ISA
  // (cpu_dispatch.h). Each chunk works on its own copy of fn (which captures by value), so the
  // compiler sees that writes through the model pointer cannot change the hyper-parameters and
  // keeps them in registers.
  template <typename Fn>
  void ForEach(KernelContext& ctx, int64_t n, const Fn& fn) const {
    if (mask_ != nullptr) {
      const T* mask = mask_;
      ParallelForElements(ctx, n, kElementwiseGrain, [fn, mask](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          if (mask[i] != T(0)) { fn(i); }
        }
      });
      return;
    }
    ParallelForElements(ctx, n, kElementwiseGrain,
                        PerIsa([fn](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) { fn(i); }
                        }));
  }

 private:
  double scale_;
  T l1_, l2_, weight_decay_;
  const T* mask_ = nullptr;  // this call's update_mask, or nullptr
};

// Adam's hyper-parameters, shared by Adam, LazyAdam and LAMB.
template <typename T>
struct AdamHyperParameters {
  explicit AdamHyperParameters(const KernelInitContext& ctx)
      : beta1(ctx.Attr<double>("beta1")),
        beta2(ctx.Attr<double>("beta2")),
        epsilon(static_cast<T>(ctx.Attr<double>("epsilon"))) {}
  // lr * sqrt(1 - beta2^t) / (1 - beta1^t) at step t = train_step + 1.
  double BiasCorrected(double learning_rate, int64_t train_step) const {
    const double t = static_cast<double>(train_step + 1);
    return learning_rate * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t));
  }
  double beta1, beta2;
  T epsilon;
};

template <typename T>
class SgdUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  using ModelUpdateKernel<T>::ModelUpdateKernel;

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    const T lr = static_cast<T>(a.learning_rate);
    this->ForEach(ctx, a.n, [a, lr](int64_t i) ONEFLOW_PER_ISA_BODY {
      a.model[i] -= lr * (a.Gradient(i) + a.weight_decay * a.model[i]);
    });
  }
};

template <typename T>
class MomentumUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit MomentumUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx), beta_(static_cast<T>(ctx.Attr<double>("beta"))) {}

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* momentum = ctx.MutableInput("momentum").mut_data<T>();
    const T lr = static_cast<T>(a.learning_rate), beta = beta_;
    this->ForEach(ctx, a.n, [a, momentum, lr, beta](int64_t i) ONEFLOW_PER_ISA_BODY {
      const T w = a.model[i];
      momentum[i] = beta * momentum[i] - lr * a.Gradient(i);
      a.model[i] = w + momentum[i] - lr * a.weight_decay * w;
    });
  }
  T beta_;
};

// Adam, and LazyAdam (kLazy: always bias-corrected; elements with a zero gradient, and their
// moments, are left untouched).
template <typename T, bool kLazy>
class AdamFamilyUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit AdamFamilyUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx),
        hyper_(ctx),
        bias_correction_(kLazy || ctx.Attr<bool>("do_bias_correction")) {}

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* m = ctx.MutableInput("m").mut_data<T>();
    T* v = ctx.MutableInput("v").mut_data<T>();
    const T lr = static_cast<T>(bias_correction_ ? hyper_.BiasCorrected(a.learning_rate, a.step)
                                                 : a.learning_rate);
    const T epsilon = hyper_.epsilon;
    const T beta1 = static_cast<T>(hyper_.beta1), beta2 = static_cast<T>(hyper_.beta2);
    this->ForEach(ctx, a.n, [a, m, v, lr, epsilon, beta1, beta2](int64_t i) ONEFLOW_PER_ISA_BODY {
      const T g = a.Gradient(i);
      if (kLazy && std::abs(g) < T(1e-12)) { return; }
      m[i] = beta1 * m[i] + (T(1) - beta1) * g;
      v[i] = beta2 * v[i] + (T(1) - beta2) * g * g;
      a.model[i] -= lr * (m[i] / (std::sqrt(v[i]) + epsilon) + a.weight_decay * a.model[i]);
    });
  }
  AdamHyperParameters<T> hyper_;
  bool bias_correction_;
};

template <typename T>
using AdamUpdateKernel = AdamFamilyUpdateKernel<T, false>;
template <typename T>
using LazyAdamUpdateKernel = AdamFamilyUpdateKernel<T, true>;

template <typename T, bool kCentered>
class RmsPropUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit RmsPropUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx),
        decay_(static_cast<T>(ctx.Attr<double>("decay_rate"))),
        epsilon_(static_cast<T>(ctx.Attr<double>("epsilon"))) {}

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* mean_square = ctx.MutableInput("mean_square").mut_data<T>();
    T* mean_gradient = kCentered ? ctx.MutableInput("mean_gradient").mut_data<T>() : nullptr;
    const T lr = static_cast<T>(a.learning_rate), decay = decay_, epsilon = epsilon_;
    this->ForEach(ctx, a.n,
                  [a, mean_square, mean_gradient, lr, decay, epsilon](int64_t i)
                      ONEFLOW_PER_ISA_BODY {
                        const T g = a.Gradient(i);
                        mean_square[i] = decay * mean_square[i] + (T(1) - decay) * g * g;
                        T denominator = mean_square[i];
                        if (kCentered) {
                          mean_gradient[i] = decay * mean_gradient[i] + (T(1) - decay) * g;
                          denominator -= mean_gradient[i] * mean_gradient[i];
                        }
                        a.model[i] -= lr * g / std::sqrt(denominator + epsilon);
                      });
  }
  T decay_, epsilon_;
};

template <typename T>
using CenteredRmsPropUpdateKernel = RmsPropUpdateKernel<T, true>;
template <typename T>
using PlainRmsPropUpdateKernel = RmsPropUpdateKernel<T, false>;

template <typename T>
class AdagradUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit AdagradUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx),
        lr_decay_(ctx.Attr<double>("lr_decay")),
        initial_(static_cast<T>(ctx.Attr<double>("initial_accumulator_value"))),
        epsilon_(static_cast<T>(ctx.Attr<double>("epsilon"))) {}

 private:
  // The stored sum starts at zero; the initial accumulator value is added where it is read.
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* sum = ctx.MutableInput("sum").mut_data<T>();
    const T lr = static_cast<T>(a.learning_rate / (1.0 + static_cast<double>(a.step) * lr_decay_));
    const T initial = initial_, epsilon = epsilon_;
    this->ForEach(ctx, a.n, [a, sum, lr, initial, epsilon](int64_t i) ONEFLOW_PER_ISA_BODY {
      const T g = a.Gradient(i) + a.weight_decay * a.model[i];
      sum[i] += g * g;
      a.model[i] -= lr * g / (std::sqrt(sum[i] + initial) + epsilon);
    });
  }
  double lr_decay_;
  T initial_, epsilon_;
};

// Sum of squares in double (a float running sum loses precision on large variables).
template <typename T>
ONEFLOW_CPU_DISPATCH double SumOfSquares(const T* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) { sum += static_cast<double>(x[i]) * static_cast<double>(x[i]); }
  return sum;
}

template <typename T>
class LambUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit LambUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx), hyper_(ctx) {}

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* m = ctx.MutableInput("m").mut_data<T>();
    T* v = ctx.MutableInput("v").mut_data<T>();
    const double t = static_cast<double>(a.step + 1);
    const T correction1 = static_cast<T>(1.0 - std::pow(hyper_.beta1, t));
    const T correction2 = static_cast<T>(1.0 - std::pow(hyper_.beta2, t));
    const T beta1 = static_cast<T>(hyper_.beta1), beta2 = static_cast<T>(hyper_.beta2);
    const T epsilon = hyper_.epsilon;
    // The update direction, in the device's scratch buffer (free again after this act).
    T* u = static_cast<T*>(ctx.cpu_device().Scratch(a.n * static_cast<int64_t>(sizeof(T))));
    this->ForEach(ctx, a.n,
                  [a, m, v, u, beta1, beta2, epsilon, correction1, correction2](int64_t i)
                      ONEFLOW_PER_ISA_BODY {
                        const T g = a.Gradient(i);
                        m[i] = beta1 * m[i] + (T(1) - beta1) * g;
                        v[i] = beta2 * v[i] + (T(1) - beta2) * g * g;
                        u[i] = (m[i] / correction1) / std::sqrt(v[i] / correction2 + epsilon);
                      });
    const double model_norm = std::sqrt(SumOfSquares(a.model, a.n));
    const double direction_norm = std::sqrt(SumOfSquares(u, a.n));
    double trust_ratio = 1.0;
    if (model_norm > 0.0 && direction_norm > 0.0) { trust_ratio = model_norm / direction_norm; }
    const T lr = static_cast<T>(a.learning_rate * trust_ratio);
    this->ForEach(ctx, a.n, [a, u, lr](int64_t i) ONEFLOW_PER_ISA_BODY {
      a.model[i] -= lr * (u[i] + a.weight_decay * a.model[i]);
    });
  }
  AdamHyperParameters<T> hyper_;
};

template <typename T>
class LarsUpdateKernel final : public ModelUpdateKernel<T> {
 public:
  explicit LarsUpdateKernel(const KernelInitContext& ctx)
      : ModelUpdateKernel<T>(ctx),
        beta_(static_cast<T>(ctx.Attr<double>("momentum_beta"))),
        epsilon_(ctx.Attr<double>("epsilon")),
        coefficient_(ctx.Attr<double>("lars_coefficient")) {}

 private:
  void Update(KernelContext& ctx, const UpdateArgs<T>& a) override {
    T* momentum = ctx.MutableInput("momentum").mut_data<T>();
    T* g = static_cast<T*>(ctx.cpu_device().Scratch(a.n * static_cast<int64_t>(sizeof(T))));
    this->ForEach(ctx, a.n, [a, g](int64_t i) ONEFLOW_PER_ISA_BODY { g[i] = a.Gradient(i); });
    // OneFlow's trust ratio over the whole variable's norms; 1 where either norm is 0 (a zero
    // initialised gamma, an unused variable), which would otherwise be 0/0 with epsilon 0.
    const double model_norm = std::sqrt(SumOfSquares(a.model, a.n));
    const double gradient_norm = std::sqrt(SumOfSquares(g, a.n));
    double trust = 1.0;
    if (model_norm > 0 && gradient_norm > 0) {
      double denominator = epsilon_ + gradient_norm;
      if (a.step != 0) { denominator += static_cast<double>(a.weight_decay) * model_norm; }
      trust = coefficient_ * model_norm / denominator;
    }
    const T local_lr = static_cast<T>(a.learning_rate * trust);
    const T beta = beta_;
    this->ForEach(ctx, a.n, [a, g, momentum, local_lr, beta](int64_t i) ONEFLOW_PER_ISA_BODY {
      momentum[i] = beta * momentum[i] - local_lr * (g[i] + a.weight_decay * a.model[i]);
      a.model[i] += momentum[i];
    });
  }
  T beta_;
  double epsilon_, coefficient_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("sgd_update", SgdUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("momentum_update", MomentumUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("adam_update", AdamUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("lazy_adam_update", LazyAdamUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("rmsprop_update", PlainRmsPropUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("centered_rmsprop_update", CenteredRmsPropUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("adagrad_update", AdagradUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("lamb_update", LambUpdateKernel);
REGISTER_CPU_FLOATING_KERNELS("lars_update", LarsUpdateKernel);

}  // namespace oneflow

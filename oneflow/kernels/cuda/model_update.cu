// GPU sgd_update, momentum_update, adam_update, lazy_adam_update, rmsprop_update,
// centered_rmsprop_update, adagrad_update, lamb_update and lars_update (formulas in
// oneflow/ops/model_update.cpp, as the CPU kernels of cpu/model_update.cpp).
// The learning rate, train_step, scale_by_tensor and skip_if are blobs on the
// device: every thread reads them (no copy to the host, no synchronization); a
// skipped step returns before touching anything. Float16 models update in
// float.
//
// LAMB and LARS scale the update by norms over the whole variable; they run as three launches
// on the stream (NormScaledUpdateGpuKernel below), the sums of squares in double as on the CPU and
// in a fixed order (deterministic).

#include <cuda_fp16.h>

#include <algorithm>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

using dm = DeviceMath;

enum class Optimizer { kSgd, kMomentum, kAdam, kLazyAdam, kRmsProp, kCenteredRmsProp, kAdagrad };

__host__ __device__ constexpr bool IsAdam(Optimizer o) {
  return o == Optimizer::kAdam || o == Optimizer::kLazyAdam;
}
__host__ __device__ constexpr bool IsRmsProp(Optimizer o) {
  return o == Optimizer::kRmsProp || o == Optimizer::kCenteredRmsProp;
}

// What every update reads: the model, its gradient, the optional device inputs (null when
// absent) and the regularization attributes. Passed to the kernels by value.
template <typename T>
struct UpdateInputs {
  using C = ComputeType<T>;
  int64_t n = 0;
  T* model = nullptr;
  const T* diff = nullptr;
  T* state0 = nullptr;  // the optimizer's first state (momentum, m, mean_square, sum)
  T* state1 = nullptr;  // its second state (v, mean_gradient)
  const float* learning_rate = nullptr;
  const int64_t* train_step = nullptr;
  const float* scale_by_tensor = nullptr;
  const int64_t* skip_if = nullptr;
  const T* mask = nullptr;  // update_mask: elements where it is zero are left untouched
  double scale = 1.0;
  C l1 = 0, l2 = 0, weight_decay = 0;
};

template <typename T>
void ReadUpdateAttrs(const KernelInitContext& ctx, UpdateInputs<T>* a) {
  using C = ComputeType<T>;
  a->scale = ctx.Attr<double>("scale");
  a->l1 = static_cast<C>(ctx.Attr<double>("l1"));
  a->l2 = static_cast<C>(ctx.Attr<double>("l2"));
  a->weight_decay = static_cast<C>(ctx.Attr<double>("weight_decay"));
}

// The model, its gradient and the optional inputs of this call; false for an empty model.
template <typename T>
bool ReadUpdateInputs(KernelContext& ctx, UpdateInputs<T>* a) {
  a->n = ctx.Input("model").elem_count();
  if (a->n == 0) { return false; }
  a->model = ctx.MutableInput("model").mut_data<T>();
  a->diff = ctx.Input("model_diff").data<T>();
  a->learning_rate = ctx.Input("learning_rate").data<float>();
  if (ctx.HasInput("train_step")) { a->train_step = ctx.Input("train_step").data<int64_t>(); }
  if (ctx.HasInput("scale_by_tensor")) {
    a->scale_by_tensor = ctx.Input("scale_by_tensor").data<float>();
  }
  if (ctx.HasInput("skip_if")) { a->skip_if = ctx.Input("skip_if").data<int64_t>(); }
  if (ctx.HasInput("update_mask")) { a->mask = ctx.Input("update_mask").data<T>(); }
  return true;
}

// Everything one update needs. state0: momentum, Adam's m, RMSProp's mean_square or Adagrad's
// sum; state1: Adam's v or centred RMSProp's mean_gradient.
template <typename T>
struct UpdateArgs : UpdateInputs<T> {
  using C = ComputeType<T>;
  C beta = 0;  // momentum's beta, or Adam's beta1
  double beta1 = 0, beta2 = 0;
  C epsilon = 0;
  bool bias_correction = false;
  C decay = 0;          // RMSProp's decay_rate
  double lr_decay = 0;  // Adagrad's
  C initial = 0;        // Adagrad's initial_accumulator_value
};

template <Optimizer kOptimizer, typename T>
__global__ void UpdateKernel(UpdateArgs<T> a) {
  using C = ComputeType<T>;
  if (a.skip_if != nullptr && *a.skip_if != 0) { return; }
  double scale_value = a.scale;
  if (a.scale_by_tensor != nullptr) { scale_value *= static_cast<double>(*a.scale_by_tensor); }
  const C scale = static_cast<C>(scale_value);
  double learning_rate = static_cast<double>(*a.learning_rate);
  if (IsAdam(kOptimizer) && a.bias_correction) {
    // lr * sqrt(1 - beta2^t) / (1 - beta1^t) at t = train_step + 1 (train_step
    // -1 when absent).
    const double t = static_cast<double>((a.train_step != nullptr ? *a.train_step : -1) + 1);
    learning_rate *= sqrt(1.0 - pow(a.beta2, t)) / (1.0 - pow(a.beta1, t));
  }
  if (kOptimizer == Optimizer::kAdagrad) {
    const double step = static_cast<double>(a.train_step != nullptr ? *a.train_step : -1);
    learning_rate /= 1.0 + step * a.lr_decay;
  }
  const C lr = static_cast<C>(learning_rate);
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += stride) {
    if (a.mask != nullptr && Convert<C>(a.mask[i]) == C(0)) { continue; }
    const C w = Convert<C>(a.model[i]);
    const C g = scale * Convert<C>(a.diff[i]) + a.l1 * C((w > C(0)) - (w < C(0))) + a.l2 * w;
    if constexpr (kOptimizer == Optimizer::kSgd) {
      a.model[i] = Convert<T>(w - lr * (g + a.weight_decay * w));
    } else if constexpr (kOptimizer == Optimizer::kMomentum) {
      const C momentum = a.beta * Convert<C>(a.state0[i]) - lr * g;
      a.state0[i] = Convert<T>(momentum);
      a.model[i] = Convert<T>(w + momentum - lr * a.weight_decay * w);
    } else if constexpr (IsRmsProp(kOptimizer)) {
      const C mean_square = a.decay * Convert<C>(a.state0[i]) + (C(1) - a.decay) * g * g;
      a.state0[i] = Convert<T>(mean_square);
      C denominator = mean_square;
      if constexpr (kOptimizer == Optimizer::kCenteredRmsProp) {
        const C mean_gradient = a.decay * Convert<C>(a.state1[i]) + (C(1) - a.decay) * g;
        a.state1[i] = Convert<T>(mean_gradient);
        denominator -= mean_gradient * mean_gradient;
      }
      a.model[i] = Convert<T>(w - lr * g / dm::Sqrt(denominator + a.epsilon));
    } else if constexpr (kOptimizer == Optimizer::kAdagrad) {
      // The stored sum starts at zero; the initial accumulator value is added where it is read.
      const C decayed = g + a.weight_decay * w;
      const C sum = Convert<C>(a.state0[i]) + decayed * decayed;
      a.state0[i] = Convert<T>(sum);
      a.model[i] = Convert<T>(w - lr * decayed / (dm::Sqrt(sum + a.initial) + a.epsilon));
    } else {
      // Adam; LazyAdam leaves elements with a zero gradient, and their moments, untouched.
      if (kOptimizer == Optimizer::kLazyAdam && (g < C(0) ? -g : g) < C(1e-12)) { continue; }
      const C beta1 = static_cast<C>(a.beta1), beta2 = static_cast<C>(a.beta2);
      const C m = beta1 * Convert<C>(a.state0[i]) + (C(1) - beta1) * g;
      const C v = beta2 * Convert<C>(a.state1[i]) + (C(1) - beta2) * g * g;
      a.state0[i] = Convert<T>(m);
      a.state1[i] = Convert<T>(v);
      a.model[i] = Convert<T>(w - lr * (m / (dm::Sqrt(v) + a.epsilon) + a.weight_decay * w));
    }
  }
}

template <Optimizer kOptimizer, typename T>
class UpdateGpuKernel final : public Kernel {
 public:
  using C = ComputeType<T>;
  explicit UpdateGpuKernel(const KernelInitContext& ctx) {
    ReadUpdateAttrs(ctx, &args_);
    if constexpr (kOptimizer == Optimizer::kMomentum) {
      args_.beta = static_cast<C>(ctx.Attr<double>("beta"));
    }
    if constexpr (IsAdam(kOptimizer)) {
      args_.beta1 = ctx.Attr<double>("beta1");
      args_.beta2 = ctx.Attr<double>("beta2");
      args_.bias_correction =
          kOptimizer == Optimizer::kLazyAdam || ctx.Attr<bool>("do_bias_correction");
    }
    if constexpr (kOptimizer != Optimizer::kSgd && kOptimizer != Optimizer::kMomentum) {
      args_.epsilon = static_cast<C>(ctx.Attr<double>("epsilon"));
    }
    if constexpr (IsRmsProp(kOptimizer)) {
      args_.decay = static_cast<C>(ctx.Attr<double>("decay_rate"));
    }
    if constexpr (kOptimizer == Optimizer::kAdagrad) {
      args_.lr_decay = ctx.Attr<double>("lr_decay");
      args_.initial = static_cast<C>(ctx.Attr<double>("initial_accumulator_value"));
    }
  }

  void Forward(KernelContext& ctx) override {
    UpdateArgs<T> a = args_;
    if (!ReadUpdateInputs(ctx, &a)) { return; }
    if constexpr (kOptimizer == Optimizer::kMomentum) {
      a.state0 = ctx.MutableInput("momentum").mut_data<T>();
    }
    if constexpr (IsAdam(kOptimizer)) {
      a.state0 = ctx.MutableInput("m").mut_data<T>();
      a.state1 = ctx.MutableInput("v").mut_data<T>();
    }
    if constexpr (IsRmsProp(kOptimizer)) {
      a.state0 = ctx.MutableInput("mean_square").mut_data<T>();
    }
    if constexpr (kOptimizer == Optimizer::kCenteredRmsProp) {
      a.state1 = ctx.MutableInput("mean_gradient").mut_data<T>();
    }
    if constexpr (kOptimizer == Optimizer::kAdagrad) {
      a.state0 = ctx.MutableInput("sum").mut_data<T>();
    }
    UpdateKernel<kOptimizer, T>
        <<<BlockCount(a.n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(a);
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  UpdateArgs<T> args_;
};

template <typename T>
using SgdUpdateKernel = UpdateGpuKernel<Optimizer::kSgd, T>;
template <typename T>
using MomentumUpdateKernel = UpdateGpuKernel<Optimizer::kMomentum, T>;
template <typename T>
using AdamUpdateKernel = UpdateGpuKernel<Optimizer::kAdam, T>;
template <typename T>
using LazyAdamUpdateKernel = UpdateGpuKernel<Optimizer::kLazyAdam, T>;
template <typename T>
using RmsPropUpdateKernel = UpdateGpuKernel<Optimizer::kRmsProp, T>;
template <typename T>
using CenteredRmsPropUpdateKernel = UpdateGpuKernel<Optimizer::kCenteredRmsProp, T>;
template <typename T>
using AdagradUpdateKernel = UpdateGpuKernel<Optimizer::kAdagrad, T>;

// ---------------------------------------------------------------------------------------------
// lamb_update and lars_update. Three launches:
//   1. NormPartialsKernel: the elementwise part (LAMB: the new m and v) and, per block, the sums
//      of squares in double of the model (before the update) and of the direction the norms
//      are taken of (LAMB: u = (m / (1 - b1^t)) / sqrt(v / (1 - b2^t) + epsilon); LARS: the
//      gradient g);
//   2. NormFactorKernel: one block adds the per-block sums in block order and computes the
//      scalar the update is scaled by (LAMB: lr * trust ratio; LARS: local_lr);
//   3. NormScaledUpdateKernel: the update. The direction is recomputed from the values it was
//      computed from in launch 1 (LAMB: the stored m and v; LARS: the model and its diff, not
//      yet changed), so no variable-sized buffer is needed: the workspace holds the per-block
//      sums and the scalar only.

enum class NormOptimizer { kLamb, kLars };

constexpr int kMaxNormBlocks = 1024;

// state0: LAMB's m or LARS's momentum; state1: LAMB's v.
template <typename T>
struct NormUpdateArgs : UpdateInputs<T> {
  using C = ComputeType<T>;
  double beta1 = 0, beta2 = 0;  // LAMB
  C epsilon = 0;                // LAMB (added to v / (1 - b2^t) in the compute type)
  C momentum_beta = 0;          // LARS
  double lars_epsilon = 0;      // LARS (added to |g| in double)
  double lars_coefficient = 0;  // LARS
  double2* partial = nullptr;   // per block of launch 1: (sum model^2, sum direction^2)
  double* factor = nullptr;     // written by launch 2
};

template <typename T>
__device__ __forceinline__ bool Skipped(const NormUpdateArgs<T>& a) {
  return a.skip_if != nullptr && *a.skip_if != 0;
}

// train_step, or -1 without that input (as the CPU kernel).
template <typename T>
__device__ __forceinline__ int64_t TrainStep(const NormUpdateArgs<T>& a) {
  return a.train_step != nullptr ? *a.train_step : -1;
}

// scale (times scale_by_tensor) in double, then in the compute type, as the CPU's args.scale.
template <typename T>
__device__ __forceinline__ ComputeType<T> GradientScale(const NormUpdateArgs<T>& a) {
  double scale = a.scale;
  if (a.scale_by_tensor != nullptr) { scale *= static_cast<double>(*a.scale_by_tensor); }
  return static_cast<ComputeType<T>>(scale);
}

// g = scale * diff + l1 * sign(w) + l2 * w.
template <typename T>
__device__ __forceinline__ ComputeType<T> RegularizedGradient(const NormUpdateArgs<T>& a,
                                                              ComputeType<T> scale, int64_t i) {
  using C = ComputeType<T>;
  const C w = Convert<C>(a.model[i]);
  return scale * Convert<C>(a.diff[i]) + a.l1 * C((w > C(0)) - (w < C(0))) + a.l2 * w;
}

// LAMB's bias corrections 1 - b1^t and 1 - b2^t at t = train_step + 1, in double and then in
// the compute type, as the CPU kernel.
template <typename T>
struct LambCorrections {
  ComputeType<T> first, second;
};
template <typename T>
__device__ __forceinline__ LambCorrections<T> LambCorrectionsOf(const NormUpdateArgs<T>& a) {
  using C = ComputeType<T>;
  const double t = static_cast<double>(TrainStep(a) + 1);
  return {static_cast<C>(1.0 - pow(a.beta1, t)), static_cast<C>(1.0 - pow(a.beta2, t))};
}

// LAMB's direction from the stored (new) m and v.
template <typename T>
__device__ __forceinline__ ComputeType<T> LambDirection(const NormUpdateArgs<T>& a,
                                                        const LambCorrections<T>& corrections, T m,
                                                        T v) {
  using C = ComputeType<T>;
  return (Convert<C>(m) / corrections.first) /
         dm::Sqrt(Convert<C>(v) / corrections.second + a.epsilon);
}

struct SumPairs {
  __device__ double2 operator()(double2 a, double2 b) const {
    return make_double2(a.x + b.x, a.y + b.y);
  }
};

// Launch 1; gridDim.x <= kMaxNormBlocks, blockDim.x == kBlockSize.
template <NormOptimizer kOptimizer, typename T>
__global__ void NormPartialsKernel(NormUpdateArgs<T> a) {
  using C = ComputeType<T>;
  if (Skipped(a)) { return; }
  const C scale = GradientScale(a);
  double2 sums = make_double2(0.0, 0.0);
  if constexpr (kOptimizer == NormOptimizer::kLamb) {
    const LambCorrections<T> corrections = LambCorrectionsOf(a);
    const C beta1 = static_cast<C>(a.beta1), beta2 = static_cast<C>(a.beta2);
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
         i += stride) {
      const double w = Convert<double>(a.model[i]);
      const C g = RegularizedGradient(a, scale, i);
      const T m = Convert<T>(beta1 * Convert<C>(a.state0[i]) + (C(1) - beta1) * g);
      const T v = Convert<T>(beta2 * Convert<C>(a.state1[i]) + (C(1) - beta2) * g * g);
      a.state0[i] = m;
      a.state1[i] = v;
      const double u = static_cast<double>(LambDirection(a, corrections, m, v));
      sums.x += w * w;
      sums.y += u * u;
    }
  } else {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
         i += stride) {
      const double w = Convert<double>(a.model[i]);
      const double g = static_cast<double>(RegularizedGradient(a, scale, i));
      sums.x += w * w;
      sums.y += g * g;
    }
  }
  sums = BlockReduce(sums, SumPairs());
  if (threadIdx.x == 0) { a.partial[blockIdx.x] = sums; }
}

// Launch 2: one block of kBlockSize threads.
template <NormOptimizer kOptimizer, typename T>
__global__ void NormFactorKernel(NormUpdateArgs<T> a, int blocks) {
  if (Skipped(a)) { return; }
  double2 sums = make_double2(0.0, 0.0);
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) { sums = SumPairs()(sums, a.partial[b]); }
  sums = BlockReduce(sums, SumPairs());
  if (threadIdx.x != 0) { return; }
  const double learning_rate = static_cast<double>(*a.learning_rate);
  if constexpr (kOptimizer == NormOptimizer::kLamb) {
    // trust ratio |model| / |u|, 1 when either norm is zero.
    const double model_norm = sqrt(sums.x);
    const double direction_norm = sqrt(sums.y);
    double trust_ratio = 1.0;
    if (model_norm > 0.0 && direction_norm > 0.0) { trust_ratio = model_norm / direction_norm; }
    *a.factor = learning_rate * trust_ratio;
  } else {
    // local_lr = lr coeff |model| / (epsilon + |g| [+ wd |model| after step 0]); lr when
    // either norm is zero.
    const double model_norm = sqrt(sums.x);
    const double gradient_norm = sqrt(sums.y);
    double trust = 1.0;
    if (model_norm > 0.0 && gradient_norm > 0.0) {
      double denominator = a.lars_epsilon + gradient_norm;
      if (TrainStep(a) != 0) { denominator += static_cast<double>(a.weight_decay) * model_norm; }
      trust = a.lars_coefficient * model_norm / denominator;
    }
    *a.factor = learning_rate * trust;
  }
}

// Launch 3.
template <NormOptimizer kOptimizer, typename T>
__global__ void NormScaledUpdateKernel(NormUpdateArgs<T> a) {
  using C = ComputeType<T>;
  if (Skipped(a)) { return; }
  const C factor = static_cast<C>(*a.factor);
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  if constexpr (kOptimizer == NormOptimizer::kLamb) {
    const LambCorrections<T> corrections = LambCorrectionsOf(a);
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
         i += stride) {
      const C w = Convert<C>(a.model[i]);
      const C u = LambDirection(a, corrections, a.state0[i], a.state1[i]);
      a.model[i] = Convert<T>(w - factor * (u + a.weight_decay * w));
    }
  } else {
    const C scale = GradientScale(a);
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
         i += stride) {
      const C w = Convert<C>(a.model[i]);
      const C g = RegularizedGradient(a, scale, i);
      const T momentum =
          Convert<T>(a.momentum_beta * Convert<C>(a.state0[i]) - factor * (g + a.weight_decay * w));
      a.state0[i] = momentum;
      a.model[i] = Convert<T>(w + Convert<C>(momentum));
    }
  }
}

template <NormOptimizer kOptimizer, typename T>
class NormScaledUpdateGpuKernel final : public Kernel {
 public:
  using C = ComputeType<T>;
  explicit NormScaledUpdateGpuKernel(const KernelInitContext& ctx) {
    ReadUpdateAttrs(ctx, &args_);
    if constexpr (kOptimizer == NormOptimizer::kLamb) {
      args_.beta1 = ctx.Attr<double>("beta1");
      args_.beta2 = ctx.Attr<double>("beta2");
      args_.epsilon = static_cast<C>(ctx.Attr<double>("epsilon"));
    } else {
      args_.momentum_beta = static_cast<C>(ctx.Attr<double>("momentum_beta"));
      args_.lars_epsilon = ctx.Attr<double>("epsilon");
      args_.lars_coefficient = ctx.Attr<double>("lars_coefficient");
    }
  }

  void Forward(KernelContext& ctx) override {
    NormUpdateArgs<T> a = args_;
    if (!ReadUpdateInputs(ctx, &a)) { return; }
    if constexpr (kOptimizer == NormOptimizer::kLamb) {
      a.state0 = ctx.MutableInput("m").mut_data<T>();
      a.state1 = ctx.MutableInput("v").mut_data<T>();
    } else {
      a.state0 = ctx.MutableInput("momentum").mut_data<T>();
    }
    CudaDeviceContext& device = ctx.cuda_device();
    const int blocks = std::min(BlockCount(a.n), kMaxNormBlocks);
    // [blocks partial sums][the factor]; double2 first keeps both aligned.
    char* workspace = static_cast<char*>(
        device.Workspace(static_cast<int64_t>(blocks) * sizeof(double2) + sizeof(double)));
    a.partial = reinterpret_cast<double2*>(workspace);
    a.factor = reinterpret_cast<double*>(workspace + blocks * sizeof(double2));
    cudaStream_t stream = device.cuda_stream();
    NormPartialsKernel<kOptimizer, T><<<blocks, kBlockSize, 0, stream>>>(a);
    OF_CUDA_CHECK(cudaGetLastError());
    NormFactorKernel<kOptimizer, T><<<1, kBlockSize, 0, stream>>>(a, blocks);
    OF_CUDA_CHECK(cudaGetLastError());
    NormScaledUpdateKernel<kOptimizer, T><<<BlockCount(a.n), kBlockSize, 0, stream>>>(a);
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  NormUpdateArgs<T> args_;
};

template <typename T>
using LambUpdateKernel = NormScaledUpdateGpuKernel<NormOptimizer::kLamb, T>;
template <typename T>
using LarsUpdateKernel = NormScaledUpdateGpuKernel<NormOptimizer::kLars, T>;

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("sgd_update", SgdUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("momentum_update", MomentumUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("adam_update", AdamUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("lazy_adam_update", LazyAdamUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("rmsprop_update", RmsPropUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("centered_rmsprop_update", CenteredRmsPropUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("adagrad_update", AdagradUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("lamb_update", LambUpdateKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("lars_update", LarsUpdateKernel);

}  // namespace cuda
}  // namespace oneflow

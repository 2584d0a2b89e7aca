// GPU kernels of the batch-normalization ops (oneflow/ops/normalization.cpp), with the CPU
// kernels' formulas (cpu/normalization.cpp): batch_norm_mean, batch_norm_variance,
// normalization (given statistics), normalization_train (and the moving statistics update),
// normalization_train_grad_stats, normalization_train_grad and normalization_grad.
//
// x is viewed as (outer, channels, inner) around the channel axis. Per-channel sums: each
// channel's elements split among blocks (enough blocks for the GPU), accumulated in double for
// every dtype (as the CPU, so that float32 statistics of large batches stay within float32
// rounding); a second kernel adds each channel's partial sums in order (deterministic) and
// computes its results. Elementwise passes: out = a[c] x + b[c] (+ d[c] z), with the
// per-channel factors computed first by one thread per channel (in double, stored in the
// compute type as the CPU stores them in T) into the device's workspace. A float16 x (auto
// mixed precision) has float32 per-channel blobs (ChannelType), as the op's infer function says.

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t logical_count = 1;  // elements per channel of the logical blob: the divisor
  __host__ __device__ int64_t elem_count() const { return outer * channels * inner; }
  __device__ int64_t Channel(int64_t index) const { return (index / inner) % channels; }
};

ChannelLayout LayoutOf(const KernelInitContext& ctx, const std::string& argument) {
  const Shape& shape = ctx.Desc(argument).shape;
  int64_t axis = ctx.Attr<int64_t>("axis");
  if (axis < 0) { axis += shape.num_axes(); }
  ChannelLayout layout;
  layout.outer = shape.Count(0, axis);
  layout.channels = shape.At(axis);
  layout.inner = shape.Count(axis + 1, shape.num_axes());
  const Shape& logical = ctx.LogicalDesc(argument).shape;
  layout.logical_count = logical.At(axis) == 0 ? 0 : logical.elem_count() / logical.At(axis);
  return layout;
}

enum class Stats { kMean, kVariance, kGradStats, kGrad };

// The dtype of the per-channel blobs for an x of dtype T.
template <typename T>
struct ChannelTypeOf {
  using type = T;
};
template <>
struct ChannelTypeOf<half> {
  using type = float;
};
template <typename T>
using ChannelType = typename ChannelTypeOf<T>::type;

// Device pointers of one call; the ones a mode does not use are null.
template <typename T>
struct NormArgs {
  using C = ComputeType<T>;
  using P = ChannelType<T>;
  const T* x = nullptr;
  const T* dy = nullptr;
  const P* mean = nullptr;
  const P* variance = nullptr;
  const P* gamma = nullptr;
  const P* beta = nullptr;
  const P* sum_dy = nullptr;
  const P* sum_dy_xhat = nullptr;
  P* moving_mean = nullptr;
  P* moving_variance = nullptr;
  P* out0 = nullptr;  // mean, variance, sum_dy, or mean_diff
  P* out1 = nullptr;  // sum_dy_xhat, or variance_diff
  P* out2 = nullptr;  // gamma_diff
  P* out3 = nullptr;  // beta_diff
  C* a = nullptr;     // per-channel factors (workspace)
  C* b = nullptr;
  C* d = nullptr;
  double epsilon = 0, momentum = 0;
};

__device__ __forceinline__ double Sum(double a, double b) { return a + b; }

template <typename T>
__device__ __forceinline__ double ToDouble(T x) {
  return static_cast<double>(Convert<ComputeType<T>>(x));
}

// Per-channel sums of two per-element terms, in double, each channel's elements split among
// blocks (x: channel, y: split) so that a few channels of many elements (the first layers of a
// CNN: 64 channels of N x 112 x 112) still fill the GPU; each block writes its partial sums.
// Index: 32-bit where a channel's element count allows (cheaper divisions).
template <typename T, Stats kStats, typename Index>
__global__ void ChannelPartialSumsKernel(ChannelLayout layout, NormArgs<T> args, Index per_split,
                                         double* partial) {
  const int64_t c = blockIdx.x;
  const Index count = static_cast<Index>(layout.outer * layout.inner);
  const Index inner = static_cast<Index>(layout.inner);
  const Index begin = static_cast<Index>(blockIdx.y) * per_split;
  const Index end = count - begin < per_split ? count : begin + per_split;
  const double mean = kStats == Stats::kMean ? 0.0 : ToDouble(args.mean[c]);
  double s0 = 0.0, s1 = 0.0;
  for (Index k = begin + threadIdx.x; k < end; k += blockDim.x) {
    const Index o = k / inner;
    const int64_t index = (static_cast<int64_t>(o) * layout.channels + c) * layout.inner +
                          static_cast<int64_t>(k - o * inner);
    const double x = ToDouble(args.x[index]);
    if constexpr (kStats == Stats::kMean) {
      s0 += x;
    } else if constexpr (kStats == Stats::kVariance) {
      s0 += (x - mean) * (x - mean);
    } else {
      const double dy = ToDouble(args.dy[index]);
      s0 += dy;
      s1 += dy * (x - mean);
    }
  }
  s0 = BlockReduce(s0, Sum);
  s1 = BlockReduce(s1, Sum);
  if (threadIdx.x == 0) {
    double* sums = partial + 2 * (static_cast<int64_t>(blockIdx.y) * layout.channels + c);
    sums[0] = s0;
    sums[1] = s1;
  }
}

// One thread per channel: the splits' partial sums, added in split order, then the mode's
// per-channel outputs.
template <typename T, Stats kStats>
__global__ void ChannelStatsKernel(ChannelLayout layout, NormArgs<T> args, int64_t splits,
                                   const double* partial) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= layout.channels) { return; }
  double s0 = 0.0, s1 = 0.0;
  for (int64_t split = 0; split < splits; ++split) {
    s0 += partial[2 * (split * layout.channels + c)];
    s1 += partial[2 * (split * layout.channels + c) + 1];
  }
  const double divisor =
      layout.logical_count > 1 ? static_cast<double>(layout.logical_count) : 1.0;
  if constexpr (kStats == Stats::kMean || kStats == Stats::kVariance) {
    args.out0[c] = static_cast<ChannelType<T>>(s0 / divisor);
  } else {
    const double inv_std = 1.0 / sqrt(ToDouble(args.variance[c]) + args.epsilon);
    s1 *= inv_std;
    if constexpr (kStats == Stats::kGradStats) {
      args.out0[c] = static_cast<ChannelType<T>>(s0);
      args.out1[c] = static_cast<ChannelType<T>>(s1);
    } else {
      const double g = args.gamma ? ToDouble(args.gamma[c]) : 1.0;
      args.a[c] = static_cast<ComputeType<T>>(g * inv_std);
      args.out3[c] = static_cast<ChannelType<T>>(s0);                 // beta_diff
      args.out2[c] = static_cast<ChannelType<T>>(s1);                 // gamma_diff
      args.out0[c] = static_cast<ChannelType<T>>(-g * inv_std * s0);  // mean_diff
      args.out1[c] =
          static_cast<ChannelType<T>>(-0.5 * g * inv_std * inv_std * s1);  // variance_diff
    }
  }
}

// Per-channel factors of the forward pass (a, b; moving statistics update when training) or of
// the training backward pass (a, b, d), one thread per channel.
template <typename T, bool kBackward, bool kTraining>
__global__ void ChannelFactorsKernel(ChannelLayout layout, NormArgs<T> args) {
  using C = ComputeType<T>;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= layout.channels) { return; }
  const double mean = ToDouble(args.mean[c]);
  const double variance = ToDouble(args.variance[c]);
  const double gamma = args.gamma ? ToDouble(args.gamma[c]) : 1.0;
  const double inv_std = 1.0 / sqrt(variance + args.epsilon);
  if constexpr (!kBackward) {
    const double scale = gamma * inv_std;
    args.a[c] = static_cast<C>(scale);
    args.b[c] = static_cast<C>((args.beta ? ToDouble(args.beta[c]) : 0.0) - mean * scale);
    if (kTraining && args.moving_mean != nullptr) {
      const int64_t count = layout.logical_count;
      const double unbias =
          count > 1 ? static_cast<double>(count) / static_cast<double>(count - 1) : 1.0;
      const double moving_mean = ToDouble(args.moving_mean[c]);
      const double moving_variance = ToDouble(args.moving_variance[c]);
      using P = ChannelType<T>;
      const double keep = args.momentum, take = 1.0 - args.momentum;
      args.moving_mean[c] = static_cast<P>(keep * moving_mean + take * mean);
      args.moving_variance[c] = static_cast<P>(keep * moving_variance + take * variance * unbias);
    }
  } else {
    const double m = layout.logical_count > 1 ? static_cast<double>(layout.logical_count) : 1.0;
    const double k = gamma * inv_std;
    const double sum_dy = ToDouble(args.sum_dy[c]);
    const double sum_dy_xhat = ToDouble(args.sum_dy_xhat[c]);
    const double x_factor = -k * inv_std * sum_dy_xhat / m;
    args.a[c] = static_cast<C>(k);
    args.d[c] = static_cast<C>(x_factor);
    args.b[c] = static_cast<C>(-k * sum_dy / m - x_factor * mean);
  }
}

// out[i] = a[c] in[i] + b[c] (+ d[c] z[i]); b may be null (0).
template <typename T>
__global__ void ChannelAffineKernel(ChannelLayout layout, const T* in, const T* z,
                                    const ComputeType<T>* a, const ComputeType<T>* b,
                                    const ComputeType<T>* d, T* out) {
  using C = ComputeType<T>;
  const int64_t n = layout.elem_count();
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t c = layout.Channel(i);
    C value = a[c] * Convert<C>(in[i]) + (b ? b[c] : C(0));
    if (z != nullptr) { value += d[c] * Convert<C>(z[i]); }
    out[i] = Convert<T>(value);
  }
}

template <typename T>
const T* OptionalData(KernelContext& ctx, const char* argument) {
  return ctx.HasInput(argument) ? ctx.Input(argument).data<T>() : nullptr;
}

// How a channel's elements are split among the blocks of ChannelPartialSumsKernel: enough
// blocks for the GPU, each with at least kMinPerSplit elements.
struct StatsSplit {
  int64_t splits = 1;
  int64_t per_split = 0;  // elements of a channel per block
};
constexpr int64_t kStatsBlocksWanted = 1024;
constexpr int64_t kMinPerSplit = 4096;

StatsSplit SplitStats(const ChannelLayout& layout) {
  const int64_t count = layout.outer * layout.inner;
  const int64_t channels = std::max<int64_t>(1, layout.channels);
  int64_t splits = (kStatsBlocksWanted + channels - 1) / channels;
  splits = std::min({splits, std::max<int64_t>(1, count / kMinPerSplit), int64_t{65535}});
  StatsSplit split;
  split.per_split = (count + splits - 1) / splits;
  split.splits = split.per_split == 0 ? 1 : (count + split.per_split - 1) / split.per_split;
  return split;
}

// The device workspace of one call, one allocation (a second Workspace call could move the
// first): the per-channel factors a, b, d (when `factors`), then the partial sums of the
// channel statistics (when `stats`), whose address it returns.
template <typename T>
double* AllocateWorkspace(KernelContext& ctx, const ChannelLayout& layout, bool factors,
                          bool stats, NormArgs<T>* args) {
  using C = ComputeType<T>;
  const int64_t factor_bytes =
      factors ? (3 * layout.channels * static_cast<int64_t>(sizeof(C)) + 15) / 16 * 16 : 0;
  const int64_t stats_bytes =
      stats ? 2 * SplitStats(layout).splits * layout.channels * static_cast<int64_t>(sizeof(double))
            : 0;
  char* base = static_cast<char*>(ctx.cuda_device().Workspace(factor_bytes + stats_bytes));
  if (factors) {
    args->a = reinterpret_cast<C*>(base);
    args->b = args->a + layout.channels;
    args->d = args->a + 2 * layout.channels;
  }
  return stats ? reinterpret_cast<double*>(base + factor_bytes) : nullptr;
}

template <typename T, Stats kStats>
void LaunchStats(KernelContext& ctx, const ChannelLayout& layout, const NormArgs<T>& args,
                 double* partial) {
  const StatsSplit split = SplitStats(layout);
  cudaStream_t stream = ctx.cuda_device().cuda_stream();
  const dim3 blocks(static_cast<unsigned>(layout.channels), static_cast<unsigned>(split.splits));
  const int threads = RowBlockSize(split.per_split);
  if (layout.outer * layout.inner + kBlockSize < (int64_t{1} << 32)) {
    ChannelPartialSumsKernel<T, kStats, uint32_t><<<blocks, threads, 0, stream>>>(
        layout, args, static_cast<uint32_t>(split.per_split), partial);
  } else {
    ChannelPartialSumsKernel<T, kStats, uint64_t><<<blocks, threads, 0, stream>>>(
        layout, args, static_cast<uint64_t>(split.per_split), partial);
  }
  OF_CUDA_CHECK(cudaGetLastError());
  ChannelStatsKernel<T, kStats><<<BlockCount(layout.channels), kBlockSize, 0, stream>>>(
      layout, args, split.splits, partial);
  OF_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void LaunchAffine(KernelContext& ctx, const ChannelLayout& layout, const T* in, const T* z,
                  const NormArgs<T>& args, bool with_b, T* out) {
  const int64_t n = layout.elem_count();
  if (n == 0) { return; }
  ChannelAffineKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
      layout, in, z, args.a, with_b ? args.b : nullptr, args.d, out);
  OF_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
class BatchNormMeanKernel final : public Kernel {
 public:
  explicit BatchNormMeanKernel(const KernelInitContext& ctx) : layout_(LayoutOf(ctx, "x")) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.x = ctx.Input("x").data<T>();
    args.out0 = ctx.Output("mean").mut_data<ChannelType<T>>();
    LaunchStats<T, Stats::kMean>(ctx, layout_, args,
                                 AllocateWorkspace(ctx, layout_, false, true, &args));
  }

 private:
  ChannelLayout layout_;
};

template <typename T>
class BatchNormVarianceKernel final : public Kernel {
 public:
  explicit BatchNormVarianceKernel(const KernelInitContext& ctx) : layout_(LayoutOf(ctx, "x")) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.x = ctx.Input("x").data<T>();
    args.mean = ctx.Input("mean").data<ChannelType<T>>();
    args.out0 = ctx.Output("variance").mut_data<ChannelType<T>>();
    LaunchStats<T, Stats::kVariance>(ctx, layout_, args,
                                     AllocateWorkspace(ctx, layout_, false, true, &args));
  }

 private:
  ChannelLayout layout_;
};

// y = a x + b with a = gamma / sqrt(variance + epsilon), b = beta - mean a; the training variant
// also updates the moving statistics in place.
template <typename T, bool kTraining>
class NormalizationGpuKernel final : public Kernel {
 public:
  explicit NormalizationGpuKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx, "x")),
        epsilon_(ctx.Attr<double>("epsilon")),
        momentum_(kTraining ? ctx.Attr<double>("momentum") : 0.0) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.mean = ctx.Input("mean").data<ChannelType<T>>();
    args.variance = ctx.Input("variance").data<ChannelType<T>>();
    args.gamma = OptionalData<ChannelType<T>>(ctx, "gamma");
    args.beta = OptionalData<ChannelType<T>>(ctx, "beta");
    if (kTraining && ctx.HasInput("moving_mean")) {
      args.moving_mean = ctx.MutableInput("moving_mean").mut_data<ChannelType<T>>();
      args.moving_variance = ctx.MutableInput("moving_variance").mut_data<ChannelType<T>>();
    }
    args.epsilon = epsilon_;
    args.momentum = momentum_;
    AllocateWorkspace(ctx, layout_, true, false, &args);
    ChannelFactorsKernel<T, false, kTraining>
        <<<BlockCount(layout_.channels), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(layout_,
                                                                                           args);
    OF_CUDA_CHECK(cudaGetLastError());
    LaunchAffine<T>(ctx, layout_, ctx.Input("x").data<T>(), nullptr, args, true,
                    ctx.Output("y").mut_data<T>());
  }

 private:
  ChannelLayout layout_;
  double epsilon_, momentum_;
};

template <typename T>
class NormalizationTrainGradStatsKernel final : public Kernel {
 public:
  explicit NormalizationTrainGradStatsKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx, "x")), epsilon_(ctx.Attr<double>("epsilon")) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.x = ctx.Input("x").data<T>();
    args.dy = ctx.Input("dy").data<T>();
    args.mean = ctx.Input("mean").data<ChannelType<T>>();
    args.variance = ctx.Input("variance").data<ChannelType<T>>();
    args.out0 = ctx.Output("sum_dy").mut_data<ChannelType<T>>();
    args.out1 = ctx.Output("sum_dy_xhat").mut_data<ChannelType<T>>();
    args.epsilon = epsilon_;
    LaunchStats<T, Stats::kGradStats>(ctx, layout_, args,
                                      AllocateWorkspace(ctx, layout_, false, true, &args));
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
};

// dx = k (dy - sum_dy / m - xhat sum_dy_xhat / m), k = gamma inv_std, as a dy + d x + b.
template <typename T>
class NormalizationTrainGradKernel final : public Kernel {
 public:
  explicit NormalizationTrainGradKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx, "x")), epsilon_(ctx.Attr<double>("epsilon")) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.mean = ctx.Input("mean").data<ChannelType<T>>();
    args.variance = ctx.Input("variance").data<ChannelType<T>>();
    args.gamma = OptionalData<ChannelType<T>>(ctx, "gamma");
    args.sum_dy = ctx.Input("sum_dy").data<ChannelType<T>>();
    args.sum_dy_xhat = ctx.Input("sum_dy_xhat").data<ChannelType<T>>();
    args.epsilon = epsilon_;
    AllocateWorkspace(ctx, layout_, true, false, &args);
    ChannelFactorsKernel<T, true, false>
        <<<BlockCount(layout_.channels), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(layout_,
                                                                                           args);
    OF_CUDA_CHECK(cudaGetLastError());
    LaunchAffine<T>(ctx, layout_, ctx.Input("dy").data<T>(), ctx.Input("x").data<T>(), args, true,
                    ctx.Output("dx").mut_data<T>());
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
};

// The gradient with given statistics: dx = gamma inv_std dy, and the per-channel gradients.
template <typename T>
class NormalizationGradKernel final : public Kernel {
 public:
  explicit NormalizationGradKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx, "x")), epsilon_(ctx.Attr<double>("epsilon")) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.channels == 0) { return; }
    NormArgs<T> args;
    args.x = ctx.Input("x").data<T>();
    args.dy = ctx.Input("dy").data<T>();
    args.mean = ctx.Input("mean").data<ChannelType<T>>();
    args.variance = ctx.Input("variance").data<ChannelType<T>>();
    args.gamma = OptionalData<ChannelType<T>>(ctx, "gamma");
    args.out0 = ctx.Output("mean_diff").mut_data<ChannelType<T>>();
    args.out1 = ctx.Output("variance_diff").mut_data<ChannelType<T>>();
    args.out2 = ctx.Output("gamma_diff").mut_data<ChannelType<T>>();
    args.out3 = ctx.Output("beta_diff").mut_data<ChannelType<T>>();
    args.epsilon = epsilon_;
    double* partial = AllocateWorkspace(ctx, layout_, true, true, &args);
    LaunchStats<T, Stats::kGrad>(ctx, layout_, args, partial);
    LaunchAffine<T>(ctx, layout_, args.dy, nullptr, args, false, ctx.Output("dx").mut_data<T>());
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
};

template <typename T>
using NormalizationInferenceKernel = NormalizationGpuKernel<T, false>;
template <typename T>
using NormalizationTrainKernel = NormalizationGpuKernel<T, true>;

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("batch_norm_mean", BatchNormMeanKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("batch_norm_variance", BatchNormVarianceKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("normalization", NormalizationInferenceKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("normalization_train", NormalizationTrainKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("normalization_grad", NormalizationGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("normalization_train_grad_stats",
                                 NormalizationTrainGradStatsKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("normalization_train_grad", NormalizationTrainGradKernel);

}  // namespace cuda
}  // namespace oneflow

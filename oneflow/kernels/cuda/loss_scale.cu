// GPU broadcast_like and the gradient clipping and loss scaling ops, as the CPU kernels
// (cpu/broadcast_like.cpp, cpu/gradient_clipping.cpp, cpu/loss_scale.cpp).
//
// broadcast_like is the broadcast launcher with a functor that returns its first operand (x
// moved as bytes). square_sum, multi_square_sum and count_not_finite sum to one number in two
// passes (a double or int64 partial per block, then one block adds the partials in order:
// deterministic). The
// scalar ops (global_norm_clip_factor, loss_scale_inverse, dynamic_loss_scale_schedule) are
// one-thread kernels, and tensors that the CPU reads on the host (scale_by_tensor, loss_scale)
// are read on the device: no synchronization.

#include <cuda_fp16.h>

#include <algorithm>
#include <cfloat>
#include <vector>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/broadcast.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

#define OF_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// ---------------------------------------------------------------------------------------------
// broadcast_like

struct FirstOperand {
  template <typename E>
  __device__ E operator()(E x, E) const {
    return x;
  }
};

// E: an unsigned integer of the element's size.
template <typename E>
class BroadcastLikeGpuKernel final : public Kernel {
 public:
  explicit BroadcastLikeGpuKernel(const KernelInitContext& ctx) {
    const Shape& like = ctx.Desc("like").shape;
    std::vector<int64_t> axes = Int64ListAttr(ctx.conf(), "broadcast_axes");
    if (!axes.empty()) { axes = NormalizeReduceAxes("broadcast_like", axes, like.num_axes()); }
    const Shape aligned =
        BroadcastLikeInputShape("broadcast_like", ctx.Desc("x").shape, like, axes);
    plan_ = BroadcastBinaryPlan(like, aligned, aligned);
  }
  void Forward(KernelContext& ctx) override {
    const E* x = static_cast<const E*>(ctx.Input("x").raw());
    LaunchBroadcastBinary<E>(ctx.cuda_device().cuda_stream(), plan_, FirstOperand(),
                             static_cast<E*>(ctx.Output("y").mut_raw()), x, x);
  }

 private:
  BroadcastBinaryPlan plan_;
};

// ---------------------------------------------------------------------------------------------
// Sums to one number: square_sum, count_not_finite

constexpr int kMaxPartialBlocks = 1024;

struct SumOp {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};

template <typename T>
struct SquareAsDouble {
  __device__ double operator()(T x) const {
    const double value = Convert<double>(x);
    return value * value;
  }
};

template <typename T>
struct NotFinite {
  __device__ int64_t operator()(T x) const { return isfinite(Convert<double>(x)) ? 0 : 1; }
};

template <typename Acc, typename T, typename Map>
__global__ void PartialSumKernel(int64_t n, Map map, const T* x, Acc* partial) {
  Acc sum = 0;
  OF_GRID_STRIDE_LOOP(i, n) { sum += map(x[i]); }
  sum = BlockReduce(sum, SumOp());
  if (threadIdx.x == 0) { partial[blockIdx.x] = sum; }
}

template <typename Acc, typename Out>
__global__ void FinalSumKernel(int blocks, const Acc* partial, Out* out) {
  Acc sum = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) { sum += partial[b]; }
  sum = BlockReduce(sum, SumOp());
  if (threadIdx.x == 0) { out[0] = static_cast<Out>(sum); }
}

// out[0] = Out(sum of map(x[i])), with `workspace` for the partials.
template <typename Acc, typename Out, typename T, typename Map>
void LaunchSumToScalar(CudaDeviceContext& device, int64_t n, Map map, const T* x, Out* out) {
  cudaStream_t stream = device.cuda_stream();
  const int blocks = std::min(BlockCount(n), kMaxPartialBlocks);
  Acc* partial = static_cast<Acc*>(device.Workspace(blocks * sizeof(Acc)));
  PartialSumKernel<Acc><<<blocks, kBlockSize, 0, stream>>>(n, map, x, partial);
  OF_CUDA_CHECK(cudaGetLastError());
  FinalSumKernel<<<1, kBlockSize, 0, stream>>>(blocks, static_cast<const Acc*>(partial), out);
  OF_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
class SquareSumGpuKernel final : public Kernel {
 public:
  explicit SquareSumGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    LaunchSumToScalar<double>(ctx.cuda_device(), ctx.Input("x").elem_count(), SquareAsDouble<T>(),
                              ctx.Input("x").data<T>(), ctx.Output("out").mut_data<float>());
  }
};

template <typename T>
class CountNotFiniteGpuKernel final : public Kernel {
 public:
  explicit CountNotFiniteGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    LaunchSumToScalar<int64_t>(ctx.cuda_device(), ctx.Input("x").elem_count(), NotFinite<T>(),
                               ctx.Input("x").data<T>(), ctx.Output("out").mut_data<int64_t>());
  }
};

// multi_square_sum: y[0] = the sum of the squares of every x[i], one partial pass per input
// into its own stretch of the workspace, then one final pass over all of them (in order).
template <typename T>
class MultiSquareSumGpuKernel final : public Kernel {
 public:
  explicit MultiSquareSumGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    CudaDeviceContext& device = ctx.cuda_device();
    const int64_t inputs = ctx.InputCount("x");
    std::vector<int> blocks(inputs);
    int total = 0;
    for (int64_t index = 0; index < inputs; ++index) {
      blocks[index] = std::min(BlockCount(ctx.Input("x", index).elem_count()), kMaxPartialBlocks);
      total += blocks[index];
    }
    double* partial = static_cast<double*>(device.Workspace(total * sizeof(double)));
    int offset = 0;
    for (int64_t index = 0; index < inputs; ++index) {
      const Blob& x = ctx.Input("x", index);
      PartialSumKernel<double><<<blocks[index], kBlockSize, 0, device.cuda_stream()>>>(
          x.elem_count(), SquareAsDouble<T>(), x.data<T>(), partial + offset);
      OF_CUDA_CHECK(cudaGetLastError());
      offset += blocks[index];
    }
    FinalSumKernel<<<1, kBlockSize, 0, device.cuda_stream()>>>(
        total, static_cast<const double*>(partial), ctx.Output("y").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }
};

// ---------------------------------------------------------------------------------------------
// Scalar ops

__global__ void GlobalNormClipFactorKernel(double clip_norm, const float* square_sum, float* out) {
  const double norm = sqrt(static_cast<double>(square_sum[0]));
  out[0] = static_cast<float>(clip_norm / fmax(norm, clip_norm));
}

class GlobalNormClipFactorGpuKernel final : public Kernel {
 public:
  explicit GlobalNormClipFactorGpuKernel(const KernelInitContext& ctx)
      : clip_norm_(ctx.Attr<double>("clip_norm")) {}
  void Forward(KernelContext& ctx) override {
    GlobalNormClipFactorKernel<<<1, 1, 0, ctx.cuda_device().cuda_stream()>>>(
        clip_norm_, ctx.Input("square_sum").data<float>(), ctx.Output("out").mut_data<float>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  double clip_norm_;
};

__global__ void LossScaleInverseKernel(const float* loss_scale, float* out) {
  out[0] = 1.0f / loss_scale[0];
}

class LossScaleInverseGpuKernel final : public Kernel {
 public:
  explicit LossScaleInverseGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    LossScaleInverseKernel<<<1, 1, 0, ctx.cuda_device().cuda_stream()>>>(
        ctx.Input("loss_scale").data<float>(), ctx.Output("out").mut_data<float>());
    OF_CUDA_CHECK(cudaGetLastError());
  }
};

template <typename T>
__global__ void LossScaleSeedKernel(int64_t n, const float* loss_scale, T* out) {
  OF_GRID_STRIDE_LOOP(i, n) { out[i] = Convert<T>(loss_scale[0]); }
}

template <typename T>
class LossScaleSeedGpuKernel final : public Kernel {
 public:
  explicit LossScaleSeedGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const int64_t n = ctx.Output("out").elem_count();
    if (n == 0) { return; }
    LossScaleSeedKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, ctx.Input("loss_scale").data<float>(), ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }
};

__global__ void DynamicLossScaleScheduleKernel(int64_t increment_period, double multiplier,
                                               const int64_t* count_not_finite, float* scale,
                                               int64_t* good_steps) {
  if (count_not_finite[0] > 0) {
    *scale = static_cast<float>(fmax(*scale / multiplier, 1.0));
    *good_steps = 0;
    return;
  }
  *good_steps += 1;
  if (*good_steps >= increment_period) {
    const double grown = static_cast<double>(*scale) * multiplier;
    *scale = static_cast<float>(fmin(grown, static_cast<double>(FLT_MAX)));
    *good_steps = 0;
  }
}

class DynamicLossScaleScheduleGpuKernel final : public Kernel {
 public:
  explicit DynamicLossScaleScheduleGpuKernel(const KernelInitContext& ctx)
      : increment_period_(ctx.Attr<int64_t>("increment_period")),
        multiplier_(ctx.Attr<double>("multiplier")) {}
  void Forward(KernelContext& ctx) override {
    DynamicLossScaleScheduleKernel<<<1, 1, 0, ctx.cuda_device().cuda_stream()>>>(
        increment_period_, multiplier_, ctx.Input("count_not_finite").data<int64_t>(),
        ctx.MutableInput("loss_scale").mut_data<float>(),
        ctx.MutableInput("good_step_counter").mut_data<int64_t>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t increment_period_;
  double multiplier_;
};

// out = s diff + l1 sign(model) + l2 model, s = scale (times scale_by_tensor[0] when given).
template <typename T>
struct ScaleRegularizeFunctor {
  double scale;
  const float* scale_by_tensor;  // nullable
  T l1, l2;
  __device__ T operator()(T diff, T w) const {
    const T s = static_cast<T>(scale_by_tensor == nullptr ? scale : scale * scale_by_tensor[0]);
    return s * diff + l1 * static_cast<T>((w > T(0)) - (w < T(0))) + l2 * w;
  }
};

template <typename T>
class ScaleRegularizeGradientGpuKernel final : public Kernel {
 public:
  explicit ScaleRegularizeGradientGpuKernel(const KernelInitContext& ctx)
      : scale_(ctx.Attr<double>("scale")),
        l1_(static_cast<T>(ctx.Attr<double>("l1"))),
        l2_(static_cast<T>(ctx.Attr<double>("l2"))) {}
  void Forward(KernelContext& ctx) override {
    const float* scale_by_tensor =
        ctx.HasInput("scale_by_tensor") ? ctx.Input("scale_by_tensor").data<float>() : nullptr;
    LaunchElementwise<T>(ctx.cuda_device().cuda_stream(), ctx.Input("diff").elem_count(),
                         ScaleRegularizeFunctor<T>{scale_, scale_by_tensor, l1_, l2_},
                         ctx.Output("out").mut_data<T>(), ctx.Input("diff").data<T>(),
                         ctx.Input("model").data<T>());
  }

 private:
  double scale_;
  T l1_, l2_;
};

}  // namespace

REGISTER_KERNEL("broadcast_like", "gpu", kFloat, BroadcastLikeGpuKernel<uint32_t>);
REGISTER_KERNEL("broadcast_like", "gpu", kDouble, BroadcastLikeGpuKernel<uint64_t>);
REGISTER_KERNEL("broadcast_like", "gpu", kFloat16, BroadcastLikeGpuKernel<uint16_t>);
REGISTER_KERNEL("broadcast_like", "gpu", kInt32, BroadcastLikeGpuKernel<uint32_t>);
REGISTER_KERNEL("broadcast_like", "gpu", kInt64, BroadcastLikeGpuKernel<uint64_t>);
OF_REGISTER_GPU_FLOATING_KERNELS("square_sum", SquareSumGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("count_not_finite", CountNotFiniteGpuKernel);
REGISTER_KERNEL("multi_square_sum", "gpu", kFloat, MultiSquareSumGpuKernel<float>);
REGISTER_KERNEL("multi_square_sum", "gpu", kDouble, MultiSquareSumGpuKernel<double>);
REGISTER_KERNEL("global_norm_clip_factor", "gpu", kFloat, GlobalNormClipFactorGpuKernel);
REGISTER_KERNEL("loss_scale_inverse", "gpu", kFloat, LossScaleInverseGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("loss_scale_seed", LossScaleSeedGpuKernel);
REGISTER_KERNEL("dynamic_loss_scale_schedule", "gpu", kFloat, DynamicLossScaleScheduleGpuKernel);
REGISTER_KERNEL("scale_regularize_gradient", "gpu", kFloat,
                ScaleRegularizeGradientGpuKernel<float>);
REGISTER_KERNEL("scale_regularize_gradient", "gpu", kDouble,
                ScaleRegularizeGradientGpuKernel<double>);

}  // namespace cuda
}  // namespace oneflow

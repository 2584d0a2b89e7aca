// GPU upsample and upsample_grad (ops/upsample.cpp), as the CPU kernels (cpu/upsample.cpp).
//
// Both interpolations are separable maps of the two spatial axes. Each axis's map is evaluated
// on the device with the CPU's arithmetic (ResampleAxis::Taps): "nearest" reads
// min(floor(o * float(1 / scale)), in - 1); "bilinear" computes
// source = max(0, (o + 0.5) * A(1 / scale) - 0.5) in A (the element type; float for float16),
// each operation rounded on its own (no fused multiply-add, as the CPU code), then reads
// low = min(floor(source), in - 1) with weight 1 - lambda and high = low + 1 (low at the last
// index, which then has weight 1) with weight lambda = source - low. So the taps and weights
// are the CPU kernel's.
//
// upsample: one thread per y element mixes its 1-4 x elements (rows first, then columns).
// upsample_grad: one thread per dx element gathers dy over the outputs that read it. Along each
// axis low(o) and high(o) never decrease with o, so the outputs that read input index i form
// the range [first o with high(o) >= i, first o with low(o) > i), found by binary search once per
// input index into the workspace (GradientRangesKernel). Every dx element is written once by one
// thread: no atomics, deterministic. The sums run in the CPU kernel's order (over the output
// rows, then over the output columns). An input index no output reads (with "nearest", the last
// ones when scale * in is just above an integer) gets a zero gradient.
//
// Layout: channels_first x (N, C, H, W) is N * C planes of H x W; channels_last (N, H, W, C) is
// N planes of H x W x C. Indices are int64.

#include <cuda_fp16.h>

#include <cstdint>
#include <string>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

// Arithmetic rounded per operation: nvcc would otherwise fuse (o + 0.5) * inverse - 0.5 into a
// multiply-add, which rounds once and can move a source index across an integer.
__device__ __forceinline__ float AddRounded(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double AddRounded(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float SubRounded(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double SubRounded(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float MulRounded(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRounded(double a, double b) { return __dmul_rn(a, b); }

// One spatial axis of the forward map, from `in` input indices to `out` output indices.
// A: the arithmetic type (float or double).
template <typename A>
struct ResampleAxis {
  int64_t in = 0, out = 0;
  bool bilinear = false;
  float nearest_inverse = 0.0f;  // float(1 / scale), as the CPU's nearest map
  A inverse = 0;                 // A(1 / scale), as the CPU's bilinear map

  // The input indices output o reads: low and high (high == low: one tap of weight 1), and
  // lambda, the weight of high (low's is 1 - lambda) when there are two.
  __device__ void Taps(int64_t o, int64_t* low, int64_t* high, A* lambda) const {
    if (!bilinear) {
      const int64_t i =
          static_cast<int64_t>(floorf(MulRounded(static_cast<float>(o), nearest_inverse)));
      *low = i < in - 1 ? i : in - 1;
      *high = *low;
      *lambda = A(0);
      return;
    }
    A source = SubRounded(MulRounded(AddRounded(static_cast<A>(o), A(0.5)), inverse), A(0.5));
    source = A(0) < source ? source : A(0);  // std::max(A(0), source)
    const int64_t truncated = static_cast<int64_t>(source);
    *low = truncated < in - 1 ? truncated : in - 1;
    *high = *low < in - 1 ? *low + 1 : *low;
    *lambda = SubRounded(source, static_cast<A>(*low));
  }

  // The weight of input index i in output o (o reads i).
  __device__ A WeightOf(int64_t o, int64_t i) const {
    int64_t low = 0, high = 0;
    A lambda = 0;
    Taps(o, &low, &high, &lambda);
    if (low == high) { return A(1); }
    return i == low ? A(1) - lambda : lambda;
  }

  // The first output in [0, out) whose taps reach index i or beyond (high >= i) when `past` is
  // false, or lie wholly beyond it (low > i) when true; out when none.
  __device__ int64_t FirstOutput(int64_t i, bool past) const {
    int64_t begin = 0, end = out;
    while (begin < end) {
      const int64_t middle = begin + (end - begin) / 2;
      int64_t low = 0, high = 0;
      A lambda = 0;
      Taps(middle, &low, &high, &lambda);
      if (past ? low > i : high >= i) {
        end = middle;
      } else {
        begin = middle + 1;
      }
    }
    return begin;
  }
};

// The resampling of one kernel: rows (height) and columns (width) map the small blob (x, dx)
// to the large one (y, dy); both are planes (channels_first: N * C, channels_last: N) of
// height x width x `inner` elements.
template <typename A>
struct Resample {
  ResampleAxis<A> rows, columns;
  int64_t inner = 1;  // channels_last: C; channels_first: 1

  __device__ int64_t SmallOffset(int64_t plane, int64_t i, int64_t j, int64_t c) const {
    return ((plane * rows.in + i) * columns.in + j) * inner + c;
  }
  __device__ int64_t LargeOffset(int64_t plane, int64_t a, int64_t b, int64_t c) const {
    return ((plane * rows.out + a) * columns.out + b) * inner + c;
  }
};

template <typename T>
__global__ void UpsampleForwardKernel(Resample<ComputeType<T>> r, int64_t count, const T* x, T* y) {
  using A = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    int64_t rest = index;
    const int64_t c = rest % r.inner;
    rest /= r.inner;
    const int64_t b = rest % r.columns.out;
    rest /= r.columns.out;
    const int64_t a = rest % r.rows.out;
    const int64_t plane = rest / r.rows.out;
    int64_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;
    A row_lambda = 0, column_lambda = 0;
    r.rows.Taps(a, &i0, &i1, &row_lambda);
    r.columns.Taps(b, &j0, &j1, &column_lambda);
    // The rows mixed at column j (a row with one tap is read as is).
    auto mixed = [&](int64_t j) -> A {
      const A top = Convert<A>(x[r.SmallOffset(plane, i0, j, c)]);
      if (i0 == i1) { return top; }
      return (A(1) - row_lambda) * top + row_lambda * Convert<A>(x[r.SmallOffset(plane, i1, j, c)]);
    };
    A value = mixed(j0);
    if (j0 != j1) { value = (A(1) - column_lambda) * value + column_lambda * mixed(j1); }
    y[index] = Convert<T>(value);
  }
}

// ranges: [rows' first outputs][rows' end outputs][columns' first][columns' end], one entry per
// input index of the axis.
template <typename A>
__global__ void GradientRangesKernel(ResampleAxis<A> rows, ResampleAxis<A> columns,
                                     int64_t* ranges) {
  const int64_t count = rows.in + columns.in;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += stride) {
    const bool is_row = t < rows.in;
    const ResampleAxis<A>& axis = is_row ? rows : columns;
    const int64_t i = is_row ? t : t - rows.in;
    int64_t* first = is_row ? ranges : ranges + 2 * rows.in;
    first[i] = axis.FirstOutput(i, false);
    first[axis.in + i] = axis.FirstOutput(i, true);
  }
}

template <typename T>
__global__ void UpsampleGradKernel(Resample<ComputeType<T>> r, int64_t count, const int64_t* ranges,
                                   const T* dy, T* dx) {
  using A = ComputeType<T>;
  const int64_t* row_first = ranges;
  const int64_t* row_end = ranges + r.rows.in;
  const int64_t* column_first = ranges + 2 * r.rows.in;
  const int64_t* column_end = column_first + r.columns.in;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    int64_t rest = index;
    const int64_t c = rest % r.inner;
    rest /= r.inner;
    const int64_t j = rest % r.columns.in;
    rest /= r.columns.in;
    const int64_t i = rest % r.rows.in;
    const int64_t plane = rest / r.rows.in;
    const int64_t a_begin = row_first[i], a_end = row_end[i];
    A sum = 0;
    for (int64_t b = column_first[j]; b < column_end[j]; ++b) {
      A mixed = 0;
      for (int64_t a = a_begin; a < a_end; ++a) {
        mixed += r.rows.WeightOf(a, i) * Convert<A>(dy[r.LargeOffset(plane, a, b, c)]);
      }
      sum += r.columns.WeightOf(b, j) * mixed;
    }
    dx[index] = Convert<T>(sum);
  }
}

// The resampling from the attributes and the physical shapes: `small` is x's (dx's), `large`
// y's (dy's).
template <typename A>
Resample<A> MakeResample(const KernelInitContext& ctx, const Shape& small, const Shape& large) {
  const bool channels_first = ctx.Attr<std::string>("data_format") == "channels_first";
  const bool bilinear = ctx.Attr<std::string>("interpolation") == "bilinear";
  const int64_t h_axis = channels_first ? 2 : 1;
  Resample<A> r;
  ResampleAxis<A>* axes[2] = {&r.rows, &r.columns};
  const char* scales[2] = {"height_scale", "width_scale"};
  for (int k = 0; k < 2; ++k) {
    const double scale = ctx.Attr<double>(scales[k]);
    axes[k]->in = small.At(h_axis + k);
    axes[k]->out = large.At(h_axis + k);
    axes[k]->bilinear = bilinear;
    axes[k]->nearest_inverse = static_cast<float>(1.0 / scale);
    axes[k]->inverse = static_cast<A>(1.0 / scale);
  }
  r.inner = channels_first ? 1 : small.At(3);
  return r;
}

template <typename T>
class UpsampleGpuKernel final : public Kernel {
 public:
  explicit UpsampleGpuKernel(const KernelInitContext& ctx)
      : resample_(MakeResample<ComputeType<T>>(ctx, ctx.Desc("x").shape, ctx.Desc("y").shape)),
        count_(ctx.Desc("y").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    if (count_ == 0) { return; }
    UpsampleForwardKernel<T>
        <<<BlockCount(count_), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
            resample_, count_, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  Resample<ComputeType<T>> resample_;
  int64_t count_;
};

template <typename T>
class UpsampleGradGpuKernel final : public Kernel {
 public:
  explicit UpsampleGradGpuKernel(const KernelInitContext& ctx)
      : resample_(MakeResample<ComputeType<T>>(ctx, ctx.Desc("dx").shape, ctx.Desc("dy").shape)),
        count_(ctx.Desc("dx").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    if (count_ == 0) { return; }
    CudaDeviceContext& device = ctx.cuda_device();
    cudaStream_t stream = device.cuda_stream();
    const int64_t axis_entries = resample_.rows.in + resample_.columns.in;
    int64_t* ranges = static_cast<int64_t*>(
        device.Workspace(2 * axis_entries * static_cast<int64_t>(sizeof(int64_t))));
    GradientRangesKernel<<<BlockCount(axis_entries), kBlockSize, 0, stream>>>(
        resample_.rows, resample_.columns, ranges);
    OF_CUDA_CHECK(cudaGetLastError());
    UpsampleGradKernel<T><<<BlockCount(count_), kBlockSize, 0, stream>>>(
        resample_, count_, static_cast<const int64_t*>(ranges), ctx.Input("dy").data<T>(),
        ctx.Output("dx").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  Resample<ComputeType<T>> resample_;
  int64_t count_;
};

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("upsample", UpsampleGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("upsample_grad", UpsampleGradGpuKernel);

}  // namespace cuda
}  // namespace oneflow

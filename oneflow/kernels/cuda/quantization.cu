// GPU quantization kernels, as the CPU ones (cpu/quantization.cpp; formulas in
// ops/quantization.cpp), float32 and float64.
//
// The observers find each channel's minimum and maximum in two passes: a grid of (channel,
// part) blocks writes one (min, max) pair per block, then one block per channel merges its
// parts and its thread 0 chooses the scale and zero point (the moving-average observer also
// updates its moving values there, reading current_train_step on the device: no host sync).
// fake_quantization is one thread per element, reading its channel's parameters. The formulas
// are the CPU's (kernels/quantization_formulas.h).

#include <cfloat>
#include <cmath>
#include <string>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/quantization_formulas.h"

namespace oneflow {
namespace cuda {

namespace {

struct MinOp {
  __device__ double operator()(double a, double b) const { return fmin(a, b); }
};
struct MaxOp {
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

constexpr int kMaxPartsPerRow = 256;

// Block (row, part): min and max of its part of row `row` (rows of `inner` elements).
template <typename T>
__global__ void PartialMinMaxKernel(int64_t inner, const T* x, double* low, double* high) {
  const int64_t row = blockIdx.x;
  const int parts = gridDim.y;
  double min_value = DBL_MAX, max_value = -DBL_MAX;
  const T* in = x + row * inner;
  for (int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x; i < inner;
       i += static_cast<int64_t>(blockDim.x) * parts) {
    const double value = static_cast<double>(in[i]);
    min_value = fmin(min_value, value);
    max_value = fmax(max_value, value);
  }
  min_value = BlockReduce(min_value, MinOp());
  max_value = BlockReduce(max_value, MaxOp());
  if (threadIdx.x == 0) {
    low[row * parts + blockIdx.y] = min_value;
    high[row * parts + blockIdx.y] = max_value;
  }
}

// Merges the parts of row blockIdx.x into (low, high) for thread 0 (others get garbage).
__device__ void MergeParts(int parts, const double* low, const double* high, double* row_low,
                           double* row_high) {
  const int64_t row = blockIdx.x;
  double min_value = DBL_MAX, max_value = -DBL_MAX;
  for (int p = threadIdx.x; p < parts; p += blockDim.x) {
    min_value = fmin(min_value, low[row * parts + p]);
    max_value = fmax(max_value, high[row * parts + p]);
  }
  *row_low = BlockReduce(min_value, MinOp());
  *row_high = BlockReduce(max_value, MaxOp());
}

template <typename T>
__global__ void ObserverParametersKernel(QuantizationScheme q, int parts, const double* low,
                                         const double* high, T* scale, T* zero_point) {
  double row_low = 0, row_high = 0;
  MergeParts(parts, low, high, &row_low, &row_high);
  if (threadIdx.x != 0) { return; }
  ChooseQuantizationParameters(q, row_low, ObservedHigh(q, row_low, row_high), scale + blockIdx.x,
                               zero_point + blockIdx.x);
}

struct MovingAverageArgs {
  QuantizationScheme q;
  bool training;
  int64_t stop_update_after_iters;
  double momentum;
};

template <typename T>
__global__ void MovingAverageParametersKernel(MovingAverageArgs a, int parts, const double* low,
                                              const double* high, const int64_t* step,
                                              T* moving_max, T* moving_min, T* scale,
                                              T* zero_point) {
  double batch_low = 0, batch_high = 0;
  MergeParts(parts, low, high, &batch_low, &batch_high);
  if (threadIdx.x != 0) { return; }
  if (a.training && step[0] <= a.stop_update_after_iters) {
    UpdateMovingRange(a.q, a.momentum, batch_low, batch_high, moving_max, moving_min);
  }
  ChooseQuantizationParameters(a.q, double(*moving_min), double(*moving_max), scale, zero_point);
}

// Per-block (min, max) partials of `rows` rows of `inner` elements in the device workspace;
// returns the parts per row.
template <typename T>
int LaunchPartialMinMax(CudaDeviceContext& device, int64_t rows, int64_t inner, const T* x,
                        double** low, double** high) {
  const int parts = std::max(1, std::min<int>(kMaxPartsPerRow, BlockCount(inner)));
  const int64_t bytes = 2 * rows * parts * static_cast<int64_t>(sizeof(double));
  double* workspace = static_cast<double*>(device.Workspace(bytes));
  *low = workspace;
  *high = workspace + rows * parts;
  PartialMinMaxKernel<T><<<dim3(static_cast<unsigned>(rows), parts), kBlockSize, 0,
                           device.cuda_stream()>>>(inner, x, *low, *high);
  OF_CUDA_CHECK(cudaGetLastError());
  return parts;
}

template <typename T>
class MinMaxObserverGpuKernel final : public Kernel {
 public:
  explicit MinMaxObserverGpuKernel(const KernelInitContext& ctx)
      : q_(QuantizationScheme::Of(ctx)) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const int64_t channels = ctx.Output("scale").elem_count();
    const int64_t inner = in.elem_count() / channels;
    double *low = nullptr, *high = nullptr;
    const int parts =
        LaunchPartialMinMax(ctx.cuda_device(), channels, inner, in.data<T>(), &low, &high);
    ObserverParametersKernel<T><<<static_cast<unsigned>(channels), kBlockSize, 0,
                                  ctx.cuda_device().cuda_stream()>>>(
        q_, parts, low, high, ctx.Output("scale").mut_data<T>(),
        ctx.Output("zero_point").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  QuantizationScheme q_;
};

template <typename T>
class MovingAverageMinMaxObserverGpuKernel final : public Kernel {
 public:
  explicit MovingAverageMinMaxObserverGpuKernel(const KernelInitContext& ctx)
      : args_{QuantizationScheme::Of(ctx), ctx.Attr<bool>("training"),
              ctx.Attr<int64_t>("stop_update_after_iters"), ctx.Attr<double>("momentum")} {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    double *low = nullptr, *high = nullptr;
    const int parts =
        LaunchPartialMinMax(ctx.cuda_device(), 1, in.elem_count(), in.data<T>(), &low, &high);
    MovingAverageParametersKernel<T><<<1, kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        args_, parts, low, high, ctx.Input("current_train_step").data<int64_t>(),
        ctx.MutableInput("moving_max").mut_data<T>(), ctx.MutableInput("moving_min").mut_data<T>(),
        ctx.Output("scale").mut_data<T>(), ctx.Output("zero_point").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  MovingAverageArgs args_;
};

template <typename T>
__global__ void FakeQuantizationKernel(int64_t n, int64_t inner, QuantizationScheme q,
                                       const T* x, const T* scales, const T* zero_points, T* y) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t c = i / inner;
    const FakeQuantizer<T> quantize(q, scales[c], zero_points[c]);
    y[i] = quantize.PassesThrough() ? x[i] : quantize(x[i]);
  }
}

template <typename T>
class FakeQuantizationGpuKernel final : public Kernel {
 public:
  explicit FakeQuantizationGpuKernel(const KernelInitContext& ctx)
      : q_(QuantizationScheme::Of(ctx)) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const int64_t n = in.elem_count();
    if (n == 0) { return; }
    const int64_t inner = n / ctx.Input("scale").elem_count();
    FakeQuantizationKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, inner, q_, in.data<T>(), ctx.Input("scale").data<T>(),
        ctx.Input("zero_point").data<T>(), ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  QuantizationScheme q_;
};

}  // namespace

REGISTER_KERNEL("min_max_observer", "gpu", kFloat, MinMaxObserverGpuKernel<float>);
REGISTER_KERNEL("min_max_observer", "gpu", kDouble, MinMaxObserverGpuKernel<double>);
REGISTER_KERNEL("moving_average_min_max_observer", "gpu", kFloat,
                MovingAverageMinMaxObserverGpuKernel<float>);
REGISTER_KERNEL("moving_average_min_max_observer", "gpu", kDouble,
                MovingAverageMinMaxObserverGpuKernel<double>);
REGISTER_KERNEL("fake_quantization", "gpu", kFloat, FakeQuantizationGpuKernel<float>);
REGISTER_KERNEL("fake_quantization", "gpu", kDouble, FakeQuantizationGpuKernel<double>);

}  // namespace cuda
}  // namespace oneflow

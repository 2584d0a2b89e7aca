// GPU layer_norm, layer_norm_grad and layer_norm_param_grad, as the CPU kernels
// (cpu/layer_norm.cpp, ops/layer_norm.cpp): float16 computes in float.
//
// layer_norm and layer_norm_grad run one block per row; row sums accumulate in double as on the
// CPU (the mean, then the sum of squares centred on the mean rounded to the compute type).
// gamma and beta apply by flat index modulo their size. layer_norm_param_grad gives each
// parameter a thread that walks the elements using it (coalesced across threads), split into
// chunks whose double partial sums a second kernel adds in a fixed order: deterministic, no
// atomics.

#include <cuda_fp16.h>

#include <algorithm>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

struct RowLayout {
  int64_t rows = 1, row_size = 1, param_size = 1;
};

RowLayout MakeRowLayout(const KernelInitContext& ctx) {
  const Shape& shape = ctx.Desc("x").shape;
  const int64_t num_axes = shape.num_axes();
  int64_t norm = ctx.Attr<int64_t>("begin_norm_axis");
  int64_t params = ctx.Attr<int64_t>("begin_params_axis");
  if (norm < 0) { norm += num_axes; }
  if (params < 0) { params += num_axes; }
  RowLayout layout;
  for (int64_t a = 0; a < norm; ++a) { layout.rows *= shape.At(a); }
  for (int64_t a = norm; a < num_axes; ++a) { layout.row_size *= shape.At(a); }
  for (int64_t a = params; a < num_axes; ++a) { layout.param_size *= shape.At(a); }
  return layout;
}

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// Blocks for a one-block-per-row kernel (the kernels loop over the rest).
int RowGridSize(int64_t rows) { return static_cast<int>(std::min<int64_t>(rows, 1 << 20)); }

template <typename T>
__global__ void LayerNormKernel(RowLayout layout, double epsilon, const T* x, const T* gamma,
                                const T* beta, T* y, T* mean_out, T* inv_out) {
  using C = ComputeType<T>;
  const int64_t n = layout.row_size;
  for (int64_t r = blockIdx.x; r < layout.rows; r += gridDim.x) {
    const T* xr = x + r * n;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) { sum += Convert<C>(xr[i]); }
    const double mean = BlockReduce(sum, SumOp()) / static_cast<double>(n);
    const C m = static_cast<C>(mean);
    double square_sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C d = Convert<C>(xr[i]) - m;
      square_sum += d * d;
    }
    const double variance = BlockReduce(square_sum, SumOp()) / static_cast<double>(n);
    const double inv = 1.0 / sqrt(variance + epsilon);
    if (threadIdx.x == 0) {
      mean_out[r] = Convert<T>(mean);
      inv_out[r] = Convert<T>(inv);
    }
    const C s = static_cast<C>(inv);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const int64_t p = (r * n + i) % layout.param_size;
      C value = (Convert<C>(xr[i]) - m) * s;
      if (gamma != nullptr) { value *= Convert<C>(gamma[p]); }
      if (beta != nullptr) { value += Convert<C>(beta[p]); }
      y[r * n + i] = Convert<T>(value);
    }
  }
}

// dx = inv (g - mean(g) - xhat mean(g xhat)), g = dy gamma, xhat = (x - mean) inv.
template <typename T>
__global__ void LayerNormGradKernel(RowLayout layout, const T* x, const T* dy, const T* mean,
                                    const T* inv_variance, const T* gamma, T* dx) {
  using C = ComputeType<T>;
  const int64_t n = layout.row_size;
  for (int64_t r = blockIdx.x; r < layout.rows; r += gridDim.x) {
    const C m = Convert<C>(mean[r]);
    const C s = Convert<C>(inv_variance[r]);
    double sum_g = 0, sum_gx = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      C g = Convert<C>(dy[r * n + i]);
      if (gamma != nullptr) { g *= Convert<C>(gamma[(r * n + i) % layout.param_size]); }
      sum_g += g;
      sum_gx += g * (Convert<C>(x[r * n + i]) - m);
    }
    sum_g = BlockReduce(sum_g, SumOp());
    sum_gx = BlockReduce(sum_gx, SumOp());
    const C mean_g = static_cast<C>(sum_g / static_cast<double>(n));
    const C mean_gx = static_cast<C>(sum_gx * static_cast<double>(s) / static_cast<double>(n));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      C g = Convert<C>(dy[r * n + i]);
      if (gamma != nullptr) { g *= Convert<C>(gamma[(r * n + i) % layout.param_size]); }
      dx[r * n + i] = Convert<T>(s * (g - mean_g - (Convert<C>(x[r * n + i]) - m) * s * mean_gx));
    }
  }
}

// partial[chunk][0][p] = sum dy xhat, partial[chunk][1][p] = sum dy over chunk `chunk` of the
// elements p, p + param_size, ...
template <typename T>
__global__ void LayerNormParamPartialKernel(RowLayout layout, int64_t per_chunk, const T* x,
                                            const T* dy, const T* mean, const T* inv_variance,
                                            double* partial) {
  using C = ComputeType<T>;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t param_size = layout.param_size;
  if (p >= param_size) { return; }
  const int64_t total = layout.rows * layout.row_size;
  double gamma_sum = 0, beta_sum = 0;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * per_chunk;
  for (int64_t k = first; k < first + per_chunk; ++k) {
    const int64_t e = p + k * param_size;
    if (e >= total) { break; }
    const int64_t r = e / layout.row_size;
    const C d = Convert<C>(dy[e]);
    gamma_sum += d * ((Convert<C>(x[e]) - Convert<C>(mean[r])) * Convert<C>(inv_variance[r]));
    beta_sum += d;
  }
  double* out = partial + static_cast<int64_t>(blockIdx.y) * 2 * param_size;
  out[p] = gamma_sum;
  out[param_size + p] = beta_sum;
}

template <typename T>
__global__ void LayerNormParamSumKernel(int64_t param_size, int64_t chunks, const double* partial,
                                        T* gamma_diff, T* beta_diff) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < param_size;
       p += stride) {
    double gamma_sum = 0, beta_sum = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      gamma_sum += partial[chunk * 2 * param_size + p];
      beta_sum += partial[chunk * 2 * param_size + param_size + p];
    }
    gamma_diff[p] = Convert<T>(gamma_sum);
    beta_diff[p] = Convert<T>(beta_sum);
  }
}

template <typename T>
const T* OptionalInput(KernelContext& ctx, const std::string& name) {
  return ctx.HasInput(name) ? ctx.Input(name).data<T>() : nullptr;
}

template <typename T>
class LayerNormGpuKernel final : public Kernel {
 public:
  explicit LayerNormGpuKernel(const KernelInitContext& ctx)
      : layout_(MakeRowLayout(ctx)), epsilon_(ctx.Attr<double>("epsilon")) {}

  void Forward(KernelContext& ctx) override {
    if (layout_.rows == 0 || layout_.row_size == 0) { return; }
    LayerNormKernel<T><<<RowGridSize(layout_.rows), RowBlockSize(layout_.row_size), 0,
                         ctx.cuda_device().cuda_stream()>>>(
        layout_, epsilon_, ctx.Input("x").data<T>(), OptionalInput<T>(ctx, "gamma"),
        OptionalInput<T>(ctx, "beta"), ctx.Output("y").mut_data<T>(),
        ctx.Output("mean").mut_data<T>(), ctx.Output("inv_variance").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  RowLayout layout_;
  double epsilon_;
};

template <typename T>
class LayerNormGradGpuKernel final : public Kernel {
 public:
  explicit LayerNormGradGpuKernel(const KernelInitContext& ctx) : layout_(MakeRowLayout(ctx)) {}

  void Forward(KernelContext& ctx) override {
    if (layout_.rows == 0 || layout_.row_size == 0) { return; }
    LayerNormGradKernel<T><<<RowGridSize(layout_.rows), RowBlockSize(layout_.row_size), 0,
                             ctx.cuda_device().cuda_stream()>>>(
        layout_, ctx.Input("x").data<T>(), ctx.Input("dy").data<T>(), ctx.Input("mean").data<T>(),
        ctx.Input("inv_variance").data<T>(), OptionalInput<T>(ctx, "gamma"),
        ctx.Output("dx").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  RowLayout layout_;
};

template <typename T>
class LayerNormParamGradGpuKernel final : public Kernel {
 public:
  explicit LayerNormParamGradGpuKernel(const KernelInitContext& ctx)
      : layout_(MakeRowLayout(ctx)) {}

  void Forward(KernelContext& ctx) override {
    const int64_t param_size = layout_.param_size;
    if (param_size == 0) { return; }
    const int64_t total = layout_.rows * layout_.row_size;
    const int64_t per_param = (total + param_size - 1) / param_size;
    // About 64K threads in all, at most 1024 chunks.
    const int64_t chunks =
        std::max<int64_t>(1, std::min<int64_t>({per_param, 1024, (int64_t{1} << 16) / param_size}));
    const int64_t per_chunk = (per_param + chunks - 1) / chunks;
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    auto* partial =
        static_cast<double*>(ctx.cuda_device().Workspace(chunks * 2 * param_size * sizeof(double)));
    const dim3 grid(static_cast<unsigned>((param_size + kBlockSize - 1) / kBlockSize),
                    static_cast<unsigned>(chunks));
    LayerNormParamPartialKernel<T><<<grid, kBlockSize, 0, stream>>>(
        layout_, per_chunk, ctx.Input("x").data<T>(), ctx.Input("dy").data<T>(),
        ctx.Input("mean").data<T>(), ctx.Input("inv_variance").data<T>(), partial);
    OF_CUDA_CHECK(cudaGetLastError());
    LayerNormParamSumKernel<T><<<BlockCount(param_size), kBlockSize, 0, stream>>>(
        param_size, chunks, partial, ctx.Output("gamma_diff").mut_data<T>(),
        ctx.Output("beta_diff").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  RowLayout layout_;
};

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("layer_norm", LayerNormGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("layer_norm_grad", LayerNormGradGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("layer_norm_param_grad", LayerNormParamGradGpuKernel);

}  // namespace cuda
}  // namespace oneflow

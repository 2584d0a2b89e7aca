// CPU kernels of layer_norm, layer_norm_grad and layer_norm_param_grad
// (oneflow/ops/layer_norm.cpp). Rows are split over the compute threads; a row's statistics are
// two passes over it while it is in cache (mean, then the centred sum of squares, both
// accumulated in double from SIMD float blocks). gamma and beta apply by flat index modulo their
// size, walked in contiguous chunks so that the inner loops vectorize. The row loops run per
// vector ISA (cpu_dispatch.h); the helpers below are forced inline into those clones.

#include <algorithm>
#include <cmath>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

constexpr int64_t kSumBlock = 1024;

struct RowLayout {
  int64_t rows = 1, row_size = 1, param_size = 1;
  explicit RowLayout(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("x").shape;
    const int64_t num_axes = shape.num_axes();
    int64_t norm = ctx.Attr<int64_t>("begin_norm_axis");
    int64_t params = ctx.Attr<int64_t>("begin_params_axis");
    if (norm < 0) { norm += num_axes; }
    if (params < 0) { params += num_axes; }
    for (int64_t a = 0; a < norm; ++a) { rows *= shape.At(a); }
    for (int64_t a = norm; a < num_axes; ++a) { row_size *= shape.At(a); }
    for (int64_t a = params; a < num_axes; ++a) { param_size *= shape.At(a); }
  }
};

// Calls fn(begin, length, param_offset) over contiguous pieces of the row starting at flat
// index row_start, each piece mapping to consecutive parameters.
template <typename Fn>
ONEFLOW_PER_ISA_BODY inline void ForParamChunks(int64_t row_start, int64_t row_size,
                                                int64_t param_size, Fn fn) {
  int64_t i = 0;
  while (i < row_size) {
    const int64_t offset = (row_start + i) % param_size;
    const int64_t length = std::min(row_size - i, param_size - offset);
    fn(i, length, offset);
    i += length;
  }
}

template <typename T>
ONEFLOW_PER_ISA_BODY inline double RowSum(const T* __restrict__ x, int64_t n) {
  double acc = 0;
  for (int64_t block = 0; block < n; block += kSumBlock) {
    const int64_t last = std::min(n, block + kSumBlock);
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = block; i < last; ++i) { s += x[i]; }
    acc += s;
  }
  return acc;
}

template <typename T>
ONEFLOW_PER_ISA_BODY inline double RowCenteredSquareSum(const T* __restrict__ x, int64_t n,
                                                        T mean) {
  double acc = 0;
  for (int64_t block = 0; block < n; block += kSumBlock) {
    const int64_t last = std::min(n, block + kSumBlock);
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = block; i < last; ++i) { s += (x[i] - mean) * (x[i] - mean); }
    acc += s;
  }
  return acc;
}

template <typename T>
class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const KernelInitContext& ctx)
      : layout_(ctx), epsilon_(ctx.Attr<double>("epsilon")) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* gamma = ctx.HasInput("gamma") ? ctx.Input("gamma").data<T>() : nullptr;
    const T* beta = ctx.HasInput("beta") ? ctx.Input("beta").data<T>() : nullptr;
    T* y = ctx.Output("y").mut_data<T>();
    T* mean_out = ctx.Output("mean").mut_data<T>();
    T* inv_out = ctx.Output("inv_variance").mut_data<T>();
    const RowLayout layout = layout_;
    const double epsilon = epsilon_;
    if (layout.row_size == 0) { return; }
    ParallelForRows(
        ctx, layout.rows, layout.row_size,
        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = layout.row_size;
            const T* __restrict__ xr = x + r * n;
            T* __restrict__ yr = y + r * n;
            const double mean = RowSum(xr, n) / double(n);
            const double variance = RowCenteredSquareSum(xr, n, static_cast<T>(mean)) / double(n);
            const double inv = 1.0 / std::sqrt(variance + epsilon);
            mean_out[r] = static_cast<T>(mean);
            inv_out[r] = static_cast<T>(inv);
            const T m = static_cast<T>(mean), s = static_cast<T>(inv);
            if (gamma == nullptr && beta == nullptr) {
              for (int64_t i = 0; i < n; ++i) { yr[i] = (xr[i] - m) * s; }
              continue;
            }
            ForParamChunks(r * n, n, layout.param_size,
                           [&](int64_t i0, int64_t len, int64_t p0) ONEFLOW_PER_ISA_BODY {
                             const T* __restrict__ xc = xr + i0;
                             T* __restrict__ yc = yr + i0;
                             if (gamma != nullptr && beta != nullptr) {
                               const T* __restrict__ g = gamma + p0;
                               const T* __restrict__ b = beta + p0;
                               for (int64_t i = 0; i < len; ++i) {
                                 yc[i] = (xc[i] - m) * s * g[i] + b[i];
                               }
                             } else if (gamma != nullptr) {
                               const T* __restrict__ g = gamma + p0;
                               for (int64_t i = 0; i < len; ++i) { yc[i] = (xc[i] - m) * s * g[i]; }
                             } else {
                               const T* __restrict__ b = beta + p0;
                               for (int64_t i = 0; i < len; ++i) { yc[i] = (xc[i] - m) * s + b[i]; }
                             }
                           });
          }
        }));
  }

 private:
  RowLayout layout_;
  double epsilon_;
};

// dx = inv (g - mean(g) - xhat mean(g xhat)), g = dy gamma, xhat = (x - mean) inv.
template <typename T>
class LayerNormGradKernel final : public Kernel {
 public:
  explicit LayerNormGradKernel(const KernelInitContext& ctx) : layout_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    const T* mean = ctx.Input("mean").data<T>();
    const T* inv_variance = ctx.Input("inv_variance").data<T>();
    const T* gamma = ctx.HasInput("gamma") ? ctx.Input("gamma").data<T>() : nullptr;
    T* dx = ctx.Output("dx").mut_data<T>();
    const RowLayout layout = layout_;
    if (layout.row_size == 0) { return; }
    ParallelForRows(ctx, layout.rows, layout.row_size,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      std::vector<T> scaled(gamma == nullptr ? 0 : layout.row_size);
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t n = layout.row_size;
                        const T* __restrict__ xr = x + r * n;
                        const T* __restrict__ g = dy + r * n;
                        T* __restrict__ dxr = dx + r * n;
                        if (gamma != nullptr) {
                          T* __restrict__ out = scaled.data();
                          ForParamChunks(r * n, n, layout.param_size,
                                         [&](int64_t i0, int64_t len, int64_t p0)
                                             ONEFLOW_PER_ISA_BODY {
                                               const T* __restrict__ gm = gamma + p0;
                                               const T* __restrict__ d = dy + r * n + i0;
                                               for (int64_t i = 0; i < len; ++i) {
                                                 out[i0 + i] = d[i] * gm[i];
                                               }
                                             });
                          g = scaled.data();
                        }
                        const T m = mean[r], s = inv_variance[r];
                        double sum_g = 0, sum_gx = 0;
                        for (int64_t block = 0; block < n; block += kSumBlock) {
                          const int64_t last = std::min(n, block + kSumBlock);
                          T a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
                          for (int64_t i = block; i < last; ++i) {
                            a += g[i];
                            b += g[i] * (xr[i] - m);
                          }
                          sum_g += a;
                          sum_gx += b;
                        }
                        const T mean_g = static_cast<T>(sum_g / double(n));
                        const T mean_gx = static_cast<T>(sum_gx * double(s) / double(n));
                        for (int64_t i = 0; i < n; ++i) {
                          dxr[i] = s * (g[i] - mean_g - (xr[i] - m) * s * mean_gx);
                        }
                      }
                    }));
  }

 private:
  RowLayout layout_;
};

// gamma_diff[p] = sum dy xhat, beta_diff[p] = sum dy over the elements using parameter p.
template <typename T>
class LayerNormParamGradKernel final : public Kernel {
 public:
  explicit LayerNormParamGradKernel(const KernelInitContext& ctx) : layout_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    const T* mean = ctx.Input("mean").data<T>();
    const T* inv_variance = ctx.Input("inv_variance").data<T>();
    T* gamma_diff = ctx.Output("gamma_diff").mut_data<T>();
    T* beta_diff = ctx.Output("beta_diff").mut_data<T>();
    const RowLayout layout = layout_;
    const int64_t p = layout.param_size;
    const int64_t rows_per_block =
        std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(layout.row_size, 1));
    const int64_t blocks = (layout.rows + rows_per_block - 1) / rows_per_block;
    std::vector<double> partial(static_cast<size_t>(std::max<int64_t>(blocks, 1) * 2 * p), 0.0);
    double* partial_data = partial.data();
    if (layout.row_size > 0) {
      ParallelForElements(
          ctx, blocks, 1, PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
            for (int64_t block = begin; block < end; ++block) {
              double* __restrict__ acc_gamma = partial_data + block * 2 * p;
              double* __restrict__ acc_beta = acc_gamma + p;
              const int64_t last = std::min(layout.rows, (block + 1) * rows_per_block);
              for (int64_t r = block * rows_per_block; r < last; ++r) {
                const int64_t n = layout.row_size;
                const T m = mean[r], s = inv_variance[r];
                ForParamChunks(r * n, n, p,
                               [&](int64_t i0, int64_t len, int64_t p0) ONEFLOW_PER_ISA_BODY {
                                 const T* __restrict__ xc = x + r * n + i0;
                                 const T* __restrict__ dc = dy + r * n + i0;
                                 double* __restrict__ ag = acc_gamma + p0;
                                 double* __restrict__ ab = acc_beta + p0;
                                 for (int64_t i = 0; i < len; ++i) {
                                   ag[i] += dc[i] * ((xc[i] - m) * s);
                                   ab[i] += dc[i];
                                 }
                               });
              }
            }
          }));
    }
    for (int64_t j = 0; j < p; ++j) {
      double g = 0, b = 0;
      for (int64_t block = 0; block < blocks; ++block) {
        g += partial_data[block * 2 * p + j];
        b += partial_data[block * 2 * p + p + j];
      }
      gamma_diff[j] = static_cast<T>(g);
      beta_diff[j] = static_cast<T>(b);
    }
  }

 private:
  RowLayout layout_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("layer_norm", LayerNormKernel);
REGISTER_CPU_FLOATING_KERNELS("layer_norm_grad", LayerNormGradKernel);
REGISTER_CPU_FLOATING_KERNELS("layer_norm_param_grad", LayerNormParamGradKernel);

}  // namespace oneflow

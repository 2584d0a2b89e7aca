// CPU kernels of the batch-normalization ops (oneflow/ops/normalization.cpp).
//
// x is viewed as (outer, channels, inner) around the channel axis. Per-channel sums are
// accumulated in double from float blocks of at most kSumBlock elements (each summed with SIMD
// lanes), so float32 statistics stay within ~1e-7 relative of float64 ones. Channels-first
// layouts (inner >= kMinRun) reduce one channel per task over its `outer` runs of `inner`
// contiguous values; channels-last layouts (small inner) reduce rows of channels into
// per-block accumulator vectors, one block of rows per task, combined at the end. The
// elementwise passes are y = a[c] x + b[c] (forward) and dx = a[c] dy + b[c] x + d[c]
// (training backward), with the per-channel factors computed once in double. The loops run per
// vector ISA (cpu_dispatch.h): a ReduceChannels term must be marked ONEFLOW_PER_ISA_BODY.

#include <algorithm>
#include <cmath>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

constexpr int64_t kSumBlock = 1024;
constexpr int64_t kMinRun = 16;

// (outer, channels, inner) of a shape around `axis`, plus the element count per channel of the
// logical blob (the divisor of the batch statistics).
struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t logical_count = 1;

  ChannelLayout(const KernelInitContext& ctx, const std::string& argument) {
    const Shape& shape = ctx.Desc(argument).shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += shape.num_axes(); }
    for (int64_t a = 0; a < axis; ++a) { outer *= shape.At(a); }
    channels = shape.At(axis);
    for (int64_t a = axis + 1; a < shape.num_axes(); ++a) { inner *= shape.At(a); }
    const Shape& logical = ctx.LogicalDesc(argument).shape;
    logical_count = logical.At(axis) == 0 ? 0 : logical.elem_count() / logical.At(axis);
  }
  int64_t elem_count() const { return outer * channels * inner; }
};

// Sums two per-element terms over every element of each channel: term(index, c, &t0, &t1)
// gives the terms of element `index` (flat, physical) in channel c. Writes sums[2 c + k].
template <typename T, typename Term>
void ReduceChannels(KernelContext& ctx, const ChannelLayout& layout, const Term& term,
                    std::vector<double>* sums) {
  const int64_t channels = layout.channels, inner = layout.inner, outer = layout.outer;
  sums->assign(2 * channels, 0.0);
  double* out = sums->data();
  if (layout.elem_count() == 0) { return; }
  if (inner >= kMinRun) {
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (outer * inner));
    ParallelForElements(
        ctx, channels, grain, PerIsa([=, &term](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
          for (int64_t c = begin; c < end; ++c) {
            double acc0 = 0, acc1 = 0;
            for (int64_t o = 0; o < outer; ++o) {
              const int64_t run = (o * channels + c) * inner;
              for (int64_t block = 0; block < inner; block += kSumBlock) {
                const int64_t first = run + block, last = run + std::min(inner, block + kSumBlock);
                T s0 = 0, s1 = 0;
#pragma omp simd reduction(+ : s0, s1)
                for (int64_t i = first; i < last; ++i) {
                  T t0, t1;
                  term(i, c, &t0, &t1);
                  s0 += t0;
                  s1 += t1;
                }
                acc0 += s0;
                acc1 += s1;
              }
            }
            out[2 * c] = acc0;
            out[2 * c + 1] = acc1;
          }
        }));
    return;
  }
  // Channels last: blocks of outer rows, each with its own accumulators.
  const int64_t row = channels * inner;
  const int64_t rows_per_block = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row, 1));
  const int64_t blocks = (outer + rows_per_block - 1) / rows_per_block;
  std::vector<double> partial(static_cast<size_t>(blocks * 2 * channels), 0.0);
  double* partial_data = partial.data();
  ParallelForElements(ctx, blocks, 1,
                      PerIsa([=, &term](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                        for (int64_t block = begin; block < end; ++block) {
                          double* __restrict__ acc0 = partial_data + block * 2 * channels;
                          double* __restrict__ acc1 = acc0 + channels;
                          const int64_t last = std::min(outer, (block + 1) * rows_per_block);
                          for (int64_t o = block * rows_per_block; o < last; ++o) {
                            const int64_t base = o * row;
                            if (inner == 1) {
#pragma omp simd
                              for (int64_t c = 0; c < channels; ++c) {
                                T t0, t1;
                                term(base + c, c, &t0, &t1);
                                acc0[c] += t0;
                                acc1[c] += t1;
                              }
                            } else {
                              for (int64_t c = 0; c < channels; ++c) {
                                for (int64_t i = 0; i < inner; ++i) {
                                  T t0, t1;
                                  term(base + c * inner + i, c, &t0, &t1);
                                  acc0[c] += t0;
                                  acc1[c] += t1;
                                }
                              }
                            }
                          }
                        }
                      }));
  for (int64_t block = 0; block < blocks; ++block) {
    const double* acc = partial_data + block * 2 * channels;
    for (int64_t c = 0; c < channels; ++c) {
      out[2 * c] += acc[c];
      out[2 * c + 1] += acc[channels + c];
    }
  }
}

// out[i] = a[c] * x[i] + b[c] (+ d[c] * z[i] when z is given) over the whole blob.
template <typename T>
void ChannelAffine(KernelContext& ctx, const ChannelLayout& layout, const T* x, const T* z,
                   const T* a, const T* b, const T* d, T* out) {
  const int64_t channels = layout.channels, inner = layout.inner;
  const int64_t rows = layout.outer * channels;  // one (o, c) run of `inner` values per row
  if (inner >= kMinRun) {
    ParallelForRows(ctx, rows, inner, PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t c = r % channels;
                        const T ac = a[c], bc = b[c];
                        const T* __restrict__ xr = x + r * inner;
                        T* __restrict__ yr = out + r * inner;
                        if (z == nullptr) {
                          for (int64_t i = 0; i < inner; ++i) { yr[i] = ac * xr[i] + bc; }
                        } else {
                          const T dc = d[c];
                          const T* __restrict__ zr = z + r * inner;
                          for (int64_t i = 0; i < inner; ++i) {
                            yr[i] = ac * xr[i] + dc * zr[i] + bc;
                          }
                        }
                      }
                    }));
    return;
  }
  const int64_t row = channels * inner;
  ParallelForRows(
      ctx, layout.outer, row, PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
        for (int64_t o = begin; o < end; ++o) {
          const T* __restrict__ xr = x + o * row;
          T* __restrict__ yr = out + o * row;
          if (inner == 1) {
            if (z == nullptr) {
              for (int64_t c = 0; c < channels; ++c) { yr[c] = a[c] * xr[c] + b[c]; }
            } else {
              const T* __restrict__ zr = z + o * row;
              for (int64_t c = 0; c < channels; ++c) { yr[c] = a[c] * xr[c] + d[c] * zr[c] + b[c]; }
            }
          } else {
            for (int64_t c = 0; c < channels; ++c) {
              for (int64_t i = 0; i < inner; ++i) {
                const int64_t k = c * inner + i;
                yr[k] = a[c] * xr[k] + b[c] + (z == nullptr ? T(0) : d[c] * z[o * row + k]);
              }
            }
          }
        }
      }));
}

template <typename T>
const T* OptionalData(KernelContext& ctx, const char* argument) {
  return ctx.HasInput(argument) ? ctx.Input(argument).data<T>() : nullptr;
}

template <typename T>
class BatchNormMeanKernel final : public Kernel {
 public:
  explicit BatchNormMeanKernel(const KernelInitContext& ctx) : layout_(ctx, "x") {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    ReduceChannels<T>(
        ctx, layout_,
        [x](int64_t i, int64_t, T* t0, T* t1) ONEFLOW_PER_ISA_BODY {
          *t0 = x[i];
          *t1 = T(0);
        },
        &sums_);
    T* mean = ctx.Output("mean").mut_data<T>();
    const double divisor = std::max<int64_t>(layout_.logical_count, 1);
    for (int64_t c = 0; c < layout_.channels; ++c) { mean[c] = static_cast<T>(sums_[2 * c] / divisor); }
  }

 private:
  ChannelLayout layout_;
  std::vector<double> sums_;
};

template <typename T>
class BatchNormVarianceKernel final : public Kernel {
 public:
  explicit BatchNormVarianceKernel(const KernelInitContext& ctx) : layout_(ctx, "x") {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* mean = ctx.Input("mean").data<T>();
    ReduceChannels<T>(
        ctx, layout_,
        [x, mean](int64_t i, int64_t c, T* t0, T* t1) ONEFLOW_PER_ISA_BODY {
          const T centered = x[i] - mean[c];
          *t0 = centered * centered;
          *t1 = T(0);
        },
        &sums_);
    T* variance = ctx.Output("variance").mut_data<T>();
    const double divisor = std::max<int64_t>(layout_.logical_count, 1);
    for (int64_t c = 0; c < layout_.channels; ++c) {
      variance[c] = static_cast<T>(sums_[2 * c] / divisor);
    }
  }

 private:
  ChannelLayout layout_;
  std::vector<double> sums_;
};

// y = x * a + b with a = gamma / sqrt(variance + epsilon), b = beta - mean * a. The training
// variant also updates the moving statistics in place.
template <typename T, bool kTraining>
class NormalizationKernel final : public Kernel {
 public:
  explicit NormalizationKernel(const KernelInitContext& ctx)
      : layout_(ctx, "x"),
        epsilon_(ctx.Attr<double>("epsilon")),
        momentum_(kTraining ? ctx.Attr<double>("momentum") : 0.0),
        a_(layout_.channels),
        b_(layout_.channels) {}

  void Forward(KernelContext& ctx) override {
    const T* mean = ctx.Input("mean").data<T>();
    const T* variance = ctx.Input("variance").data<T>();
    const T* gamma = OptionalData<T>(ctx, "gamma");
    const T* beta = OptionalData<T>(ctx, "beta");
    for (int64_t c = 0; c < layout_.channels; ++c) {
      const double scale = (gamma ? double(gamma[c]) : 1.0) /
                           std::sqrt(double(variance[c]) + epsilon_);
      a_[c] = static_cast<T>(scale);
      b_[c] = static_cast<T>((beta ? double(beta[c]) : 0.0) - double(mean[c]) * scale);
    }
    ChannelAffine<T>(ctx, layout_, ctx.Input("x").data<T>(), nullptr, a_.data(), b_.data(),
                     nullptr, ctx.Output("y").mut_data<T>());
    if (kTraining && ctx.HasInput("moving_mean")) {
      T* moving_mean = ctx.MutableInput("moving_mean").mut_data<T>();
      T* moving_variance = ctx.MutableInput("moving_variance").mut_data<T>();
      const int64_t count = layout_.logical_count;
      const double unbias = count > 1 ? double(count) / double(count - 1) : 1.0;
      for (int64_t c = 0; c < layout_.channels; ++c) {
        moving_mean[c] =
            static_cast<T>(momentum_ * moving_mean[c] + (1.0 - momentum_) * double(mean[c]));
        moving_variance[c] = static_cast<T>(momentum_ * moving_variance[c] +
                                            (1.0 - momentum_) * double(variance[c]) * unbias);
      }
    }
  }

 private:
  ChannelLayout layout_;
  double epsilon_, momentum_;
  std::vector<T> a_, b_;
};

// GradStats' two sums for channels-first layouts, written out: with the generic ReduceChannels
// term the loop did not vectorize (3.7x the time of the mean's reduction; measured with the act
// event timeline on (32, 64, 32, 32)).
template <typename T>
void GradStatsChannelsFirst(KernelContext& ctx, const ChannelLayout& layout, const T* x,
                            const T* dy, const T* mean, std::vector<double>* sums) {
  const int64_t channels = layout.channels, inner = layout.inner, outer = layout.outer;
  sums->assign(2 * channels, 0.0);
  double* out = sums->data();
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(outer * inner, 1));
  ParallelForElements(ctx, channels, grain,
                      PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                        for (int64_t c = begin; c < end; ++c) {
                          const T m = mean[c];
                          double acc0 = 0, acc1 = 0;
                          for (int64_t o = 0; o < outer; ++o) {
                            const T* __restrict__ xr = x + (o * channels + c) * inner;
                            const T* __restrict__ dyr = dy + (o * channels + c) * inner;
                            for (int64_t block = 0; block < inner; block += kSumBlock) {
                              const int64_t last = std::min(inner, block + kSumBlock);
                              T s0 = 0, s1 = 0;
#pragma omp simd reduction(+ : s0, s1)
                              for (int64_t i = block; i < last; ++i) {
                                const T d = dyr[i];
                                s0 += d;
                                s1 += d * (xr[i] - m);
                              }
                              acc0 += s0;
                              acc1 += s1;
                            }
                          }
                          out[2 * c] = acc0;
                          out[2 * c + 1] = acc1;
                        }
                      }));
}

// sum_dy[c] = sum dy; sum_dy_xhat[c] = sum dy (x - mean) / sqrt(variance + epsilon).
template <typename T>
void GradStats(KernelContext& ctx, const ChannelLayout& layout, double epsilon,
               std::vector<double>* sums) {
  const T* x = ctx.Input("x").data<T>();
  const T* dy = ctx.Input("dy").data<T>();
  const T* mean = ctx.Input("mean").data<T>();
  if (layout.inner >= kMinRun) {
    GradStatsChannelsFirst(ctx, layout, x, dy, mean, sums);
  } else {
    ReduceChannels<T>(
        ctx, layout,
        [x, dy, mean](int64_t i, int64_t c, T* t0, T* t1) ONEFLOW_PER_ISA_BODY {
          *t0 = dy[i];
          *t1 = dy[i] * (x[i] - mean[c]);
        },
        sums);
  }
  const T* variance = ctx.Input("variance").data<T>();
  for (int64_t c = 0; c < layout.channels; ++c) {
    (*sums)[2 * c + 1] /= std::sqrt(double(variance[c]) + epsilon);
  }
}

template <typename T>
class NormalizationTrainGradStatsKernel final : public Kernel {
 public:
  explicit NormalizationTrainGradStatsKernel(const KernelInitContext& ctx)
      : layout_(ctx, "x"), epsilon_(ctx.Attr<double>("epsilon")) {}
  void Forward(KernelContext& ctx) override {
    GradStats<T>(ctx, layout_, epsilon_, &sums_);
    T* sum_dy = ctx.Output("sum_dy").mut_data<T>();
    T* sum_dy_xhat = ctx.Output("sum_dy_xhat").mut_data<T>();
    for (int64_t c = 0; c < layout_.channels; ++c) {
      sum_dy[c] = static_cast<T>(sums_[2 * c]);
      sum_dy_xhat[c] = static_cast<T>(sums_[2 * c + 1]);
    }
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
  std::vector<double> sums_;
};

// dx = k (dy - sum_dy / m - xhat sum_dy_xhat / m), k = gamma inv_std, as a dy + b x + d.
template <typename T>
class NormalizationTrainGradKernel final : public Kernel {
 public:
  explicit NormalizationTrainGradKernel(const KernelInitContext& ctx)
      : layout_(ctx, "x"),
        epsilon_(ctx.Attr<double>("epsilon")),
        a_(layout_.channels),
        b_(layout_.channels),
        d_(layout_.channels) {}
  void Forward(KernelContext& ctx) override {
    const T* mean = ctx.Input("mean").data<T>();
    const T* variance = ctx.Input("variance").data<T>();
    const T* gamma = OptionalData<T>(ctx, "gamma");
    const T* sum_dy = ctx.Input("sum_dy").data<T>();
    const T* sum_dy_xhat = ctx.Input("sum_dy_xhat").data<T>();
    const double m = std::max<int64_t>(layout_.logical_count, 1);
    for (int64_t c = 0; c < layout_.channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(double(variance[c]) + epsilon_);
      const double k = (gamma ? double(gamma[c]) : 1.0) * inv_std;
      const double x_factor = -k * inv_std * double(sum_dy_xhat[c]) / m;
      a_[c] = static_cast<T>(k);                // times dy
      d_[c] = static_cast<T>(x_factor);          // times x
      b_[c] = static_cast<T>(-k * double(sum_dy[c]) / m - x_factor * double(mean[c]));
    }
    ChannelAffine<T>(ctx, layout_, ctx.Input("dy").data<T>(), ctx.Input("x").data<T>(),
                     a_.data(), b_.data(), d_.data(), ctx.Output("dx").mut_data<T>());
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
  std::vector<T> a_, b_, d_;
};

// The gradient of normalization with given statistics: dx = k dy; the per-channel gradients
// come from the sums of dy and dy xhat.
template <typename T>
class NormalizationGradKernel final : public Kernel {
 public:
  explicit NormalizationGradKernel(const KernelInitContext& ctx)
      : layout_(ctx, "x"),
        epsilon_(ctx.Attr<double>("epsilon")),
        a_(layout_.channels),
        zero_(layout_.channels, T(0)) {}
  void Forward(KernelContext& ctx) override {
    GradStats<T>(ctx, layout_, epsilon_, &sums_);
    const T* variance = ctx.Input("variance").data<T>();
    const T* gamma = OptionalData<T>(ctx, "gamma");
    T* mean_diff = ctx.Output("mean_diff").mut_data<T>();
    T* variance_diff = ctx.Output("variance_diff").mut_data<T>();
    T* gamma_diff = ctx.Output("gamma_diff").mut_data<T>();
    T* beta_diff = ctx.Output("beta_diff").mut_data<T>();
    for (int64_t c = 0; c < layout_.channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(double(variance[c]) + epsilon_);
      const double g = gamma ? double(gamma[c]) : 1.0;
      a_[c] = static_cast<T>(g * inv_std);
      beta_diff[c] = static_cast<T>(sums_[2 * c]);
      gamma_diff[c] = static_cast<T>(sums_[2 * c + 1]);
      mean_diff[c] = static_cast<T>(-g * inv_std * sums_[2 * c]);
      variance_diff[c] = static_cast<T>(-0.5 * g * inv_std * inv_std * sums_[2 * c + 1]);
    }
    ChannelAffine<T>(ctx, layout_, ctx.Input("dy").data<T>(), nullptr, a_.data(), zero_.data(),
                     nullptr, ctx.Output("dx").mut_data<T>());
  }

 private:
  ChannelLayout layout_;
  double epsilon_;
  std::vector<T> a_, zero_;
  std::vector<double> sums_;
};

template <typename T>
using NormalizationInferenceKernel = NormalizationKernel<T, false>;
template <typename T>
using NormalizationTrainKernel = NormalizationKernel<T, true>;

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("batch_norm_mean", BatchNormMeanKernel);
REGISTER_CPU_FLOATING_KERNELS("batch_norm_variance", BatchNormVarianceKernel);
REGISTER_CPU_FLOATING_KERNELS("normalization", NormalizationInferenceKernel);
REGISTER_CPU_FLOATING_KERNELS("normalization_train", NormalizationTrainKernel);
REGISTER_CPU_FLOATING_KERNELS("normalization_grad", NormalizationGradKernel);
REGISTER_CPU_FLOATING_KERNELS("normalization_train_grad_stats", NormalizationTrainGradStatsKernel);
REGISTER_CPU_FLOATING_KERNELS("normalization_train_grad", NormalizationTrainGradKernel);

}  // namespace oneflow

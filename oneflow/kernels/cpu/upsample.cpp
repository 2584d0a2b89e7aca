// CPU upsample and upsample_grad (oneflow/ops/upsample.cpp).
//
// Both interpolations are separable linear maps: out[a, b] = sum over (i, u) in rows[a] and
// (j, v) in columns[b] of u * v * in[i, j], per (n, c) plane. Each axis's map is a small sparse
// table built once per kernel (ResampleAxis): the forward table has 1 (nearest) or 1-2
// (bilinear) entries per output index, and the gradient uses the transposed table, so the
// backward pass is a gather too: every element is written once by one thread, no scatter
// collisions, and results do not depend on the thread count. Rows of the output go to the
// compute threads; channels_last runs each tap over the C contiguous channels (vectorized).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// One axis of the map, compressed by output index: output o reads input indices
// index[offset[o] .. offset[o + 1]) with the matching weights.
template <typename T>
struct ResampleAxis {
  std::vector<int64_t> offset{0};
  std::vector<int64_t> index;
  std::vector<T> weight;

  void Add(int64_t input, T value) {
    index.push_back(input);
    weight.push_back(value);
  }
  void EndOutput() { offset.push_back(static_cast<int64_t>(index.size())); }
  int64_t outputs() const { return static_cast<int64_t>(offset.size()) - 1; }
};

// The forward map of an axis from `in` to `out` elements. Computed in T with 1 / scale rounded
// to T first, as OneFlow's and PyTorch's kernels do, so the indices and weights are theirs.
template <typename T>
ResampleAxis<T> ForwardAxis(int64_t in, int64_t out, double scale, bool bilinear) {
  ResampleAxis<T> axis;
  if (!bilinear) {
    const float inverse = static_cast<float>(1.0 / scale);
    for (int64_t o = 0; o < out; ++o) {
      const int64_t i = static_cast<int64_t>(std::floor(static_cast<float>(o) * inverse));
      axis.Add(std::min(i, in - 1), T(1));
      axis.EndOutput();
    }
    return axis;
  }
  const T inverse = static_cast<T>(1.0 / scale);
  for (int64_t o = 0; o < out; ++o) {
    const T source = std::max(T(0), (static_cast<T>(o) + T(0.5)) * inverse - T(0.5));
    const int64_t low = std::min(static_cast<int64_t>(source), in - 1);
    const int64_t high = low < in - 1 ? low + 1 : low;
    const T lambda = source - static_cast<T>(low);
    if (high == low) {
      axis.Add(low, T(1));
    } else {
      axis.Add(low, T(1) - lambda);
      axis.Add(high, lambda);
    }
    axis.EndOutput();
  }
  return axis;
}

// The transposed map (input index -> the outputs that read it), for the gradient.
template <typename T>
ResampleAxis<T> Transposed(const ResampleAxis<T>& forward, int64_t in) {
  std::vector<std::vector<std::pair<int64_t, T>>> readers(in);
  for (int64_t o = 0; o < forward.outputs(); ++o) {
    for (int64_t k = forward.offset[o]; k < forward.offset[o + 1]; ++k) {
      readers[forward.index[k]].emplace_back(o, forward.weight[k]);
    }
  }
  ResampleAxis<T> axis;
  for (const auto& list : readers) {
    for (const auto& [output, value] : list) { axis.Add(output, value); }
    axis.EndOutput();
  }
  return axis;
}

// Applies rows (x) columns to `planes` planes (channels_first: N * C planes of in_h x in_w;
// channels_last: N planes of in_h x in_w x channels).
template <typename T>
class SeparableResample {
 public:
  SeparableResample() = default;
  SeparableResample(ResampleAxis<T> rows, ResampleAxis<T> columns, int64_t in_h, int64_t in_w,
                    int64_t planes, int64_t channels, bool channels_first)
      : rows_(std::move(rows)),
        columns_(std::move(columns)),
        in_h_(in_h),
        in_w_(in_w),
        planes_(planes),
        channels_(channels),
        channels_first_(channels_first) {}

  void Run(KernelContext& ctx, const T* in, T* out) const {
    const int64_t out_h = rows_.outputs();
    const int64_t out_w = columns_.outputs();
    const int64_t in_h = in_h_, in_w = in_w_, channels = channels_;
    const int64_t* row_offset = rows_.offset.data();
    const int64_t* row_index = rows_.index.data();
    const T* row_weight = rows_.weight.data();
    const int64_t* column_offset = columns_.offset.data();
    const int64_t* column_index = columns_.index.data();
    const T* column_weight = columns_.weight.data();
    if (channels_first_) {
      ParallelForRows(ctx, planes_ * out_h, out_w,
                      PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                        for (int64_t r = begin; r < end; ++r) {
                          const int64_t plane = r / out_h, a = r % out_h;
                          T* out_row = out + r * out_w;
                          std::fill(out_row, out_row + out_w, T(0));
                          for (int64_t k = row_offset[a]; k < row_offset[a + 1]; ++k) {
                            const T* in_row = in + (plane * in_h + row_index[k]) * in_w;
                            const T u = row_weight[k];
                            for (int64_t b = 0; b < out_w; ++b) {
                              T sum = 0;
                              for (int64_t m = column_offset[b]; m < column_offset[b + 1]; ++m) {
                                sum += column_weight[m] * in_row[column_index[m]];
                              }
                              out_row[b] += u * sum;
                            }
                          }
                        }
                      }));
      return;
    }
    ParallelForRows(ctx, planes_ * out_h, out_w * channels,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t plane = r / out_h, a = r % out_h;
                        T* out_row = out + r * out_w * channels;
                        std::fill(out_row, out_row + out_w * channels, T(0));
                        for (int64_t k = row_offset[a]; k < row_offset[a + 1]; ++k) {
                          const T* in_row = in + (plane * in_h + row_index[k]) * in_w * channels;
                          const T u = row_weight[k];
                          for (int64_t b = 0; b < out_w; ++b) {
                            T* __restrict__ target = out_row + b * channels;
                            for (int64_t m = column_offset[b]; m < column_offset[b + 1]; ++m) {
                              const T w = u * column_weight[m];
                              const T* __restrict__ source = in_row + column_index[m] * channels;
                              for (int64_t c = 0; c < channels; ++c) { target[c] += w * source[c]; }
                            }
                          }
                        }
                      }
                    }));
  }

 private:
  ResampleAxis<T> rows_, columns_;
  int64_t in_h_ = 0, in_w_ = 0, planes_ = 0, channels_ = 1;
  bool channels_first_ = true;
};

// forward: x -> y; gradient: dy -> dx with the transposed maps. `small` is x's (or dx's) shape,
// `large` y's (or dy's).
template <typename T>
SeparableResample<T> MakeResample(const KernelInitContext& ctx, const Shape& small,
                                  const Shape& large, bool gradient) {
  const bool channels_first = ctx.Attr<std::string>("data_format") == "channels_first";
  const bool bilinear = ctx.Attr<std::string>("interpolation") == "bilinear";
  const int64_t h_axis = channels_first ? 2 : 1;
  const int64_t small_h = small.At(h_axis), small_w = small.At(h_axis + 1);
  const int64_t large_h = large.At(h_axis), large_w = large.At(h_axis + 1);
  ResampleAxis<T> rows =
      ForwardAxis<T>(small_h, large_h, ctx.Attr<double>("height_scale"), bilinear);
  ResampleAxis<T> columns =
      ForwardAxis<T>(small_w, large_w, ctx.Attr<double>("width_scale"), bilinear);
  const int64_t channels = small.At(channels_first ? 1 : 3);
  const int64_t planes = channels_first ? small.At(0) * channels : small.At(0);
  const int64_t plane_channels = channels_first ? 1 : channels;
  if (!gradient) {
    return SeparableResample<T>(std::move(rows), std::move(columns), small_h, small_w, planes,
                                plane_channels, channels_first);
  }
  return SeparableResample<T>(Transposed(rows, small_h), Transposed(columns, small_w), large_h,
                              large_w, planes, plane_channels, channels_first);
}

template <typename T>
class UpsampleKernel final : public Kernel {
 public:
  explicit UpsampleKernel(const KernelInitContext& ctx)
      : resample_(MakeResample<T>(ctx, ctx.Desc("x").shape, ctx.Desc("y").shape, false)) {}
  void Forward(KernelContext& ctx) override {
    resample_.Run(ctx, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>());
  }

 private:
  SeparableResample<T> resample_;
};

template <typename T>
class UpsampleGradKernel final : public Kernel {
 public:
  explicit UpsampleGradKernel(const KernelInitContext& ctx)
      : resample_(MakeResample<T>(ctx, ctx.Desc("dx").shape, ctx.Desc("dy").shape, true)) {}
  void Forward(KernelContext& ctx) override {
    resample_.Run(ctx, ctx.Input("dy").data<T>(), ctx.Output("dx").mut_data<T>());
  }

 private:
  SeparableResample<T> resample_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("upsample", UpsampleKernel);
REGISTER_CPU_FLOATING_KERNELS("upsample_grad", UpsampleGradKernel);

}  // namespace oneflow

// CPU upsample and upsample_grad (oneflow/ops/upsample.cpp).
//
// Both interpolations are separable linear maps: out[a, b] = sum over (i, u) in rows[a] and
// (j, v) in columns[b] of u * v * in[i, j], per (n, c) plane. Each axis's map is a small sparse
// table built once per kernel (ResampleAxis): the forward table has 1 (nearest) or 1-2
// (bilinear) entries per output index, and the gradient uses the transposed table, so the
// backward pass is a gather too: every element is written once by one thread, no scatter
// collisions, and results do not depend on the thread count. Rows of the output go to the
// compute threads (SeparableResample says how a row is computed).

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

// The transposed map (input index -> the outputs that read it), for the gradient. With a
// non-integer scale some input indices are read by no output: they have no taps, and their
// gradient is 0.
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
// channels_last: N planes of in_h x in_w x channels). Per output row: an output row whose taps
// equal the previous row's (nearest: scale - 1 of every scale rows) is a copy of it; otherwise
// its input rows are first mixed into one row (vectorized over the input width), then
// resampled along the row: for channels_first through two fixed taps per output column when no
// column has more (every forward map), else through the column table; for channels_last each
// column tap adds C contiguous channels.
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
        channels_first_(channels_first) {
    const int64_t out_h = rows_.outputs();
    repeats_previous_.assign(out_h, 0);
    for (int64_t a = 1; a < out_h; ++a) {
      const int64_t begin = rows_.offset[a], previous = rows_.offset[a - 1];
      const int64_t count = rows_.offset[a + 1] - begin;
      bool same = count == begin - previous;
      for (int64_t k = 0; same && k < count; ++k) {
        same = rows_.index[begin + k] == rows_.index[previous + k] &&
               rows_.weight[begin + k] == rows_.weight[previous + k];
      }
      repeats_previous_[a] = same ? 1 : 0;
    }
    const int64_t out_w = columns_.outputs();
    two_taps_ = true;
    single_unit_taps_ = true;
    for (int64_t b = 0; b < out_w; ++b) {
      const int64_t count = columns_.offset[b + 1] - columns_.offset[b];
      two_taps_ = two_taps_ && count >= 1 && count <= 2;  // zero taps: the table path
      single_unit_taps_ =
          single_unit_taps_ && count == 1 && columns_.weight[columns_.offset[b]] == T(1);
    }
    if (two_taps_) {
      tap_index_[0].assign(out_w, 0);
      tap_index_[1].assign(out_w, 0);
      tap_weight_[0].assign(out_w, T(0));
      tap_weight_[1].assign(out_w, T(0));
      for (int64_t b = 0; b < out_w; ++b) {
        for (int64_t k = columns_.offset[b], tap = 0; k < columns_.offset[b + 1]; ++k, ++tap) {
          tap_index_[tap][b] = columns_.index[k];
          tap_weight_[tap][b] = columns_.weight[k];
        }
        if (columns_.offset[b + 1] - columns_.offset[b] == 1) {
          tap_index_[1][b] = tap_index_[0][b];
        }
      }
    }
  }

  void Run(KernelContext& ctx, const T* in, T* out) const {
    const int64_t out_h = rows_.outputs();
    const int64_t out_w = columns_.outputs();
    const int64_t in_h = in_h_, in_w = in_w_, channels = channels_;
    const int64_t row_size = in_w * channels;  // one mixed input row
    const int64_t out_row_size = out_w * channels;
    const int64_t* row_offset = rows_.offset.data();
    const int64_t* row_index = rows_.index.data();
    const T* row_weight = rows_.weight.data();
    const int64_t* column_offset = columns_.offset.data();
    const int64_t* column_index = columns_.index.data();
    const T* column_weight = columns_.weight.data();
    const char* repeats_previous = repeats_previous_.data();
    const int64_t* index0 = tap_index_[0].data();
    const int64_t* index1 = tap_index_[1].data();
    const T* weight0 = tap_weight_[0].data();
    const T* weight1 = tap_weight_[1].data();
    const bool channels_first = channels_first_, two_taps = two_taps_;
    const bool single_unit_taps = single_unit_taps_;
    ParallelForRows(ctx, planes_ * out_h, out_row_size,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      std::vector<T> mixed_row(static_cast<size_t>(row_size));
                      T* __restrict__ mixed = mixed_row.data();
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t plane = r / out_h, a = r % out_h;
                        T* __restrict__ out_row = out + r * out_row_size;
                        if (repeats_previous[a] && r > begin) {
                          std::copy(out_row - out_row_size, out_row, out_row);
                          continue;
                        }
                        const int64_t taps = row_offset[a + 1] - row_offset[a];
                        if (taps == 0) {  // a gradient row that no output read
                          std::fill(out_row, out_row + out_row_size, T(0));
                          continue;
                        }
                        const T* plane_in = in + plane * in_h * row_size;
                        const T* source = plane_in + row_index[row_offset[a]] * row_size;
                        if (taps != 1 || row_weight[row_offset[a]] != T(1)) {
                          const T u = row_weight[row_offset[a]];
                          for (int64_t j = 0; j < row_size; ++j) { mixed[j] = u * source[j]; }
                          for (int64_t k = row_offset[a] + 1; k < row_offset[a + 1]; ++k) {
                            const T* __restrict__ next = plane_in + row_index[k] * row_size;
                            const T v = row_weight[k];
                            for (int64_t j = 0; j < row_size; ++j) { mixed[j] += v * next[j]; }
                          }
                          source = mixed;
                        }
                        if (channels_first) {
                          if (single_unit_taps) {
                            for (int64_t b = 0; b < out_w; ++b) { out_row[b] = source[index0[b]]; }
                          } else if (two_taps) {
                            for (int64_t b = 0; b < out_w; ++b) {
                              out_row[b] =
                                  weight0[b] * source[index0[b]] + weight1[b] * source[index1[b]];
                            }
                          } else {
                            for (int64_t b = 0; b < out_w; ++b) {
                              T sum = 0;
                              for (int64_t m = column_offset[b]; m < column_offset[b + 1]; ++m) {
                                sum += column_weight[m] * source[column_index[m]];
                              }
                              out_row[b] = sum;
                            }
                          }
                          continue;
                        }
                        for (int64_t b = 0; b < out_w; ++b) {
                          T* __restrict__ target = out_row + b * channels;
                          const int64_t first = column_offset[b];
                          if (first == column_offset[b + 1]) {  // no taps: an unread column
                            std::fill(target, target + channels, T(0));
                            continue;
                          }
                          const T* __restrict__ tap = source + column_index[first] * channels;
                          const T w = column_weight[first];
                          for (int64_t c = 0; c < channels; ++c) { target[c] = w * tap[c]; }
                          for (int64_t m = first + 1; m < column_offset[b + 1]; ++m) {
                            const T* __restrict__ next = source + column_index[m] * channels;
                            const T v = column_weight[m];
                            for (int64_t c = 0; c < channels; ++c) { target[c] += v * next[c]; }
                          }
                        }
                      }
                    }));
  }

 private:
  ResampleAxis<T> rows_, columns_;
  int64_t in_h_ = 0, in_w_ = 0, planes_ = 0, channels_ = 1;
  bool channels_first_ = true;
  std::vector<char> repeats_previous_;  // per output row: same taps as the row before
  bool two_taps_ = false;               // every output column has at most two taps
  bool single_unit_taps_ = false;       // every output column copies one input column
  std::vector<int64_t> tap_index_[2];   // channels_first, two_taps_: the taps per column
  std::vector<T> tap_weight_[2];
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

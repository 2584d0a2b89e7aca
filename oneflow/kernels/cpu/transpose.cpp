// CPU transpose for every dtype. The permutation is first simplified (size-1 axes dropped, axes
// that stay adjacent and in order merged); then either the innermost axis stays innermost and
// each output row is one contiguous copy, or the two innermost axes swap and the work is a batch
// of cache-blocked 2-D transposes.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// Side of the square tiles of the blocked 2-D transpose: a tile's source rows stay in L1.
constexpr int64_t kTileSize = 32;

typedef uint32_t Lanes8 __attribute__((vector_size(32)));
typedef uint32_t UnalignedLanes8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t Index8 __attribute__((vector_size(32)));

// out[y * out_stride + x] = in[x * in_stride + y] for x, y in [0, 8), 4-byte elements: eight
// 32-byte row loads, the 8x8 block transposed in registers (pairs of rows interleaved, then
// pairs of pairs, then the 128-bit halves), eight 32-byte row stores.
__attribute__((always_inline)) inline void Transpose8x8(const uint32_t* in, int64_t in_stride,
                                                        uint32_t* out, int64_t out_stride) {
  Lanes8 r[8];
  for (int i = 0; i < 8; ++i) {
    r[i] = *reinterpret_cast<const UnalignedLanes8*>(in + i * in_stride);
  }
  Lanes8 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], Index8{0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], Index8{2, 10, 3, 11, 6, 14, 7, 15});
  }
  // u[0..3] hold rows 0-3 of columns (0, 4), (1, 5), (2, 6), (3, 7); u[4..7] rows 4-7.
  Lanes8 u[8];
  for (int half = 0; half < 8; half += 4) {
    for (int i = 0; i < 2; ++i) {
      u[half + 2 * i] = __builtin_shuffle(t[half + i], t[half + i + 2],
                                          Index8{0, 1, 8, 9, 4, 5, 12, 13});
      u[half + 2 * i + 1] = __builtin_shuffle(t[half + i], t[half + i + 2],
                                              Index8{2, 3, 10, 11, 6, 7, 14, 15});
    }
  }
  for (int column = 0; column < 4; ++column) {
    *reinterpret_cast<UnalignedLanes8*>(out + column * out_stride) =
        __builtin_shuffle(u[column], u[column + 4], Index8{0, 1, 2, 3, 8, 9, 10, 11});
    *reinterpret_cast<UnalignedLanes8*>(out + (column + 4) * out_stride) =
        __builtin_shuffle(u[column], u[column + 4], Index8{4, 5, 6, 7, 12, 13, 14, 15});
  }
}

typedef uint64_t Lanes4 __attribute__((vector_size(32)));
typedef uint64_t UnalignedLanes4 __attribute__((vector_size(32), aligned(8)));
typedef int64_t Index4 __attribute__((vector_size(32)));

// The same for x, y in [0, 4) and 8-byte elements: pairs of rows interleaved, then the halves.
__attribute__((always_inline)) inline void Transpose4x4(const uint64_t* in, int64_t in_stride,
                                                        uint64_t* out, int64_t out_stride) {
  Lanes4 r[4];
  for (int i = 0; i < 4; ++i) {
    r[i] = *reinterpret_cast<const UnalignedLanes4*>(in + i * in_stride);
  }
  // t[0] = [r00, r10, r02, r12], t[1] = [r01, r11, r03, r13], t[2], t[3] the same of rows 2, 3.
  Lanes4 t[4];
  for (int i = 0; i < 4; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], Index4{0, 4, 2, 6});
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], Index4{1, 5, 3, 7});
  }
  for (int column = 0; column < 2; ++column) {
    *reinterpret_cast<UnalignedLanes4*>(out + column * out_stride) =
        __builtin_shuffle(t[column], t[column + 2], Index4{0, 1, 4, 5});
    *reinterpret_cast<UnalignedLanes4*>(out + (column + 2) * out_stride) =
        __builtin_shuffle(t[column], t[column + 2], Index4{2, 3, 6, 7});
  }
}

// out[y * out_stride + x] = in[x * in_stride + y] for x < x_count, y < y_count (at most
// kTileSize each), E of 4 or 8 bytes: kBlock x kBlock blocks transposed in registers
// (Transpose8x8, Transpose4x4) into a tile buffer, whose rows are then copied out whole; the
// edges element by element. (Stored straight to out, the blocks keep 8 rows' lines half-written
// at once; when out's row stride is a multiple of 4 KiB they share one L1 set and evict each
// other: (16384, 64) took 20% longer.)
template <typename E>
ONEFLOW_CPU_DISPATCH void TransposeTile(const E* __restrict__ in, int64_t in_stride,
                                        E* __restrict__ out, int64_t out_stride, int64_t x_count,
                                        int64_t y_count) {
  constexpr int64_t kBlock = 32 / sizeof(E);
  alignas(32) E tile[kTileSize * kTileSize];
  const int64_t x_blocked = x_count / kBlock * kBlock, y_blocked = y_count / kBlock * kBlock;
  for (int64_t y = 0; y < y_blocked; y += kBlock) {
    for (int64_t x = 0; x < x_blocked; x += kBlock) {
      if constexpr (sizeof(E) == 4) {
        Transpose8x8(in + x * in_stride + y, in_stride, tile + y * kTileSize + x, kTileSize);
      } else {
        Transpose4x4(in + x * in_stride + y, in_stride, tile + y * kTileSize + x, kTileSize);
      }
    }
  }
  for (int64_t y = 0; y < y_blocked; ++y) {
    std::memcpy(out + y * out_stride, tile + y * kTileSize, x_blocked * sizeof(E));
    for (int64_t x = x_blocked; x < x_count; ++x) {
      out[y * out_stride + x] = in[x * in_stride + y];
    }
  }
  for (int64_t y = y_blocked; y < y_count; ++y) {
    for (int64_t x = 0; x < x_count; ++x) { out[y * out_stride + x] = in[x * in_stride + y]; }
  }
}

// A transpose reduced to its essentials: (2, 1, 3, 4) with perm (2, 3, 0, 1) becomes the 2-D
// transpose of (6, 4) with perm (1, 0).
struct SimplifiedTranspose {
  std::vector<int64_t> in_dims;
  std::vector<int64_t> perm;
};

SimplifiedTranspose Simplify(const Shape& in, const std::vector<int64_t>& perm) {
  // Drop size-1 axes, renumbering the others.
  std::vector<int64_t> kept_index(in.num_axes(), -1);
  std::vector<int64_t> kept_dims;
  for (int64_t axis = 0; axis < in.num_axes(); ++axis) {
    if (in.At(axis) != 1) {
      kept_index[axis] = static_cast<int64_t>(kept_dims.size());
      kept_dims.push_back(in.At(axis));
    }
  }
  std::vector<int64_t> kept_perm;
  for (int64_t axis : perm) {
    if (kept_index[axis] >= 0) { kept_perm.push_back(kept_index[axis]); }
  }
  // Output axes whose input axes follow each other form one group (listed in output order).
  std::vector<int64_t> group_first_axis;
  std::vector<int64_t> group_dim;
  for (size_t out_axis = 0; out_axis < kept_perm.size(); ++out_axis) {
    int64_t in_axis = kept_perm[out_axis];
    if (out_axis > 0 && in_axis == kept_perm[out_axis - 1] + 1) {
      group_dim.back() *= kept_dims[in_axis];
    } else {
      group_first_axis.push_back(in_axis);
      group_dim.push_back(kept_dims[in_axis]);
    }
  }
  // The groups in input order are the simplified input axes.
  std::vector<int64_t> in_order(group_dim.size());
  std::iota(in_order.begin(), in_order.end(), 0);
  std::sort(in_order.begin(), in_order.end(), [&](int64_t left, int64_t right) {
    return group_first_axis[left] < group_first_axis[right];
  });
  SimplifiedTranspose simplified;
  simplified.in_dims.resize(group_dim.size());
  simplified.perm.resize(group_dim.size());
  for (size_t in_axis = 0; in_axis < in_order.size(); ++in_axis) {
    simplified.in_dims[in_axis] = group_dim[in_order[in_axis]];
    simplified.perm[in_order[in_axis]] = static_cast<int64_t>(in_axis);
  }
  return simplified;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t axis = static_cast<int64_t>(dims.size()) - 2; axis >= 0; --axis) {
    strides[axis] = strides[axis + 1] * dims[axis + 1];
  }
  return strides;
}

// Element type E stands for every dtype of its size: a transpose only moves bytes.
template <typename E>
class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInitContext& ctx) {
    const Shape& in = ctx.Desc("in").shape;
    elem_count_ = in.elem_count();
    SimplifiedTranspose simplified = Simplify(in, Int64ListAttr(ctx.conf(), "perm"));
    int64_t num_axes = static_cast<int64_t>(simplified.perm.size());
    is_copy_ = num_axes <= 1;
    if (is_copy_) { return; }
    std::vector<int64_t> in_strides = RowMajorStrides(simplified.in_dims);
    for (int64_t axis : simplified.perm) {
      out_dims_.push_back(simplified.in_dims[axis]);
      in_strides_by_out_axis_.push_back(in_strides[axis]);
    }
    out_strides_ = RowMajorStrides(out_dims_);
    keeps_inner_axis_ = simplified.perm.back() == num_axes - 1;
    if (!keeps_inner_axis_) {
      // Out axis `swapped_axis_` is in's innermost axis; out's innermost axis has in-stride
      // in_strides_by_out_axis_.back(). Every other out axis is a batch axis.
      swapped_axis_ = std::find(simplified.perm.begin(), simplified.perm.end(), num_axes - 1) -
                      simplified.perm.begin();
    }
  }

  void Forward(KernelContext& ctx) override {
    if (elem_count_ == 0) { return; }
    const E* in = ctx.Input("in").data<E>();
    E* out = ctx.Output("out").mut_data<E>();
    if (is_copy_) {
      std::memcpy(out, in, elem_count_ * sizeof(E));
    } else if (keeps_inner_axis_) {
      CopyRows(ctx, in, out);
    } else {
      TransposeTiles(ctx, in, out);
    }
  }

 private:
  // Each output row (all out axes but the last) is one contiguous run of the input.
  void CopyRows(KernelContext& ctx, const E* in, E* out) const {
    int64_t outer_axes = static_cast<int64_t>(out_dims_.size()) - 1;
    int64_t row_size = out_dims_.back();
    int64_t row_count = elem_count_ / row_size;
    ParallelForRows(ctx, row_count, row_size, [=, this](int64_t begin, int64_t end) {
      std::vector<int64_t> index(outer_axes);
      int64_t in_offset = 0;
      int64_t rest = begin;
      for (int64_t axis = outer_axes - 1; axis >= 0; --axis) {
        index[axis] = rest % out_dims_[axis];
        rest /= out_dims_[axis];
        in_offset += index[axis] * in_strides_by_out_axis_[axis];
      }
      for (int64_t row = begin; row < end; ++row) {
        std::memcpy(out + row * row_size, in + in_offset, row_size * sizeof(E));
        // Advance the output index like an odometer, keeping in_offset in step.
        for (int64_t axis = outer_axes - 1; axis >= 0; --axis) {
          in_offset += in_strides_by_out_axis_[axis];
          if (++index[axis] < out_dims_[axis]) { break; }
          in_offset -= index[axis] * in_strides_by_out_axis_[axis];
          index[axis] = 0;
        }
      }
    });
  }

  // out[batch..., y, ..., x] = in[batch..., x, ..., y]: for each batch index, a 2-D transpose of
  // an (x_size, y_size) matrix, done in kTileSize square tiles so reads stay in cache. Work is
  // split over (batch, block of y) units.
  void TransposeTiles(KernelContext& ctx, const E* in, E* out) const {
    int64_t num_axes = static_cast<int64_t>(out_dims_.size());
    int64_t x_axis = num_axes - 1;
    int64_t x_size = out_dims_[x_axis];
    int64_t y_size = out_dims_[swapped_axis_];
    int64_t x_in_stride = in_strides_by_out_axis_[x_axis];
    int64_t y_out_stride = out_strides_[swapped_axis_];
    std::vector<int64_t> batch_axes;
    for (int64_t axis = 0; axis < num_axes; ++axis) {
      if (axis != x_axis && axis != swapped_axis_) { batch_axes.push_back(axis); }
    }
    int64_t y_blocks = (y_size + kTileSize - 1) / kTileSize;
    int64_t unit_count = elem_count_ / (x_size * y_size) * y_blocks;
    // A unit is one tile row: kTileSize rows of x_size elements.
    ParallelForRows(ctx, unit_count, kTileSize * x_size, [=, this](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        int64_t rest = unit / y_blocks;
        int64_t in_base = 0;
        int64_t out_base = 0;
        for (auto it = batch_axes.rbegin(); it != batch_axes.rend(); ++it) {
          int64_t index = rest % out_dims_[*it];
          rest /= out_dims_[*it];
          in_base += index * in_strides_by_out_axis_[*it];
          out_base += index * out_strides_[*it];
        }
        int64_t y_begin = (unit % y_blocks) * kTileSize;
        int64_t y_end = std::min(y_size, y_begin + kTileSize);
        for (int64_t x_begin = 0; x_begin < x_size; x_begin += kTileSize) {
          int64_t x_count = std::min(x_size - x_begin, kTileSize);
          if constexpr (sizeof(E) == 4 || sizeof(E) == 8) {
            TransposeTile<E>(in + in_base + x_begin * x_in_stride + y_begin, x_in_stride,
                             out + out_base + y_begin * y_out_stride + x_begin, y_out_stride,
                             x_count, y_end - y_begin);
            continue;
          }
          for (int64_t y = y_begin; y < y_end; ++y) {
            const E* source = in + in_base + x_begin * x_in_stride + y;
            E* target = out + out_base + y * y_out_stride + x_begin;
            for (int64_t x = 0; x < x_count; ++x) { target[x] = source[x * x_in_stride]; }
          }
        }
      }
    });
  }

  int64_t elem_count_ = 0;
  bool is_copy_ = false;
  bool keeps_inner_axis_ = false;
  int64_t swapped_axis_ = 0;
  std::vector<int64_t> out_dims_;                // simplified output dims
  std::vector<int64_t> out_strides_;             // row-major strides of out_dims_
  std::vector<int64_t> in_strides_by_out_axis_;  // in's stride along each output axis
};

}  // namespace

REGISTER_KERNEL("transpose", "cpu", kFloat, TransposeKernel<uint32_t>);
REGISTER_KERNEL("transpose", "cpu", kDouble, TransposeKernel<uint64_t>);
REGISTER_KERNEL("transpose", "cpu", kInt8, TransposeKernel<uint8_t>);
REGISTER_KERNEL("transpose", "cpu", kInt32, TransposeKernel<uint32_t>);
REGISTER_KERNEL("transpose", "cpu", kInt64, TransposeKernel<uint64_t>);
REGISTER_KERNEL("transpose", "cpu", kUInt8, TransposeKernel<uint8_t>);

}  // namespace oneflow

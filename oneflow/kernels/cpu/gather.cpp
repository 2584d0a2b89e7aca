// CPU gather and unsorted_segment_sum(_like).
// gather copies one contiguous row of `inner` elements per index (memcpy), rows split over the
// compute threads. Indices are validated against the logical size of the gather axis before
// any copy, so a bad index raises a ValueError naming it instead of reading out of bounds.
// When params are split on the gather axis (model parallel), a device owns rows
// [begin, begin + local) and writes zeros for indices outside them; the output is then a
// partial sum.
// unsorted_segment_sum adds rows into a zeroed output. Rows with the same segment collide, so
// the work is split by (outer row, block of columns): distinct units write distinct memory.

#include <algorithm>

#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/copy_row.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

// The first row a device holds of axis `axis` of `argument` (0 unless split there).
int64_t PartBegin(const KernelInitContext& ctx, const std::string& argument, int64_t axis) {
  const SbpParallel sbp = ctx.Sbp(argument);
  if (!sbp.has_split_parallel() || sbp.split_parallel().axis() != axis) { return 0; }
  return SliceOfPart(ctx.LogicalDesc(argument).shape, sbp, ctx.parallel_context().parallel_id(),
                     ctx.parallel_context().parallel_num())
      .begin[axis];
}

template <typename T>
class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInitContext& ctx) : op_name_(ctx.conf().name()) {
    int64_t axis = ctx.Attr<int64_t>("axis");
    const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
    GatherShape("gather", ctx.Desc("in").shape, ctx.Desc("indices").shape, &axis, batch_dims);
    geometry_ = MakeGatherGeometry(ctx.Desc("in").shape, ctx.Desc("indices").shape, axis,
                                   batch_dims);
    logical_axis_dim_ = ctx.LogicalDesc("in").shape.At(axis);
    part_begin_ = PartBegin(ctx, "in", axis);
  }

  void Forward(KernelContext& ctx) override {
    const Blob& indices = ctx.Input("indices");
    CheckIndicesInRange("gather (op '" + op_name_ + "')", "index", indices.data_type(),
                        indices.raw(), indices.elem_count(), logical_axis_dim_);
    const GatherGeometry g = geometry_;
    const T* in = ctx.Input("in").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const DataType index_type = indices.data_type();
    const void* index_data = indices.raw();
    const int64_t part_begin = part_begin_;
    const int64_t rows = g.outer * g.indices_per_batch;
    ParallelForRows(ctx, rows, g.inner, [=](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t outer = row / g.indices_per_batch;
        const int64_t position = row % g.indices_per_batch;
        const int64_t batch = outer / g.batch_outer;
        const int64_t local =
            IndexAt(index_type, index_data, batch * g.indices_per_batch + position) - part_begin;
        T* target = out + row * g.inner;
        if (local >= 0 && local < g.axis_dim) {
          CopyRow(target, in + (outer * g.axis_dim + local) * g.inner, g.inner * sizeof(T));
        } else {
          std::fill(target, target + g.inner, T(0));
        }
      }
    });
  }

 private:
  std::string op_name_;
  GatherGeometry geometry_;
  int64_t logical_axis_dim_ = 0;
  int64_t part_begin_ = 0;
};

// Columns per unit of the segment sum when there are few outer rows to split over.
constexpr int64_t kSegmentSumColumnBlock = 256;

template <typename T>
class UnsortedSegmentSumKernel final : public Kernel {
 public:
  explicit UnsortedSegmentSumKernel(const KernelInitContext& ctx)
      : op_type_(ctx.conf().op_type()), op_name_(ctx.conf().name()) {
    const Shape& out = ctx.Desc("out").shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += out.num_axes(); }
    const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
    // The segment sum has the geometry of the gather that reads `out` with segment_ids.
    geometry_ = MakeGatherGeometry(out, ctx.Desc("segment_ids").shape, axis, batch_dims);
    logical_segments_ = ctx.LogicalDesc("out").shape.At(axis);
    part_begin_ = PartBegin(ctx, "out", axis);
  }

  void Forward(KernelContext& ctx) override {
    const Blob& ids = ctx.Input("segment_ids");
    CheckIndicesInRange(op_type_ + " (op '" + op_name_ + "')", "segment id", ids.data_type(),
                        ids.raw(), ids.elem_count(), logical_segments_);
    const GatherGeometry g = geometry_;
    const T* data = ctx.Input("data").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const DataType index_type = ids.data_type();
    const void* index_data = ids.raw();
    const int64_t part_begin = part_begin_;
    const int64_t block = g.outer >= 16 ? g.inner : std::min(g.inner, kSegmentSumColumnBlock);
    const int64_t blocks = block == 0 ? 0 : (g.inner + block - 1) / block;
    const int64_t units = g.outer * blocks;
    const int64_t work_per_unit = std::max<int64_t>(1, g.indices_per_batch * block);
    ParallelForRows(ctx, units, work_per_unit, [=](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t outer = unit / blocks;
        const int64_t column = (unit % blocks) * block;
        const int64_t width = std::min(block, g.inner - column);
        const int64_t batch = outer / g.batch_outer;
        T* out_base = out + outer * g.axis_dim * g.inner + column;
        for (int64_t segment = 0; segment < g.axis_dim; ++segment) {
          std::fill(out_base + segment * g.inner, out_base + segment * g.inner + width, T(0));
        }
        const T* data_base = data + outer * g.indices_per_batch * g.inner + column;
        for (int64_t position = 0; position < g.indices_per_batch; ++position) {
          const int64_t local =
              IndexAt(index_type, index_data, batch * g.indices_per_batch + position) -
              part_begin;
          if (local < 0 || local >= g.axis_dim) { continue; }
          T* target = out_base + local * g.inner;
          const T* source = data_base + position * g.inner;
          for (int64_t i = 0; i < width; ++i) { target[i] += source[i]; }
        }
      }
    });
  }

 private:
  std::string op_type_;
  std::string op_name_;
  GatherGeometry geometry_;
  int64_t logical_segments_ = 0;
  int64_t part_begin_ = 0;
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("gather", GatherKernel);
REGISTER_CPU_ARITHMETIC_KERNELS("unsorted_segment_sum", UnsortedSegmentSumKernel);
REGISTER_CPU_ARITHMETIC_KERNELS("unsorted_segment_sum_like", UnsortedSegmentSumKernel);

}  // namespace oneflow

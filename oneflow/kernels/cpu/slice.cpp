// CPU slice, slice_update, concat and split_like. slice and slice_update are StridedCopy runs
// planned at kernel construction (whole rows move as memcpy; see strided_copy.h); concat streams
// its output row by row. They only move bytes, so one kernel per element size serves every dtype.

#include <algorithm>

#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/copy_row.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/strided_copy.h"

namespace oneflow {

namespace {

// The view of x that slice `spec` reads.
StridedView SliceView(const Shape& x, const SliceSpec& spec) {
  StridedView view;
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    view.offset += spec.start[axis] * strides[axis];
    // Clamped: a step longer than the axis takes one element, and its stride must not overflow.
    const int64_t reach = std::max<int64_t>(x.At(axis), 1);
    view.strides.push_back(strides[axis] * std::clamp(spec.step[axis], -reach, reach));
  }
  return view;
}

SliceSpec SliceSpecOf(const OperatorConf& conf) {
  return SliceSpec{Int64ListAttr(conf, "start"), Int64ListAttr(conf, "stop"),
                   Int64ListAttr(conf, "step")};
}

// On many devices the kernel sees its physical part; an axis split there is kept whole by
// the slice (the only splittable axes), so the slice of that axis is the whole part.
SliceSpec PhysicalSpec(const KernelInitContext& ctx, const Shape& x) {
  SliceSpec spec = SliceSpecOf(ctx.conf());
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    if (spec.step[axis] == 1 && spec.start[axis] == 0 &&
        spec.stop[axis] == ctx.LogicalDesc("x").shape.At(axis)) {
      spec.stop[axis] = x.At(axis);
    }
  }
  return ClampToRunShape(spec, ctx.Desc("x"));
}

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInitContext& ctx) {
    const BlobDesc& x = ctx.Desc("x");
    SliceSpec spec = PhysicalSpec(ctx, x.shape);
    copy_ = StridedCopy(SizeOf(x.data_type), SlicedDims("slice", x.shape, spec),
                        SliceView(x.shape, spec), ContiguousView(ctx.Desc("y").shape.dims()));
  }
  void Forward(KernelContext& ctx) override {
    copy_.Run(ctx, ctx.Input("x").raw(), ctx.Output("y").mut_raw());
  }

 private:
  StridedCopy copy_;
};

class SliceUpdateKernel final : public Kernel {
 public:
  explicit SliceUpdateKernel(const KernelInitContext& ctx) {
    const BlobDesc& x = ctx.Desc("x");
    SliceSpec spec = PhysicalSpec(ctx, x.shape);
    bytes_ = x.byte_size();
    copy_ = StridedCopy(SizeOf(x.data_type), SlicedDims("slice_update", x.shape, spec),
                        ContiguousView(ctx.Desc("update").shape.dims()),
                        SliceView(x.shape, spec));
  }
  void Forward(KernelContext& ctx) override {
    void* y = ctx.Output("y").mut_raw();
    ParallelMemcpy(ctx, y, ctx.Input("x").raw(), bytes_);
    copy_.Run(ctx, ctx.Input("update").raw(), y);
  }

 private:
  int64_t bytes_ = 0;
  StridedCopy copy_;
};

// Input i fills out[..., offset_i : offset_i + dim_i, ...]: for each outer row (the axes
// before `axis`), one contiguous run of each input, written in order so that the output is
// streamed once front to back. Outer rows split over the compute threads; with a single outer
// row (axis 0) each input is one large memcpy, itself split into chunks.
class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInitContext& ctx) {
    const Shape& out = ctx.Desc("out").shape;
    const int64_t axis =
        NormalizeAxis("concat", "axis", ctx.Attr<int64_t>("axis"), out.num_axes());
    const int64_t element = SizeOf(ctx.Desc("out").data_type);
    outer_ = out.Count(0, axis);
    out_run_elements_ = out.Count(axis, out.num_axes());
    out_run_bytes_ = out_run_elements_ * element;
    for (int64_t index = 0; ctx.Has("in", index); ++index) {
      const Shape& in = ctx.Desc("in", index).shape;
      run_bytes_.push_back(in.Count(axis, in.num_axes()) * element);
    }
  }

  void Forward(KernelContext& ctx) override {
    char* out = static_cast<char*>(ctx.Output("out").mut_raw());
    std::vector<const char*> inputs(run_bytes_.size());
    for (size_t index = 0; index < inputs.size(); ++index) {
      inputs[index] = static_cast<const char*>(ctx.Input("in", index).raw());
    }
    if (outer_ == 1) {
      int64_t offset = 0;
      for (size_t index = 0; index < inputs.size(); ++index) {
        ParallelMemcpy(ctx, out + offset, inputs[index], run_bytes_[index]);
        offset += run_bytes_[index];
      }
      return;
    }
    const std::vector<int64_t>& runs = run_bytes_;
    const int64_t out_run = out_run_bytes_;
    ParallelForRows(ctx, outer_, out_run_elements_, [&, out](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        char* target = out + row * out_run;
        for (size_t index = 0; index < inputs.size(); ++index) {
          CopyRow(target, inputs[index] + row * runs[index], runs[index]);
          target += runs[index];
        }
      }
    });
  }

 private:
  int64_t outer_ = 1;
  int64_t out_run_elements_ = 0;
  int64_t out_run_bytes_ = 0;
  std::vector<int64_t> run_bytes_;  // bytes each input contributes per outer row
};

// Output i is in[..., offset_i : offset_i + dim_i, ...]: one StridedCopy per output.
class SplitLikeKernel final : public Kernel {
 public:
  explicit SplitLikeKernel(const KernelInitContext& ctx) {
    const Shape& in = ctx.Desc("in").shape;
    const int64_t axis =
        NormalizeAxis("split_like", "axis", ctx.Attr<int64_t>("axis"), in.num_axes());
    const std::vector<int64_t> strides = ContiguousStrides(in.dims());
    const int64_t element = SizeOf(ctx.Desc("in").data_type);
    int64_t offset = 0;
    for (int64_t index = 0; ctx.Has("out", index); ++index) {
      const Shape& out = ctx.Desc("out", index).shape;
      copies_.emplace_back(element, out.dims(), StridedView{offset * strides[axis], strides},
                           ContiguousView(out.dims()));
      offset += out.At(axis);
    }
  }
  void Forward(KernelContext& ctx) override {
    for (size_t index = 0; index < copies_.size(); ++index) {
      copies_[index].Run(ctx, ctx.Input("in").raw(), ctx.Output("out", index).mut_raw());
    }
  }

 private:
  std::vector<StridedCopy> copies_;
};

}  // namespace

#define OF_REGISTER_MOVE_KERNEL(op_type, Kernel)   \
  REGISTER_KERNEL(op_type, "cpu", kFloat, Kernel);  \
  REGISTER_KERNEL(op_type, "cpu", kDouble, Kernel); \
  REGISTER_KERNEL(op_type, "cpu", kInt8, Kernel);   \
  REGISTER_KERNEL(op_type, "cpu", kInt32, Kernel);  \
  REGISTER_KERNEL(op_type, "cpu", kInt64, Kernel);  \
  REGISTER_KERNEL(op_type, "cpu", kUInt8, Kernel)

OF_REGISTER_MOVE_KERNEL("slice", SliceKernel);
OF_REGISTER_MOVE_KERNEL("slice_update", SliceUpdateKernel);
OF_REGISTER_MOVE_KERNEL("concat", ConcatKernel);
OF_REGISTER_MOVE_KERNEL("split_like", SplitLikeKernel);

}  // namespace oneflow

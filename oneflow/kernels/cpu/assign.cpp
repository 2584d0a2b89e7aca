// CPU kernels of "assign" (copies value's bytes over ref's part, same physical shape per device)
// and "logical_slice_assign" (copies the part of value that lands in this device's part of ref,
// one strided copy planned at construction).
#include <algorithm>
#include <cstring>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/strided_copy.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace {

class AssignKernel final : public Kernel {
 public:
  explicit AssignKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const Blob& value = ctx.Input("value");
    Blob& ref = ctx.MutableInput("ref");
    if (value.raw() != ref.raw() && value.byte_size() > 0) {
      std::memcpy(ref.mut_raw(), value.raw(), value.byte_size());
    }
  }
};

class LogicalSliceAssignKernel final : public Kernel {
 public:
  explicit LogicalSliceAssignKernel(const KernelInitContext& ctx) {
    const Shape& logical = ctx.LogicalDesc("ref").shape;
    const TensorSlice part =
        SliceOfPart(logical, ctx.Sbp("ref"), ctx.parallel_context().parallel_id(),
                    ctx.parallel_context().parallel_num());
    const auto start = ctx.Attr<std::vector<int64_t>>("start");
    const auto step = ctx.Attr<std::vector<int64_t>>("step");
    const std::vector<int64_t> value_dims = ctx.Desc("value").shape.dims();
    const std::vector<int64_t> value_strides = ContiguousStrides(value_dims);
    const std::vector<int64_t> ref_strides = ContiguousStrides(part.extent);
    // Per axis, the value indices i whose position start + i * step lies in this part.
    std::vector<int64_t> dims;
    StridedView src, dst;
    for (int64_t axis = 0; axis < logical.num_axes(); ++axis) {
      const int64_t begin = part.begin[axis], end = begin + part.extent[axis];
      const int64_t first = std::max<int64_t>(0, CeilDiv(begin - start[axis], step[axis]));
      const int64_t last = std::min(value_dims[axis], CeilDiv(end - start[axis], step[axis]));
      dims.push_back(std::max<int64_t>(0, last - first));
      src.offset += first * value_strides[axis];
      src.strides.push_back(value_strides[axis]);
      dst.offset += (start[axis] + first * step[axis] - begin) * ref_strides[axis];
      dst.strides.push_back(ref_strides[axis] * step[axis]);
    }
    empty_ = std::find(dims.begin(), dims.end(), 0) != dims.end();
    if (!empty_) { copy_ = StridedCopy(SizeOf(ctx.Desc("ref").data_type), dims, src, dst); }
  }

  void Forward(KernelContext& ctx) override {
    if (empty_) { return; }
    copy_.Run(ctx, ctx.Input("value").raw(), ctx.MutableInput("ref").mut_raw());
  }

 private:
  // ceil(a / b) for b > 0 and any sign of a.
  static int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

  StridedCopy copy_;
  bool empty_ = false;
};

REGISTER_KERNEL("assign", "cpu", kFloat, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kDouble, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt8, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt32, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt64, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kUInt8, AssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kFloat, LogicalSliceAssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kDouble, LogicalSliceAssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kInt8, LogicalSliceAssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kInt32, LogicalSliceAssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kInt64, LogicalSliceAssignKernel);
REGISTER_KERNEL("logical_slice_assign", "cpu", kUInt8, LogicalSliceAssignKernel);

}  // namespace
}  // namespace oneflow

// CPU kernel of slice_boxing (ops/slice_boxing.cpp): assembles one box of a logical blob from
// boxes held by other registers (possibly of other devices of this process).
#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"

namespace oneflow {
namespace {

TensorSlice SliceAt(const std::vector<int64_t>& values, int64_t index, int64_t num_axes) {
  TensorSlice slice;
  auto begin = values.begin() + 2 * num_axes * index;
  slice.begin.assign(begin, begin + num_axes);
  slice.extent.assign(begin + num_axes, begin + 2 * num_axes);
  return slice;
}

class SliceBoxingKernel final : public Kernel {
 public:
  explicit SliceBoxingKernel(const KernelInitContext& ctx)
      : sum_(ctx.Attr<bool>("sum")), zero_fill_(ctx.Attr<bool>("zero_fill")) {
    const int64_t num_axes = ctx.Attr<Shape>("logical_shape").num_axes();
    out_slice_ = SliceAt(ctx.Attr<std::vector<int64_t>>("out_slice"), 0, num_axes);
    const std::vector<int64_t> in_slices = ctx.Attr<std::vector<int64_t>>("in_slices");
    auto in = ctx.conf().input().find("in");
    const int64_t inputs = in == ctx.conf().input().end() ? 0 : in->second.value_size();
    OF_CHECK(static_cast<int64_t>(in_slices.size()) == 2 * num_axes * inputs)
        << "slice_boxing '" << ctx.conf().name() << "': " << in_slices.size()
        << " slice values for " << inputs << " inputs of rank " << num_axes;
    for (int64_t i = 0; i < inputs; ++i) {
      TensorSlice slice = SliceAt(in_slices, i, num_axes);
      in_slices_.push_back(slice);
      regions_.push_back(Intersect(slice, out_slice_));
    }
  }

  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    if (zero_fill_ || (sum_ && in_slices_.empty())) {
      std::memset(out.mut_raw(), 0, out.byte_size());
    }
    for (size_t i = 0; i < in_slices_.size(); ++i) {
      const Blob& in = ctx.Input("in", static_cast<int64_t>(i));
      const bool accumulate = sum_ && (zero_fill_ || i > 0);
      CopyTensorSlice(out.data_type(), regions_[i], in.raw(), in_slices_[i], out.mut_raw(),
                      out_slice_, accumulate);
    }
  }

 private:
  bool sum_;
  bool zero_fill_;
  TensorSlice out_slice_;
  std::vector<TensorSlice> in_slices_;
  std::vector<TensorSlice> regions_;
};

REGISTER_KERNEL("slice_boxing", "cpu", kFloat, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kDouble, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt8, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt32, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt64, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kUInt8, SliceBoxingKernel);

}  // namespace
}  // namespace oneflow

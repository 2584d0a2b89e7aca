// CPU kernel of slice_boxing (ops/slice_boxing.cpp): assembles one box of a logical blob from
// boxes held by other registers (possibly of other devices of this process).
#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/kernels/slice_boxing_attrs.h"

namespace oneflow {
namespace {

class SliceBoxingKernel final : public Kernel {
 public:
  explicit SliceBoxingKernel(const KernelInitContext& ctx) : attrs_(ReadSliceBoxingAttrs(ctx)) {
    // Copies move bytes; only sums need a type to add in, and float16 has none on the host.
    OF_CHECK(!attrs_.sum || ctx.Attr<DataType>("dtype") != kFloat16)
        << "slice_boxing '" << ctx.conf().name()
        << "': partial sums of float16 blobs cannot be added on the host";
  }

  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    if (attrs_.zero_fill || (attrs_.sum && attrs_.in_slices.empty())) {
      std::memset(out.mut_raw(), 0, out.byte_size());
    }
    for (size_t i = 0; i < attrs_.in_slices.size(); ++i) {
      const Blob& in = ctx.Input("in", static_cast<int64_t>(i));
      const bool accumulate = attrs_.sum && (attrs_.zero_fill || i > 0);
      CopyTensorSlice(out.data_type(), attrs_.regions[i], in.raw(), attrs_.in_slices[i],
                      out.mut_raw(), attrs_.out_slice, accumulate);
    }
  }

 private:
  SliceBoxingAttrs attrs_;
};

REGISTER_KERNEL("slice_boxing", "cpu", kFloat, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kDouble, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt8, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt32, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kInt64, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kUInt8, SliceBoxingKernel);
REGISTER_KERNEL("slice_boxing", "cpu", kFloat16, SliceBoxingKernel);  // copies, no sums

}  // namespace
}  // namespace oneflow

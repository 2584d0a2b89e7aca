// GPU kernel of slice_boxing (ops/slice_boxing.cpp) for the local conversions of GPU blobs on the
// same GPUs (compiler/boxing/reshard.h): B -> S takes this GPU's slice of its own copy, B -> P
// and S -> P place the value among zeros. Every input is on this GPU; the boxes move with the box
// copy kernel of the NCCL collectives (box_copy.h), so any dtype, float16 included. Sums
// (partial values from several devices) are host boxing's: the compiler never makes them here.
#ifdef ONEFLOW_WITH_CUDA

#include <cuda_runtime_api.h>

#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/box_copy.h"
#include "oneflow/kernels/slice_boxing_attrs.h"

namespace oneflow {
namespace {

class SliceBoxingGpuKernel final : public Kernel {
 public:
  explicit SliceBoxingGpuKernel(const KernelInitContext& ctx)
      : attrs_(ReadSliceBoxingAttrs(ctx)), elem_size_(SizeOf(ctx.Attr<DataType>("dtype"))) {
    OF_CHECK(!attrs_.sum) << "slice_boxing '" << ctx.conf().name()
                          << "': sums of partial values are not done on a GPU";
    OF_CHECK(attrs_.out_slice.num_axes() <= kMaxBoxCopyKernelAxes)
        << "slice_boxing '" << ctx.conf().name() << "' on a GPU: rank "
        << attrs_.out_slice.num_axes() << " is more than " << kMaxBoxCopyKernelAxes;
  }

  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    Blob& out = ctx.Output("out");
    if (attrs_.zero_fill && out.byte_size() > 0) {
      OF_CUDA_CHECK(cudaMemsetAsync(out.mut_raw(), 0, out.byte_size(), stream));
    }
    for (size_t i = 0; i < attrs_.in_slices.size(); ++i) {
      const TensorSlice& region = attrs_.regions[i];
      if (region.empty()) { continue; }
      const TensorSlice& in_slice = attrs_.in_slices[i];
      const TensorSlice& out_slice = attrs_.out_slice;
      // Box coordinates within each buffer; a 0-d blob is one element of a 1-d box.
      std::vector<int64_t> extent = region.extent, src_dims = in_slice.extent,
                           dst_dims = out_slice.extent, src_begin, dst_begin;
      for (int64_t axis = 0; axis < region.num_axes(); ++axis) {
        src_begin.push_back(region.begin[axis] - in_slice.begin[axis]);
        dst_begin.push_back(region.begin[axis] - out_slice.begin[axis]);
      }
      if (extent.empty()) {
        extent = src_dims = dst_dims = {1};
        src_begin = dst_begin = {0};
      }
      LaunchBoxCopy(elem_size_, static_cast<int64_t>(extent.size()), extent.data(),
                    ctx.Input("in", static_cast<int64_t>(i)).raw(), src_dims.data(),
                    src_begin.data(), out.mut_raw(), dst_dims.data(), dst_begin.data(), stream);
    }
  }

 private:
  SliceBoxingAttrs attrs_;
  int64_t elem_size_;
};

REGISTER_KERNEL("slice_boxing", "gpu", kFloat, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kDouble, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kFloat16, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kInt8, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kInt32, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kInt64, SliceBoxingGpuKernel);
REGISTER_KERNEL("slice_boxing", "gpu", kUInt8, SliceBoxingGpuKernel);

}  // namespace
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA

// GPU kernel of slice_boxing (ops/slice_boxing.cpp) for the local conversions of GPU blobs on the
// same GPUs (compiler/boxing/reshard.h): B -> S takes this GPU's slice of its own copy, B -> P
// and S -> P place the value among zeros. Every input is on this GPU; the boxes move with the box
// copy kernel of the NCCL collectives (box_copy.h), so any dtype, float16 included. Sums
// (partial values from several devices) are host boxing's: the compiler never makes them here.
#ifdef ONEFLOW_WITH_CUDA

#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

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
      : zero_fill_(ctx.Attr<bool>("zero_fill")), elem_size_(SizeOf(ctx.Attr<DataType>("dtype"))) {
    const SliceBoxingAttrs attrs = ReadSliceBoxingAttrs(ctx);
    OF_CHECK(!attrs.sum) << "slice_boxing '" << ctx.conf().name()
                         << "': sums of partial values are not done on a GPU";
    OF_CHECK(attrs.out_slice.num_axes() <= kMaxBoxCopyKernelAxes)
        << "slice_boxing '" << ctx.conf().name() << "' on a GPU: rank "
        << attrs.out_slice.num_axes() << " is more than " << kMaxBoxCopyKernelAxes;
    // Each input's box in the coordinates of its buffer and of the output, once.
    for (size_t i = 0; i < attrs.in_slices.size(); ++i) {
      const TensorSlice& region = attrs.regions[i];
      if (region.empty()) { continue; }
      const TensorSlice& in_slice = attrs.in_slices[i];
      Box box{
          static_cast<int64_t>(i), region.extent, in_slice.extent, {}, attrs.out_slice.extent, {}};
      for (int64_t axis = 0; axis < region.num_axes(); ++axis) {
        box.src_begin.push_back(region.begin[axis] - in_slice.begin[axis]);
        box.dst_begin.push_back(region.begin[axis] - attrs.out_slice.begin[axis]);
      }
      if (box.extent.empty()) {  // a 0-d blob: one element of a 1-d box
        box.extent = box.src_dims = box.dst_dims = {1};
        box.src_begin = box.dst_begin = {0};
      }
      boxes_.push_back(std::move(box));
    }
  }

  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    Blob& out = ctx.Output("out");
    if (zero_fill_ && out.byte_size() > 0) {
      OF_CUDA_CHECK(cudaMemsetAsync(out.mut_raw(), 0, out.byte_size(), stream));
    }
    for (const Box& box : boxes_) {
      LaunchBoxCopy(elem_size_, static_cast<int64_t>(box.extent.size()), box.extent.data(),
                    ctx.Input("in", box.input).raw(), box.src_dims.data(), box.src_begin.data(),
                    out.mut_raw(), box.dst_dims.data(), box.dst_begin.data(), stream);
    }
  }

 private:
  struct Box {
    int64_t input;  // index of the "in" blob
    std::vector<int64_t> extent, src_dims, src_begin, dst_dims, dst_begin;
  };
  bool zero_fill_;
  int64_t elem_size_;
  std::vector<Box> boxes_;
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

// GPU transpose and one_hot, as the CPU kernels (cpu/transpose.cpp, cpu/one_hot_and_clip.cpp).
//
// transpose: one thread per output element computes its input offset from the output
// coordinates and the permuted input strides (size-1 axes dropped first, at most 8 axes left).
// It moves bytes, so one kernel per element size serves every dtype.
//
// one_hot: one thread per output element. An index outside [0, depth) raises a ValueError, as on
// the CPU, through the device's error report (index_check.h), once the work has completed.

#include <cuda_fp16.h>

#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/index_check.h"

namespace oneflow {
namespace cuda {

namespace {

constexpr int kMaxTransposeDims = 8;

struct TransposeIndex {
  int num_dims = 0;
  int64_t out_dims[kMaxTransposeDims];
  int64_t in_strides[kMaxTransposeDims];  // input stride of each output axis
};

template <typename E>
__global__ void TransposeKernel(int64_t n, TransposeIndex index, const E* in, E* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t remaining = i;
    int64_t offset = 0;
    for (int d = index.num_dims - 1; d >= 0; --d) {
      offset += (remaining % index.out_dims[d]) * index.in_strides[d];
      remaining /= index.out_dims[d];
    }
    out[i] = in[offset];
  }
}

// E: an unsigned integer of the element's size.
template <typename E>
class TransposeGpuKernel final : public Kernel {
 public:
  explicit TransposeGpuKernel(const KernelInitContext& ctx) {
    const Shape& in = ctx.Desc("in").shape;
    const std::vector<int64_t> perm = Int64ListAttr(ctx.conf(), "perm");
    elem_count_ = in.elem_count();
    std::vector<int64_t> strides(in.num_axes(), 1);
    for (int64_t axis = in.num_axes() - 2; axis >= 0; --axis) {
      strides[axis] = strides[axis + 1] * in.At(axis + 1);
    }
    for (int64_t axis : perm) {
      if (in.At(axis) == 1) { continue; }
      OF_CHECK(index_.num_dims < kMaxTransposeDims)
          << "GPU transpose of " << in.ToString() << ": more than " << kMaxTransposeDims
          << " axes of size > 1";
      index_.out_dims[index_.num_dims] = in.At(axis);
      index_.in_strides[index_.num_dims] = strides[axis];
      ++index_.num_dims;
    }
  }
  void Forward(KernelContext& ctx) override {
    if (elem_count_ == 0) { return; }
    TransposeKernel<E><<<BlockCount(elem_count_), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        elem_count_, index_, ctx.Input("in").data<E>(), ctx.Output("out").mut_data<E>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t elem_count_ = 0;
  TransposeIndex index_;
};

template <typename T, typename Index>
__global__ void OneHotKernel(int64_t n, int64_t depth, const Index* indices, T on, T off, T* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<int64_t>(indices[i / depth]) == i % depth ? on : off;
  }
}

template <typename T>
T OnOffValue(const KernelInitContext& ctx, const char* floating, const char* integral) {
  if constexpr (std::is_same_v<T, half>) {
    return __float2half(static_cast<float>(ctx.Attr<double>(floating)));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(ctx.Attr<double>(floating));
  } else {
    return static_cast<T>(ctx.Attr<int64_t>(integral));
  }
}

template <typename T>
class OneHotGpuKernel final : public Kernel {
 public:
  explicit OneHotGpuKernel(const KernelInitContext& ctx)
      : depth_(ctx.Attr<int64_t>("depth")),
        on_(OnOffValue<T>(ctx, "floating_on_value", "integer_on_value")),
        off_(OnOffValue<T>(ctx, "floating_off_value", "integer_off_value")),
        check_("one_hot (op '" + ctx.conf().name() + "'): index", SingleLimit(depth_)) {}
  void Forward(KernelContext& ctx) override {
    const Blob& indices = ctx.Input("indices");
    const int64_t n = indices.elem_count() * depth_;
    if (n == 0) { return; }
    check_.Enqueue(ctx.cuda_device(), indices);
    T* out = ctx.Output("out").mut_data<T>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    if (indices.data_type() == kInt32) {
      OneHotKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(n, depth_, indices.data<int32_t>(),
                                                                on_, off_, out);
    } else {
      OneHotKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(n, depth_, indices.data<int64_t>(),
                                                                on_, off_, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t depth_;
  T on_, off_;
  DeviceIndexCheck check_;
};

}  // namespace

REGISTER_KERNEL("transpose", "gpu", kFloat, TransposeGpuKernel<uint32_t>);
REGISTER_KERNEL("transpose", "gpu", kDouble, TransposeGpuKernel<uint64_t>);
REGISTER_KERNEL("transpose", "gpu", kFloat16, TransposeGpuKernel<uint16_t>);
REGISTER_KERNEL("transpose", "gpu", kInt8, TransposeGpuKernel<uint8_t>);
REGISTER_KERNEL("transpose", "gpu", kInt32, TransposeGpuKernel<uint32_t>);
REGISTER_KERNEL("transpose", "gpu", kInt64, TransposeGpuKernel<uint64_t>);
REGISTER_KERNEL("transpose", "gpu", kUInt8, TransposeGpuKernel<uint8_t>);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("one_hot", OneHotGpuKernel);

}  // namespace cuda
}  // namespace oneflow

#include <algorithm>
#include <cstdint>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/kernels/cuda/box_copy.h"

namespace oneflow {

namespace {

constexpr int kBlockSize = 256;
constexpr int64_t kMaxBlocks = 8192;  // the grid-stride loop covers the rest

// By value into the kernel's parameters: the box and the strides (in elements) of both tensors.
struct BoxCopyParams {
  int num_axes = 0;
  int64_t count = 0;
  int64_t extent[kMaxBoxCopyKernelAxes] = {};
  int64_t src_stride[kMaxBoxCopyKernelAxes] = {};
  int64_t dst_stride[kMaxBoxCopyKernelAxes] = {};
};

// `src` and `dst` point at the box's corner in each tensor.
template <typename T>
__global__ void BoxCopyKernel(const T* __restrict__ src, T* __restrict__ dst, BoxCopyParams p) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count;
       i += step) {
    int64_t rest = i;
    int64_t from = 0;
    int64_t to = 0;
#pragma unroll
    for (int axis = kMaxBoxCopyKernelAxes - 1; axis >= 0; --axis) {
      if (axis < p.num_axes) {
        const int64_t index = rest % p.extent[axis];
        rest /= p.extent[axis];
        from += index * p.src_stride[axis];
        to += index * p.dst_stride[axis];
      }
    }
    dst[to] = src[from];
  }
}

template <typename T>
void Launch(const void* src, void* dst, const BoxCopyParams& params, cudaStream_t stream) {
  const int64_t blocks =
      std::min(kMaxBlocks, (params.count + kBlockSize - 1) / static_cast<int64_t>(kBlockSize));
  BoxCopyKernel<T><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream>>>(
      static_cast<const T*>(src), static_cast<T*>(dst), params);
  OF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void LaunchBoxCopy(int64_t elem_size, int64_t num_axes, const int64_t* extent, const void* src,
                   const int64_t* src_dims, const int64_t* src_begin, void* dst,
                   const int64_t* dst_dims, const int64_t* dst_begin, cudaStream_t stream) {
  OF_CHECK(num_axes >= 1 && num_axes <= kMaxBoxCopyKernelAxes)
      << "box copy of " << num_axes << " axes (1 to " << kMaxBoxCopyKernelAxes << ")";
  BoxCopyParams params;
  params.num_axes = static_cast<int>(num_axes);
  params.count = 1;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  int64_t src_stride = 1;
  int64_t dst_stride = 1;
  for (int64_t axis = num_axes - 1; axis >= 0; --axis) {
    params.extent[axis] = extent[axis];
    params.src_stride[axis] = src_stride;
    params.dst_stride[axis] = dst_stride;
    params.count *= extent[axis];
    src_offset += src_begin[axis] * src_stride;
    dst_offset += dst_begin[axis] * dst_stride;
    src_stride *= src_dims[axis];
    dst_stride *= dst_dims[axis];
  }
  if (params.count == 0) { return; }
  const char* from = static_cast<const char*>(src) + src_offset * elem_size;
  char* to = static_cast<char*>(dst) + dst_offset * elem_size;
  switch (elem_size) {
    case 1:
      return Launch<uint8_t>(from, to, params, stream);
    case 2:
      return Launch<uint16_t>(from, to, params, stream);
    case 4:
      return Launch<uint32_t>(from, to, params, stream);
    case 8:
      return Launch<uint64_t>(from, to, params, stream);
    default:
      OF_CHECK(false) << "box copy of " << elem_size << "-byte elements (1, 2, 4 or 8)";
  }
}

}  // namespace oneflow

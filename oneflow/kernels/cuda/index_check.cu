#include "oneflow/kernels/cuda/index_check.h"

#include <utility>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/blob.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

template <typename Index>
__global__ void CheckIndicesKernel(int64_t n, IndexLimits limits, const Index* indices,
                                   DeviceErrorReport* report, int32_t site) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t value = static_cast<int64_t>(indices[i]);
    const int64_t limit = limits.limits[limits.period == 1 ? 0 : i % limits.period];
    if ((value < 0 || value >= limit) && atomicCAS(&report->site, 0, site) == 0) {
      // Claimed: nothing else writes the rest, and the host reads it after the kernel ends.
      report->value = value;
      report->position = i;
      report->limit = limit;
    }
  }
}

}  // namespace

IndexLimits SingleLimit(int64_t limit) {
  IndexLimits limits;
  limits.limits[0] = limit;
  return limits;
}

DeviceIndexCheck::DeviceIndexCheck(std::string prefix, IndexLimits limits)
    : prefix_(std::move(prefix)), limits_(limits) {
  OF_CHECK(limits_.period >= 1 && limits_.period <= kMaxIndexLimits)
      << prefix_ << ": an index check takes 1 to " << kMaxIndexLimits << " limits, not "
      << limits_.period;
}

void DeviceIndexCheck::Enqueue(CudaDeviceContext& device, const Blob& indices) {
  const int64_t n = indices.elem_count();
  if (n == 0) { return; }
  if (site_ == 0) { site_ = device.AddErrorSite(prefix_); }
  cudaStream_t stream = device.cuda_stream();
  DeviceErrorReport* report = device.error_report();
  if (indices.data_type() == kInt32) {
    CheckIndicesKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(
        n, limits_, indices.data<int32_t>(), report, site_);
  } else {
    OF_CHECK(indices.data_type() == kInt64)
        << prefix_ << ": indices must be int32 or int64, got " << DataTypeName(indices.data_type());
    CheckIndicesKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(
        n, limits_, indices.data<int64_t>(), report, site_);
  }
  OF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuda
}  // namespace oneflow

#include "oneflow/device/memory_copy.h"

#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"

namespace oneflow {

void CopyMemory(void* dst, const MemoryCase& dst_case, const void* src, const MemoryCase& src_case,
                int64_t bytes) {
  if (bytes == 0) { return; }
  const bool dst_device = dst_case.kind() == kDeviceMemory;
  const bool src_device = src_case.kind() == kDeviceMemory;
  if (!dst_device && !src_device) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
#ifdef ONEFLOW_WITH_CUDA
  OF_CUDA_CHECK(
      cudaSetDevice(static_cast<int>(dst_device ? dst_case.device_id() : src_case.device_id())));
  // Unified addressing: the runtime tells the direction from the pointers.
  OF_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault));
#else
  OF_CHECK(false) << "a copy of " << bytes
                  << " bytes to or from GPU memory in a build without CUDA";
#endif
}

}  // namespace oneflow

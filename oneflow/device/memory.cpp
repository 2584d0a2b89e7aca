#include "oneflow/device/memory.h"

#include <cstdio>
#include <cstdlib>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"
#include "oneflow/device/cuda_info.h"

#ifdef ONEFLOW_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace oneflow {

namespace {

Error CannotAllocate(const MemoryCase& memory_case, int64_t bytes, const std::string& what) {
  Error error(ErrorKind::kRuntime);
  error << "cannot allocate " << bytes << " bytes of " << MemoryCaseToString(memory_case)
        << " memory for " << what;
  return error;
}

Error OutOfMemory(const MemoryCase& memory_case, int64_t bytes, const std::string& what) {
  Error error(ErrorKind::kRuntime);
  error << "out of memory: cannot allocate " << bytes << " bytes of "
        << MemoryCaseToString(memory_case) << " memory for " << what;
  return error;
}

std::shared_ptr<void> AllocateHost(const MemoryCase& memory_case, int64_t bytes,
                                   const std::string& what) {
  // std::aligned_alloc wants a multiple of the alignment.
  const int64_t rounded = AlignedSize(bytes);
  void* memory = std::aligned_alloc(kMemoryAlignment, static_cast<size_t>(rounded));
  if (memory == nullptr) { throw OutOfMemory(memory_case, bytes, what); }
  return std::shared_ptr<void>(memory, std::free);
}

#ifdef ONEFLOW_WITH_CUDA

// For deleters, which must not throw.
void LogCudaFailure(const char* what, int64_t device_id, cudaError_t status) {
  // At process exit the CUDA runtime may be unloaded before the last holder lets go.
  if (status == cudaSuccess || status == cudaErrorCudartUnloading) { return; }
  std::fprintf(stderr, "oneflow: %s on gpu %lld failed: %s\n", what,
               static_cast<long long>(device_id), cudaGetErrorString(status));
}

// Makes the GPU of `memory_case` current on the calling thread (which is then where the memory
// is allocated), or throws when this process cannot see that GPU.
void SelectDevice(const MemoryCase& memory_case, int64_t bytes, const std::string& what) {
  const CudaInfo& info = GetCudaInfo();
  const int64_t device_id = memory_case.device_id();
  if (device_id < 0 || device_id >= info.device_count) {
    Error error = CannotAllocate(memory_case, bytes, what);
    error << ": this process sees " << info.device_count << " GPU(s)";
    if (!info.reason.empty()) { error << " (" << info.reason << ")"; }
    throw error;
  }
  const cudaError_t status = cudaSetDevice(static_cast<int>(device_id));
  if (status != cudaSuccess) {
    throw CannotAllocate(memory_case, bytes, what)
        << ": cudaSetDevice failed: " << cudaGetErrorString(status);
  }
}

// Throws for a failed cudaMalloc/cudaMallocHost.
void CheckAllocation(cudaError_t status, const MemoryCase& memory_case, int64_t bytes,
                     const std::string& what) {
  if (status == cudaSuccess) { return; }
  cudaGetLastError();  // an allocation failure is not sticky: clear it for later checks
  if (status == cudaErrorMemoryAllocation) { throw OutOfMemory(memory_case, bytes, what); }
  throw CannotAllocate(memory_case, bytes, what) << ": " << cudaGetErrorString(status);
}

std::shared_ptr<void> AllocatePinnedHost(const MemoryCase& memory_case, int64_t bytes,
                                         const std::string& what) {
  // Pinning only speeds up copies to and from a GPU: without one, pageable memory does the same.
  if (GetCudaInfo().device_count == 0) { return AllocateHost(memory_case, bytes, what); }
  SelectDevice(memory_case, bytes, what);
  void* memory = nullptr;
  CheckAllocation(cudaMallocHost(&memory, static_cast<size_t>(bytes)), memory_case, bytes, what);
  const int64_t device_id = memory_case.device_id();
  return std::shared_ptr<void>(memory, [device_id](void* pointer) {
    LogCudaFailure("cudaFreeHost", device_id, cudaFreeHost(pointer));
  });
}

std::shared_ptr<void> AllocateDevice(const MemoryCase& memory_case, int64_t bytes,
                                     const std::string& what) {
  SelectDevice(memory_case, bytes, what);
  void* memory = nullptr;
  CheckAllocation(cudaMalloc(&memory, static_cast<size_t>(bytes)), memory_case, bytes, what);
  const int device = static_cast<int>(memory_case.device_id());
  return std::shared_ptr<void>(memory, [device](void* pointer) {
    // Frees on the memory's GPU, then gives the calling thread back its own current GPU.
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) { previous = -1; }
    if (previous != device) { LogCudaFailure("cudaSetDevice", device, cudaSetDevice(device)); }
    LogCudaFailure("cudaFree", device, cudaFree(pointer));
    if (previous >= 0 && previous != device) { cudaSetDevice(previous); }
  });
}

#endif  // ONEFLOW_WITH_CUDA

}  // namespace

std::shared_ptr<void> AllocateMemory(const MemoryCase& memory_case, int64_t bytes,
                                     const std::string& what) {
  OF_CHECK(bytes >= 0) << "a negative size (" << bytes << " bytes) for " << what;
  if (bytes == 0) { return nullptr; }
  switch (memory_case.kind()) {
    case kHostMemory:
      return AllocateHost(memory_case, bytes, what);
#ifdef ONEFLOW_WITH_CUDA
    case kPinnedHostMemory:
      return AllocatePinnedHost(memory_case, bytes, what);
    case kDeviceMemory:
      return AllocateDevice(memory_case, bytes, what);
#else
    // Pinning only speeds up copies to and from a GPU, which this build cannot have.
    case kPinnedHostMemory:
      return AllocateHost(memory_case, bytes, what);
    case kDeviceMemory:
      throw CannotAllocate(memory_case, bytes, what)
          << ": this build has no CUDA (configure with -DONEFLOW_WITH_CUDA=ON)";
#endif
    default:
      break;
  }
  OF_CHECK(false) << "unknown memory kind " << static_cast<int>(memory_case.kind()) << " for "
                  << what;
  return nullptr;
}

std::string MemoryCaseToString(const MemoryCase& memory_case) {
  switch (memory_case.kind()) {
    case kHostMemory:
      return "host";
    case kPinnedHostMemory:
      return "pinned host";
    case kDeviceMemory:
      return "gpu " + std::to_string(memory_case.device_id());
    default:
      break;
  }
  return "unknown kind " + std::to_string(static_cast<int>(memory_case.kind()));
}

}  // namespace oneflow

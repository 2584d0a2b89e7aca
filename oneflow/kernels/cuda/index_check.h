#pragma once
// Checks of index blobs on the GPU (gather's indices, one_hot's, a loss's labels): a small kernel
// reads every entry and reports the first bad one it sees to the device context's error report
// (device/device_error_report.h), which stops the runtime with a ValueError once the work has
// completed, as the CPU kernels' checks do, without a synchronization. CUDA builds only; usable
// from .cpp and .cu files.

#ifdef ONEFLOW_WITH_CUDA

#include <cstdint>
#include <string>

namespace oneflow {

class Blob;
class CudaDeviceContext;

namespace cuda {

constexpr int kMaxIndexLimits = 8;

// Entry p of an index blob must lie in [0, limits[p % period]): one limit for gather's indices,
// one per entry of an index tuple for gather_nd's.
struct IndexLimits {
  int period = 1;
  int64_t limits[kMaxIndexLimits] = {};
};

IndexLimits SingleLimit(int64_t limit);

// Owned by a kernel: the prefix of its error message, e.g. "gather (op 'g'): index", and the
// limits. The error site is registered with the device context on the first run (kernels are
// made before their thread's context is bound).
class DeviceIndexCheck {
 public:
  DeviceIndexCheck() = default;
  DeviceIndexCheck(std::string prefix, IndexLimits limits);

  // Enqueues the check of `indices` (int32 or int64) on the device's stream.
  void Enqueue(CudaDeviceContext& device, const Blob& indices);

 private:
  std::string prefix_;
  IndexLimits limits_;
  int32_t site_ = 0;  // 0 until registered
};

}  // namespace cuda
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
